// The animated GIF writer (gif_animation.hpp): the palette, then giflib's LZW encoder into memory.
#include "common/gif_animation.hpp"

#include <gif_lib.h>

#include <algorithm>
#include <unordered_map>

#include "core/formats/atomic_file.hpp"

namespace maskscope::gui {

namespace {

constexpr int kCubeEntries = kCubeLevels * kCubeLevels * kCubeLevels;  // 216
constexpr int kPaletteSize = 256;

std::uint32_t rgb_of(const std::uint8_t* p) { return std::uint32_t(p[0]) << 16 | std::uint32_t(p[1]) << 8 | p[2]; }
int channel(std::uint32_t c, int k) { return int(c >> (16 - 8 * k)) & 0xff; }
bool on_cube(std::uint32_t c) {
  for (int k = 0; k < 3; ++k)
    if (channel(c, k) % kCubeStep != 0) return false;
  return true;
}
int squared_distance(std::uint32_t c, const std::array<std::uint8_t, 3>& e) {
  int d2 = 0;
  for (int k = 0; k < 3; ++k) d2 += (channel(c, k) - e[std::size_t(k)]) * (channel(c, k) - e[std::size_t(k)]);
  return d2;
}

int append_bytes(GifFileType* gif, const GifByteType* data, int size) {
  auto* out = static_cast<std::vector<std::uint8_t>*>(gif->UserData);
  out->insert(out->end(), data, data + size);
  return size;
}

std::string gif_error(const char* what, int code) {
  const char* text = GifErrorString(code);
  return std::string("GIF ") + what + ": " + (text ? text : "giflib error " + std::to_string(code));
}

// Each distinct colour's nearest entry among the first `entries` of the palette (the lower index on a tie).
void map_to_nearest(const std::unordered_map<std::uint32_t, std::uint32_t>& count, std::size_t entries,
                    const std::uint8_t* rgba, std::size_t pixels, QuantizedFrame& q) {
  std::unordered_map<std::uint32_t, std::uint8_t> nearest;
  nearest.reserve(count.size());
  for (const auto& [colour, n] : count) {
    (void)n;
    std::size_t best = 0;
    int best_d2 = squared_distance(colour, q.palette[0]);
    for (std::size_t k = 1; k < entries && best_d2 > 0; ++k)
      if (const int d2 = squared_distance(colour, q.palette[k]); d2 < best_d2) {
        best_d2 = d2;
        best = k;
      }
    nearest.emplace(colour, std::uint8_t(best));
  }
  q.index.resize(pixels);
  for (std::size_t i = 0; i < pixels; ++i) q.index[i] = nearest.at(rgb_of(rgba + 4 * i));
}

std::array<std::uint8_t, 3> entry_of(std::uint32_t c) {
  return {std::uint8_t(channel(c, 0)), std::uint8_t(channel(c, 1)), std::uint8_t(channel(c, 2))};
}

}  // namespace

QuantizedFrame quantize_frame(const std::uint8_t* rgba, int width, int height) {
  const std::size_t pixels = std::size_t(width) * std::size_t(height);
  QuantizedFrame q;
  q.palette.assign(kPaletteSize, {0, 0, 0});
  // The distinct colours, most frequent first (then by colour, so that ties do not depend on the hash table).
  std::unordered_map<std::uint32_t, std::uint32_t> count;
  for (std::size_t i = 0; i < pixels; ++i) ++count[rgb_of(rgba + 4 * i)];
  std::vector<std::pair<std::uint32_t, std::uint32_t>> by_count;  // (count, colour)
  by_count.reserve(count.size());
  for (const auto& [colour, n] : count) by_count.push_back({n, colour});
  std::sort(by_count.begin(), by_count.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  // Exact colours, each one not within the radius of those before it; the smallest radius whose palette fits.
  for (const int radius2 : {0, 3 * 2 * 2, 3 * 4 * 4, 3 * 8 * 8, 3 * 16 * 16, kPaletteMaxSquaredError}) {
    std::size_t entries = 0;
    bool fits = true;
    for (const auto& [n, colour] : by_count) {
      bool covered = false;
      for (std::size_t k = 0; k < entries && !covered; ++k) covered = squared_distance(colour, q.palette[k]) <= radius2;
      if (covered) continue;
      if (entries == kPaletteSize) {
        fits = false;
        break;
      }
      q.palette[entries++] = entry_of(colour);
    }
    if (fits) {
      map_to_nearest(count, entries, rgba, pixels, q);
      return q;
    }
  }
  // More spread colours than that: the cube, and the most frequent colours off it exact.
  for (int r = 0; r < kCubeLevels; ++r)
    for (int g = 0; g < kCubeLevels; ++g)
      for (int b = 0; b < kCubeLevels; ++b)
        q.palette[std::size_t((r * kCubeLevels + g) * kCubeLevels + b)] = {
            std::uint8_t(r * kCubeStep), std::uint8_t(g * kCubeStep), std::uint8_t(b * kCubeStep)};
  std::size_t entries = kCubeEntries;
  for (const auto& [n, colour] : by_count) {
    if (entries == kPaletteSize) break;
    if (!on_cube(colour)) q.palette[entries++] = entry_of(colour);
  }
  map_to_nearest(count, entries, rgba, pixels, q);
  return q;
}

GifAnimation::GifAnimation(int width, int height) : width_(width), height_(height) {}

GifAnimation::~GifAnimation() {
  if (gif_) {
    int error = 0;
    EGifCloseFile(static_cast<GifFileType*>(gif_), &error);
  }
}

bool GifAnimation::add_frame(const std::uint8_t* rgba, int width, int height, int delay_cs, std::string& error) {
  if (finished_) {
    error = "the GIF is already written";
    return false;
  }
  if (width != width_ || height != height_) {
    error = "a GIF frame of " + std::to_string(width) + "x" + std::to_string(height) + " pixels in an animation of " +
            std::to_string(width_) + "x" + std::to_string(height_);
    return false;
  }
  if (width_ < 1 || height_ < 1 || width_ > 65535 || height_ > 65535) {
    error = "GIF frames of " + std::to_string(width_) + "x" + std::to_string(height_) +
            " pixels: valid sizes are 1 to 65535 pixels a side";
    return false;
  }
  if (!gif_) {  // the screen: GIF89a (for the delays and the loop), no global palette (each frame has its own)
    int code = 0;
    GifFileType* gif = EGifOpen(&bytes_, append_bytes, &code);
    if (!gif) {
      error = gif_error("open", code);
      return false;
    }
    gif_ = gif;
    EGifSetGifVersion(gif, true);
    if (EGifPutScreenDesc(gif, width_, height_, 8, 0, nullptr) == GIF_ERROR) {
      error = gif_error("screen", gif->Error);
      return false;
    }
    // The NETSCAPE2.0 application extension, loop count 0: the animation repeats forever.
    static const GifByteType netscape[] = {'N', 'E', 'T', 'S', 'C', 'A', 'P', 'E', '2', '.', '0'};
    static const GifByteType loop_forever[] = {1, 0, 0};
    if (EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE) == GIF_ERROR ||
        EGifPutExtensionBlock(gif, sizeof netscape, netscape) == GIF_ERROR ||
        EGifPutExtensionBlock(gif, sizeof loop_forever, loop_forever) == GIF_ERROR ||
        EGifPutExtensionTrailer(gif) == GIF_ERROR) {
      error = gif_error("loop extension", gif->Error);
      return false;
    }
  }
  if (pending_ && !put_pending(pending_delay_cs_, error)) return false;
  pending_ = std::make_unique<QuantizedFrame>(quantize_frame(rgba, width_, height_));
  pending_delay_cs_ = delay_cs;
  ++frames_;
  return true;
}

bool GifAnimation::put_pending(int delay_cs, std::string& error) {
  auto* gif = static_cast<GifFileType*>(gif_);
  GraphicsControlBlock gcb{};
  gcb.DisposalMode = DISPOSE_DO_NOT;
  gcb.UserInputFlag = false;
  gcb.DelayTime = std::clamp(delay_cs, 0, 65535);
  gcb.TransparentColor = NO_TRANSPARENT_COLOR;
  GifByteType extension[4];
  const std::size_t length = EGifGCBToExtension(&gcb, extension);
  if (EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, int(length), extension) == GIF_ERROR) {
    error = gif_error("frame delay", gif->Error);
    return false;
  }
  GifColorType colours[kPaletteSize];
  for (int k = 0; k < kPaletteSize; ++k) {
    const auto& e = pending_->palette[std::size_t(k)];
    colours[k] = {e[0], e[1], e[2]};
  }
  ColorMapObject* map = GifMakeMapObject(kPaletteSize, colours);
  if (!map) {
    error = "GIF palette: out of memory";
    return false;
  }
  const int put = EGifPutImageDesc(gif, 0, 0, width_, height_, false, map);
  GifFreeMapObject(map);  // giflib keeps its own copy
  if (put == GIF_ERROR) {
    error = gif_error("frame", gif->Error);
    return false;
  }
  for (int y = 0; y < height_; ++y)
    if (EGifPutLine(gif, pending_->index.data() + std::size_t(y) * std::size_t(width_), width_) == GIF_ERROR) {
      error = gif_error("frame pixels", gif->Error);
      return false;
    }
  pending_.reset();
  return true;
}

bool GifAnimation::write(const std::string& path, int last_delay_cs, std::string& error) {
  if (finished_ || !gif_ || !pending_) {
    error = finished_ ? "the GIF is already written" : "a GIF needs at least one frame";
    return false;
  }
  if (!put_pending(last_delay_cs, error)) return false;
  int code = 0;
  const int closed = EGifCloseFile(static_cast<GifFileType*>(gif_), &code);  // writes the trailer, frees giflib's state
  gif_ = nullptr;
  finished_ = true;
  if (closed == GIF_ERROR) {
    error = gif_error("end", code);
    return false;
  }
  return write_atomically(
      path, [&](int fd) { return write_all(fd, bytes_.data(), bytes_.size(), path); }, error);
}

}  // namespace maskscope::gui
