// slides_check DIR STEPS W H: exit 0 if DIR holds step-01.png .. step-STEPS.png, each W x H and not
// blank (many colours), every two consecutive slides differ, and slides.md names every slide.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <stb_image.h>

int main(int argc, char** argv) {
  if (argc != 5) return 2;
  const std::string dir = argv[1];
  const int steps = std::atoi(argv[2]), W = std::atoi(argv[3]), H = std::atoi(argv[4]);
  std::ifstream md(dir + "/slides.md");
  std::stringstream text;
  text << md.rdbuf();
  if (!md) {
    std::fprintf(stderr, "slides_check: no slides.md\n");
    return 1;
  }
  std::vector<unsigned char> previous;
  for (int k = 1; k <= steps; ++k) {
    char name[32];
    std::snprintf(name, sizeof name, "step-%02d.png", k);
    int w, h, c;
    unsigned char* px = stbi_load((dir + "/" + name).c_str(), &w, &h, &c, 3);
    if (!px) {
      std::fprintf(stderr, "slides_check: cannot read %s\n", name);
      return 1;
    }
    std::vector<unsigned char> img(px, px + std::size_t(w) * h * 3);
    stbi_image_free(px);
    if (w != W || h != H) {
      std::fprintf(stderr, "slides_check: %s is %dx%d, expected %dx%d\n", name, w, h, W, H);
      return 1;
    }
    std::set<unsigned> colours;
    for (std::size_t p = 0; p + 2 < img.size(); p += 3)
      colours.insert(unsigned(img[p]) << 16 | unsigned(img[p + 1]) << 8 | img[p + 2]);
    if (colours.size() < 64) {
      std::fprintf(stderr, "slides_check: %s is blank (%zu colours)\n", name, colours.size());
      return 1;
    }
    if (!previous.empty()) {
      std::size_t differing = 0;
      for (std::size_t p = 0; p < img.size(); ++p) differing += std::abs(int(img[p]) - int(previous[p])) > 8;
      if (differing < img.size() / 200) {
        std::fprintf(stderr, "slides_check: %s looks like the slide before\n", name);
        return 1;
      }
    }
    if (text.str().find(std::string("(") + name + ")") == std::string::npos) {
      std::fprintf(stderr, "slides_check: slides.md does not show %s\n", name);
      return 1;
    }
    previous = std::move(img);
    std::printf("slides_check: %s ok (%zu colours)\n", name, colours.size());
  }
  char extra[32];
  std::snprintf(extra, sizeof extra, "/step-%02d.png", steps + 1);
  if (std::ifstream(dir + extra)) {
    std::fprintf(stderr, "slides_check: more slides than steps\n");
    return 1;
  }
  return 0;
}
