// Back-buffer capture and PNG writing (stb_image_write).
#include "window/screenshot.hpp"

#include "window/gl.hpp"
#include <stb_image_write.h>

#include <algorithm>

#include "core/formats/atomic_file.hpp"

namespace maskscope::gui {

ScreenshotBuffer capture_screenshot(const ScreenshotOptions& options) {
  ScreenshotBuffer b;
  b.width = options.width;
  b.height = options.height;
  const std::size_t row = std::size_t(b.width) * 4;
  std::vector<unsigned char> bottom_up(row * std::size_t(b.height));
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, b.width, b.height, GL_RGBA, GL_UNSIGNED_BYTE, bottom_up.data());
  b.rgba.resize(bottom_up.size());
  for (int y = 0; y < b.height; ++y)  // GL's rows run bottom to top
    std::copy_n(bottom_up.data() + row * std::size_t(b.height - 1 - y), row, b.rgba.data() + row * std::size_t(y));
  if (options.opaque)
    for (std::size_t k = 3; k < b.rgba.size(); k += 4) b.rgba[k] = 255;
  return b;
}

bool save_screenshot(const std::string& path, const ScreenshotOptions& options, std::string& error) {
  return save_png(path, capture_screenshot(options), error);
}

bool save_png(const std::string& path, const ScreenshotBuffer& b, std::string& error) {
  // stb writes the PNG through a callback to the writer's temporary (never reopened by name).
  struct Sink {
    int fd;
    std::string error;
    const std::string& path;
  };
  return write_atomically(
      path,
      [&](int fd) {
        Sink file{fd, "", path};
        const int ok = stbi_write_png_to_func(
            [](void* context, void* data, int size) {
              auto* s = static_cast<Sink*>(context);
              if (s->error.empty()) s->error = write_all(s->fd, data, std::size_t(size), s->path);
            },
            &file, b.width, b.height, 4, b.rgba.data(), b.width * 4);
        if (!file.error.empty()) return file.error;
        return ok ? std::string() : "cannot encode the PNG for '" + path + "'";
      },
      error);
}

}  // namespace maskscope::gui
