// png_check FILE W H x0 y0 x1 y1: exit 0 if FILE is a W x H PNG whose region [x0,x1) x [y0,y1)
// holds at least 8 distinct colours (a drawn heatmap, not a blank or single-colour area).
#include <cstdio>
#include <cstdlib>
#include <set>

#include <stb_image.h>

int main(int argc, char** argv) {
  if (argc != 8) return 2;
  int w, h, c;
  unsigned char* px = stbi_load(argv[1], &w, &h, &c, 3);
  if (!px) {
    std::fprintf(stderr, "png_check: cannot read %s\n", argv[1]);
    return 1;
  }
  const int W = std::atoi(argv[2]), H = std::atoi(argv[3]);
  if (w != W || h != H) {
    std::fprintf(stderr, "png_check: size %dx%d, expected %dx%d\n", w, h, W, H);
    return 1;
  }
  const int x0 = std::atoi(argv[4]), y0 = std::atoi(argv[5]), x1 = std::atoi(argv[6]), y1 = std::atoi(argv[7]);
  std::set<unsigned> colours;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) {
      const unsigned char* p = px + 3 * (y * w + x);
      colours.insert(unsigned(p[0]) << 16 | unsigned(p[1]) << 8 | p[2]);
    }
  stbi_image_free(px);
  std::printf("png_check: %dx%d, %zu colours in the heatmap region\n", w, h, colours.size());
  return colours.size() >= 8 ? 0 : 1;
}
