// An animated GIF of RGBA frames (the checkpoint animation, issue 50): giflib encodes each frame into memory,
// and the whole file is written once through the atomic writer. Each frame gets its own 256-colour palette.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace maskscope::gui {

// A frame's palette, deterministic (a pure function of the pixels), with a bound on every pixel's error:
//  - the frame's colours from the most frequent down, each one taken exactly unless an entry already taken lies
//    within a radius r of it, for the smallest r in 0, 2 sqrt(3), 4 sqrt(3), ..., 25 sqrt(3) whose palette fits in
//    256 entries (the window's frames have a few thousand colours: backgrounds, text, the colormaps' cells);
//  - a frame with more spread colours than that: the 6 x 6 x 6 colour cube (levels 0, 51, ..., 255: every pixel
//    within 25 in each channel) and the most frequent colours off it, exact.
// Each pixel takes its nearest entry (squared RGB distance, the lower index on a tie). So no pixel is further than
// 25 sqrt(3) from its colour, and the most frequent colour is exact. (giflib's median cut, GifQuantizeBuffer, is
// marked deprecated and upstream moved it out of libgif's API in 5.2 (Debian's package puts it back); and its error
// has no bound a test could hold it to.)
struct QuantizedFrame {
  std::vector<std::array<std::uint8_t, 3>> palette;  // 256 entries
  std::vector<std::uint8_t> index;                   // one per pixel, rows top to bottom
};
inline constexpr int kCubeLevels = 6, kCubeStep = 51;
inline constexpr int kCubeMaxChannelError = kCubeStep / 2;                                       // 25
inline constexpr int kPaletteMaxSquaredError = 3 * kCubeMaxChannelError * kCubeMaxChannelError;  // 1875
QuantizedFrame quantize_frame(const std::uint8_t* rgba, int width, int height);

class GifAnimation {
 public:
  // Frames of `width` x `height` pixels, looping forever.
  GifAnimation(int width, int height);
  ~GifAnimation();
  GifAnimation(const GifAnimation&) = delete;
  GifAnimation& operator=(const GifAnimation&) = delete;
  int width() const { return width_; }
  int height() const { return height_; }
  // Appends a frame (`width` x `height` RGBA, rows top to bottom, alpha ignored) shown for `delay_cs` hundredths
  // of a second. False with `error` when its size is not the animation's or giflib fails.
  bool add_frame(const std::uint8_t* rgba, int width, int height, int delay_cs, std::string& error);
  std::size_t frames() const { return frames_; }
  // Ends the stream (the last frame shown for `last_delay_cs`) and writes it to `path` through the atomic writer.
  // The animation is finished afterwards: no more frames.
  bool write(const std::string& path, int last_delay_cs, std::string& error);
  // The encoded bytes so far (after write: the whole file).
  const std::vector<std::uint8_t>& bytes() const { return bytes_; }

 private:
  bool put_pending(int delay_cs, std::string& error);
  int width_, height_;
  void* gif_ = nullptr;  // giflib's GifFileType, opened on the first frame
  std::vector<std::uint8_t> bytes_;
  std::unique_ptr<QuantizedFrame> pending_;  // the newest frame: its delay is known once the next comes or the end
  int pending_delay_cs_ = 0;
  std::size_t frames_ = 0;
  bool finished_ = false;
};

}  // namespace maskscope::gui
