// The PNG writer of window screenshots (screenshot.cpp): the desktop links Debian's libstb, the
// browser build compiles the header's implementation here.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>
