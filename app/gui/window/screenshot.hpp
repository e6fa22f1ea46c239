// Window screenshots (F12, --screenshot): what to capture (options) and a to-buffer variant, as
// Polyscope's ScreenshotOptions; written through a temporary file and a rename.
#pragma once

#include <string>
#include <vector>

namespace maskscope::gui {

struct ScreenshotOptions {
  int width = 0, height = 0;  // framebuffer size to read
  bool opaque = true;         // force alpha to 255 (the window's clear colour is opaque anyway)
};

struct ScreenshotBuffer {
  int width = 0, height = 0;
  std::vector<unsigned char> rgba;  // rows top to bottom
};

// Reads the back buffer of the current GL context.
ScreenshotBuffer capture_screenshot(const ScreenshotOptions& options);
// Captures and writes a PNG; false with `error` on failure.
bool save_screenshot(const std::string& path, const ScreenshotOptions& options, std::string& error);
// Writes a captured buffer as a PNG (the checkpoint animation keeps it for its GIF too).
bool save_png(const std::string& path, const ScreenshotBuffer& buffer, std::string& error);

}  // namespace maskscope::gui
