// figure_check DIR WIDTH PANELS: checks a folder written by `maskscope --export-figure`:
// figure.png is WIDTH pixels wide; figure.json lists PANELS panels; each panel's CSV equals, bit
// for bit, the core's numbers for the panel's settings (rerun here with the same seed); the SVG
// has one heatmap group per panel with exactly n * n rectangles; preset.json loads.
#include <stb_image.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "core/formats/result_json.hpp"
#include "core/run/runner.hpp"
#include "common/figure/figure.hpp"
#include "svg_heatmaps.hpp"

namespace {
int failures = 0;
void check(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "figure_check: FAILED %s\n", what.c_str());
    ++failures;
  }
}
std::string read_text(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

int main(int argc, char** argv) {
  using namespace maskscope;
  if (argc != 4) return 2;
  const std::string dir = argv[1];
  const int width = std::atoi(argv[2]), panels = std::atoi(argv[3]);

  int w = 0, h = 0, c = 0;
  unsigned char* px = stbi_load((dir + "/figure.png").c_str(), &w, &h, &c, 3);
  check(px != nullptr, "figure.png readable");
  if (px) {
    check(w == width, "PNG width " + std::to_string(w) + " == " + std::to_string(width));
    check(px[0] == 255 && px[1] == 255 && px[2] == 255, "white page");
    stbi_image_free(px);
  }

  const auto meta = nlohmann::json::parse(read_text(dir + "/figure.json"));
  check(meta["complete"].get<bool>(), "every run finished before the export");
  check(int(meta["panels"].size()) == panels, "panel count " + std::to_string(meta["panels"].size()));
  check(meta["png"]["width"].get<int>() == w && meta["png"]["height"].get<int>() == h, "figure.json PNG size");
  gui::Preset preset;
  std::string error;
  check(gui::load_preset_file(dir + "/preset.json", preset, error), "preset.json loads: " + error);

  std::vector<int> ns;
  for (const auto& p : meta["panels"]) {
    Settings s;
    settings_from_json(p["settings"], s);
    const auto snap = run_to_completion(s);
    const int layer = p["layer"], n = p["n"];
    ns.push_back(n);
    const std::string show = p["show"], transform = p["transform"];
    const LayerStats& l = snap->layers.at(std::size_t(layer - 1));
    const auto& expect = show == "score" ? l.score_mean : show == "weight" ? l.weight_mean : l.cosine_mean;
    std::stringstream csv(read_text(dir + "/" + p["file"].get<std::string>()));
    std::string line;
    int i = 0, compared = 0;
    while (std::getline(csv, line)) {
      std::stringstream cells(line);
      std::string x;
      int j = 0;
      while (std::getline(cells, x, ',')) {
        const double e = expect[std::size_t(i * n + j)];
        const bool hidden = preset.figure.hide_diagonal && show != "cosine" && i == j && i > 0;
        if (x == "nan") {
          check(std::isnan(e) || hidden, p["file"].get<std::string>() + " nan where the core has a number");
        } else if (transform == "raw") {
          check(std::strtod(x.c_str(), nullptr) == e,
                p["file"].get<std::string>() + " value at " + std::to_string(i) + "," + std::to_string(j));
          ++compared;
        }
        ++j;
      }
      check(j == n, "CSV row length");
      ++i;
    }
    check(i == n, "CSV row count");
    if (transform == "raw") check(compared > 0, "compared some values");
    if (p.contains("RP")) check(p["RP"]["value"].get<double>() == l.rp.mean, "RP equals the core's");
  }

  const std::string svg = read_text(dir + "/figure.svg");
  const maskscope::test::SvgSummary parsed = maskscope::test::read_svg(svg);
  check(parsed.well_formed, "SVG is well-formed XML");
  std::size_t k = 0;
  for (const auto& h : parsed.heatmaps) {
    check(h.rects == std::size_t(h.n) * std::size_t(h.n), "SVG panel " + std::to_string(k) + " has n*n rects");
    if (k < ns.size()) check(h.n == ns[k], "SVG panel n matches");
    ++k;
  }
  check(k == std::size_t(panels), "SVG heatmap groups " + std::to_string(k));
  check(svg.find("</text>") != std::string::npos, "SVG has real text");
  std::printf("figure_check: %s: %d panels, PNG %dx%d, %d failures\n", dir.c_str(), panels, w, h, failures);
  return failures == 0 ? 0 : 1;
}
