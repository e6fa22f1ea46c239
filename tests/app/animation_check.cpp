// animation_check: the checkpoint animation's files (issue 50), decoded with giflib and stb.
//   animation_check gif ANIMATION.gif FRAME.png...   exit 0 if the GIF has one frame per PNG, in order: its screen
//       is the PNGs' size, it loops forever, every frame has a delay, and frame k's pixels match PNG k within the
//       palette's bound (gif_animation.hpp: squared RGB distance <= 3 * 25^2) and PNG k's most frequent colour exactly.
//   animation_check differ A.png B.png x0 y0 x1 y1 MIN   exit 0 if at least MIN pixels of the region
//       [x0,x1) x [y0,y1) differ between the two (equal-sized) PNGs.
//   animation_check frame ANIMATION.gif K OUT.png        writes frame K decoded (to look at it).
#include <gif_lib.h>
#include <stb_image.h>
#include <stb_image_write.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "common/gif_animation.hpp"

namespace {

struct Image {
  int w = 0, h = 0;
  std::vector<unsigned char> rgb;
};

bool load_png(const char* path, Image& out) {
  int c = 0;
  unsigned char* px = stbi_load(path, &out.w, &out.h, &c, 3);
  if (!px) {
    std::fprintf(stderr, "animation_check: cannot read %s\n", path);
    return false;
  }
  out.rgb.assign(px, px + std::size_t(out.w) * std::size_t(out.h) * 3);
  stbi_image_free(px);
  return true;
}

struct Gif {
  GifFileType* file = nullptr;
  ~Gif() {
    int e = 0;
    if (file) DGifCloseFile(file, &e);
  }
};

bool open_gif(const char* path, Gif& g) {
  int error = 0;
  g.file = DGifOpenFileName(path, &error);
  if (!g.file || DGifSlurp(g.file) == GIF_ERROR) {
    std::fprintf(stderr, "animation_check: cannot decode %s: %s\n", path,
                 GifErrorString(g.file ? g.file->Error : error));
    return false;
  }
  return true;
}

// Frame k as RGB on the logical screen (the frames cover it whole: the writer's are full-screen).
bool decode_frame(const GifFileType* gif, int k, Image& out) {
  const SavedImage& f = gif->SavedImages[k];
  const ColorMapObject* map = f.ImageDesc.ColorMap ? f.ImageDesc.ColorMap : gif->SColorMap;
  if (!map || f.ImageDesc.Left != 0 || f.ImageDesc.Top != 0 || f.ImageDesc.Width != gif->SWidth ||
      f.ImageDesc.Height != gif->SHeight || f.ImageDesc.Interlace) {
    std::fprintf(stderr, "animation_check: frame %d does not cover the screen with a palette\n", k);
    return false;
  }
  out.w = gif->SWidth;
  out.h = gif->SHeight;
  out.rgb.resize(std::size_t(out.w) * std::size_t(out.h) * 3);
  for (std::size_t i = 0; i < std::size_t(out.w) * std::size_t(out.h); ++i) {
    const int idx = f.RasterBits[i];
    if (idx >= map->ColorCount) return false;
    out.rgb[3 * i] = map->Colors[idx].Red;
    out.rgb[3 * i + 1] = map->Colors[idx].Green;
    out.rgb[3 * i + 2] = map->Colors[idx].Blue;
  }
  return true;
}

bool loops_forever(const GifFileType* gif) {
  // The NETSCAPE2.0 block comes before the first frame; giflib keeps it with the first frame's extensions.
  const SavedImage& f = gif->SavedImages[0];
  for (int e = 0; e + 1 < f.ExtensionBlockCount; ++e) {
    const ExtensionBlock& a = f.ExtensionBlocks[e];
    const ExtensionBlock& b = f.ExtensionBlocks[e + 1];
    if (a.Function == APPLICATION_EXT_FUNC_CODE && a.ByteCount == 11 && std::memcmp(a.Bytes, "NETSCAPE2.0", 11) == 0 &&
        b.ByteCount == 3 && b.Bytes[0] == 1 && b.Bytes[1] == 0 && b.Bytes[2] == 0)
      return true;
  }
  return false;
}

int check_gif(int argc, char** argv) {
  Gif g;
  if (!open_gif(argv[2], g)) return 1;
  const int frames = argc - 3;
  if (g.file->ImageCount != frames) {
    std::fprintf(stderr, "animation_check: %d frames in the GIF, %d PNGs\n", g.file->ImageCount, frames);
    return 1;
  }
  if (!loops_forever(g.file)) {
    std::fprintf(stderr, "animation_check: no NETSCAPE2.0 loop-forever block\n");
    return 1;
  }
  for (int k = 0; k < frames; ++k) {
    Image png, gif;
    if (!load_png(argv[3 + k], png)) return 1;
    if (png.w != g.file->SWidth || png.h != g.file->SHeight) {
      std::fprintf(stderr, "animation_check: the GIF's screen is %dx%d, %s is %dx%d\n", g.file->SWidth, g.file->SHeight,
                   argv[3 + k], png.w, png.h);
      return 1;
    }
    GraphicsControlBlock gcb{};
    if (DGifSavedExtensionToGCB(g.file, k, &gcb) == GIF_ERROR || gcb.DelayTime <= 0) {
      std::fprintf(stderr, "animation_check: frame %d has no delay\n", k);
      return 1;
    }
    if (!decode_frame(g.file, k, gif)) return 1;
    int worst = 0;
    double sum = 0;
    std::map<unsigned, long> count;
    for (std::size_t i = 0; i < png.rgb.size(); i += 3) {
      int d2 = 0;
      for (int c = 0; c < 3; ++c) d2 += (png.rgb[i + c] - gif.rgb[i + c]) * (png.rgb[i + c] - gif.rgb[i + c]);
      worst = std::max(worst, d2);
      sum += d2;
      ++count[unsigned(png.rgb[i]) << 16 | unsigned(png.rgb[i + 1]) << 8 | png.rgb[i + 2]];
    }
    // PNG k's most frequent colour (the window's background) is one of the palette's exact entries.
    const auto top = std::max_element(count.begin(), count.end(), [](auto& a, auto& b) { return a.second < b.second; });
    bool top_exact = true;
    for (std::size_t i = 0; i < png.rgb.size() && top_exact; i += 3)
      if ((unsigned(png.rgb[i]) << 16 | unsigned(png.rgb[i + 1]) << 8 | png.rgb[i + 2]) == top->first)
        top_exact = std::equal(&png.rgb[i], &png.rgb[i] + 3, &gif.rgb[i]);
    std::printf(
        "animation_check: frame %d (%s): delay %d cs, largest squared RGB error %d (bound %d), rms %.2f, "
        "%zu colours\n",
        k, argv[3 + k], gcb.DelayTime, worst, maskscope::gui::kPaletteMaxSquaredError,
        std::sqrt(sum / double(png.rgb.size() / 3)), count.size());
    if (worst > maskscope::gui::kPaletteMaxSquaredError || !top_exact) {
      std::fprintf(stderr, "animation_check: frame %d is not PNG %s within the palette's bound%s\n", k, argv[3 + k],
                   top_exact ? "" : " (its most frequent colour is not exact)");
      return 1;
    }
  }
  return 0;
}

int check_differ(char** argv) {
  Image a, b;
  if (!load_png(argv[2], a) || !load_png(argv[3], b)) return 1;
  if (a.w != b.w || a.h != b.h) {
    std::fprintf(stderr, "animation_check: %dx%d and %dx%d\n", a.w, a.h, b.w, b.h);
    return 1;
  }
  const int x0 = std::atoi(argv[4]), y0 = std::atoi(argv[5]), x1 = std::min(std::atoi(argv[6]), a.w),
            y1 = std::min(std::atoi(argv[7]), a.h);
  const long min_differing = std::atol(argv[8]);
  long differing = 0;
  for (int y = std::max(0, y0); y < y1; ++y)
    for (int x = std::max(0, x0); x < x1; ++x) {
      const std::size_t i = 3 * (std::size_t(y) * std::size_t(a.w) + std::size_t(x));
      if (!std::equal(&a.rgb[i], &a.rgb[i] + 3, &b.rgb[i])) ++differing;
    }
  std::printf("animation_check: %ld pixels differ in [%d,%d) x [%d,%d) of %s and %s (at least %ld wanted)\n", differing,
              x0, x1, y0, y1, argv[2], argv[3], min_differing);
  return differing >= min_differing ? 0 : 1;
}

int dump_frame(char** argv) {
  Gif g;
  if (!open_gif(argv[2], g)) return 1;
  const int k = std::atoi(argv[3]);
  Image f;
  if (k < 0 || k >= g.file->ImageCount || !decode_frame(g.file, k, f)) return 1;
  return stbi_write_png(argv[4], f.w, f.h, 3, f.rgb.data(), f.w * 3) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "gif" && argc >= 4) return check_gif(argc, argv);
  if (what == "differ" && argc == 9) return check_differ(argv);
  if (what == "frame" && argc == 5) return dump_frame(argv);
  std::fprintf(stderr,
               "usage: animation_check gif GIF PNG... | differ A.png B.png x0 y0 x1 y1 MIN | frame GIF K OUT.png\n");
  return 2;
}
