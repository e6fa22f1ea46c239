// The checkpoint animation's GIF writer (gif_animation.hpp): the palette's bound and exactness, and what giflib's
// decoder reads back from the file: the frames in order, their delays, the loop.
#include <doctest/doctest.h>
#include <gif_lib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <vector>

#include "common/gif_animation.hpp"

namespace fs = std::filesystem;
using maskscope::gui::GifAnimation;
using maskscope::gui::kPaletteMaxSquaredError;
using maskscope::gui::quantize_frame;

namespace {

std::vector<std::uint8_t> random_frame(int w, int h, int colours, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255), pick(0, colours - 1);
  std::vector<std::array<std::uint8_t, 3>> set(static_cast<std::size_t>(colours));
  for (auto& c : set) c = {std::uint8_t(byte(rng)), std::uint8_t(byte(rng)), std::uint8_t(byte(rng))};
  std::vector<std::uint8_t> rgba(std::size_t(w) * std::size_t(h) * 4, 255);
  for (std::size_t i = 0; i < std::size_t(w) * std::size_t(h); ++i)
    std::copy_n(set[std::size_t(pick(rng))].data(), 3, &rgba[4 * i]);
  return rgba;
}

int squared_error(const std::uint8_t* rgba, const std::array<std::uint8_t, 3>& e) {
  int d2 = 0;
  for (int k = 0; k < 3; ++k) d2 += (rgba[k] - e[std::size_t(k)]) * (rgba[k] - e[std::size_t(k)]);
  return d2;
}

}  // namespace

TEST_CASE("a frame of at most 256 colours keeps every pixel exact, and the palette is a function of the pixels") {
  const auto rgba = random_frame(64, 48, 256, 7);
  const auto q = quantize_frame(rgba.data(), 64, 48);
  REQUIRE(q.palette.size() == 256);
  REQUIRE(q.index.size() == 64u * 48u);
  for (std::size_t i = 0; i < q.index.size(); ++i) REQUIRE(squared_error(&rgba[4 * i], q.palette[q.index[i]]) == 0);
  const auto again = quantize_frame(rgba.data(), 64, 48);
  CHECK(again.palette == q.palette);
  CHECK(again.index == q.index);
}

TEST_CASE("every pixel of a frame of 65536 spread colours is within the palette's bound, its commonest exact") {
  // Every (r, g) pair with a blue from a scrambled sequence: far more spread than 256 entries can cover closely, so
  // the bound is the colour cube's, 3 * 25^2; and one colour, repeated, is the most frequent.
  const int w = 256, h = 256;
  std::vector<std::uint8_t> rgba(std::size_t(w) * std::size_t(h) * 4, 255);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      std::uint8_t* p = &rgba[4 * (std::size_t(y) * w + std::size_t(x))];
      p[0] = std::uint8_t(x);
      p[1] = std::uint8_t(y);
      p[2] = std::uint8_t((x * 37 + y * 101) & 0xff);
      if (x < 40 && y < 40) p[0] = 17, p[1] = 18, p[2] = 19;
    }
  const auto q = quantize_frame(rgba.data(), w, h);
  int worst = 0;
  for (std::size_t i = 0; i < q.index.size(); ++i)
    worst = std::max(worst, squared_error(&rgba[4 * i], q.palette[q.index[i]]));
  CHECK(worst <= kPaletteMaxSquaredError);
  CHECK(worst > 3 * 8 * 8);  // the covering radii below the cube's do not fit: the cube's bound is the one that held
  CHECK(squared_error(&rgba[0], q.palette[q.index[0]]) == 0);
}

TEST_CASE("the GIF reads back as its frames in order, with their delays, looping forever") {
  const fs::path dir = fs::path(MASKSCOPE_TEST_WORK) / "gif_animation";
  fs::create_directories(dir);
  const std::string path = (dir / "three.gif").string();
  const int w = 40, h = 24;
  std::vector<std::vector<std::uint8_t>> frames;
  for (unsigned k = 0; k < 3; ++k) frames.push_back(random_frame(w, h, 50 + 60 * int(k), 100 + k));
  GifAnimation gif(w, h);
  std::string error;
  for (const auto& f : frames) REQUIRE(gif.add_frame(f.data(), w, h, 80, error));
  CHECK_FALSE(gif.add_frame(frames[0].data(), w + 1, h, 80, error));  // another size: refused, saying so
  CHECK(error.find("41x24") != std::string::npos);
  REQUIRE(gif.write(path, 240, error));
  CHECK_FALSE(gif.add_frame(frames[0].data(), w, h, 80, error));  // written: finished

  int code = 0;
  GifFileType* in = DGifOpenFileName(path.c_str(), &code);
  REQUIRE(in != nullptr);
  REQUIRE(DGifSlurp(in) == GIF_OK);
  CHECK(in->SWidth == w);
  CHECK(in->SHeight == h);
  REQUIRE(in->ImageCount == 3);
  const int delays[3] = {80, 80, 240};
  for (int k = 0; k < 3; ++k) {
    const SavedImage& f = in->SavedImages[k];
    REQUIRE(f.ImageDesc.ColorMap != nullptr);
    REQUIRE(f.ImageDesc.Width == w);
    for (std::size_t i = 0; i < std::size_t(w) * std::size_t(h); ++i) {
      const GifColorType c = f.ImageDesc.ColorMap->Colors[f.RasterBits[i]];
      REQUIRE(squared_error(&frames[std::size_t(k)][4 * i], {c.Red, c.Green, c.Blue}) == 0);  // <= 256 colours: exact
    }
    GraphicsControlBlock gcb{};
    REQUIRE(DGifSavedExtensionToGCB(in, k, &gcb) == GIF_OK);
    CHECK(gcb.DelayTime == delays[k]);
  }
  // The NETSCAPE2.0 block with loop count 0, before the first frame.
  const SavedImage& first = in->SavedImages[0];
  bool loops = false;
  for (int e = 0; e + 1 < first.ExtensionBlockCount; ++e)
    loops = loops || (first.ExtensionBlocks[e].ByteCount == 11 &&
                      std::memcmp(first.ExtensionBlocks[e].Bytes, "NETSCAPE2.0", 11) == 0 &&
                      first.ExtensionBlocks[e + 1].ByteCount == 3 && first.ExtensionBlocks[e + 1].Bytes[0] == 1 &&
                      first.ExtensionBlocks[e + 1].Bytes[1] == 0 && first.ExtensionBlocks[e + 1].Bytes[2] == 0);
  CHECK(loops);
  DGifCloseFile(in, &code);
}

TEST_CASE("a GIF without frames is not written") {
  GifAnimation gif(8, 8);
  std::string error;
  const std::string path = (fs::path(MASKSCOPE_TEST_WORK) / "gif_animation" / "empty.gif").string();
  CHECK_FALSE(gif.write(path, 100, error));
  CHECK(error.find("at least one frame") != std::string::npos);
  CHECK_FALSE(fs::exists(path));
}
