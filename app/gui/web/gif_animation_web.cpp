// GifAnimation for the browser build: no giflib there, and the checkpoint animation exports only headless
// (--export-figure with --run), which the page has no command line for. Every call says so.
#include "common/gif_animation.hpp"

namespace maskscope::gui {

namespace {
constexpr const char* kNoGif = "GIF export is not in the browser build (use the desktop window's --export-figure)";
}

GifAnimation::GifAnimation(int width, int height) : width_(width), height_(height) {}
// The encoder's state is the desktop build's (gif_animation.cpp); here it is only held.
GifAnimation::~GifAnimation() { (void)gif_, (void)pending_delay_cs_, (void)finished_; }

bool GifAnimation::add_frame(const std::uint8_t*, int, int, int, std::string& error) {
  error = kNoGif;
  return false;
}

bool GifAnimation::put_pending(int, std::string& error) {
  error = kNoGif;
  return false;
}

bool GifAnimation::write(const std::string&, int, std::string& error) {
  error = kNoGif;
  return false;
}

}  // namespace maskscope::gui
