// Figure export without a window: PNG, SVG, per-panel CSV and the preset checked against the core's
// values, failures that leave no partial files, well-formed SVG, and temporaries cleaned up.
#include <doctest/doctest.h>
#include <stb_image.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/formats/result_json.hpp"
#include "figure_helpers.hpp"
#include "common/figure/figure.hpp"
#include "common/figure/figure_render.hpp"
#include "svg_heatmaps.hpp"

using namespace maskscope;
using namespace maskscope::gui;
using namespace maskscope::test;

TEST_CASE("export writes PNG, SVG, per-panel CSV and the preset; cells are exact") {
  Preset p;
  p.name = "export-test";
  p.settings = tiny();
  p.figure = two_row_spec();
  p.figure.groups = {{"d = 8", {{"d", 8}}}, {"d = 4", {{"d", 4}}}};
  Reference ref;
  const FigureData data = build_figure(p.figure, std::ref(ref));
  const fs::path dir = scratch("export");
  const ExportResult res = export_figure(data, p, dir.string(), {2.0, 0});
  REQUIRE_MESSAGE(res.ok, res.error);
  for (const char* f : {"figure.png", "figure.svg", "figure.json", "preset.json"}) CHECK(fs::exists(dir / f));
  for (const auto& e : fs::directory_iterator(dir)) CHECK(e.path().extension() != ".tmp");

  // CSV: every panel equals the snapshot of its run, bit for bit.
  const auto meta = nlohmann::json::parse(read_text(dir / "figure.json"));
  REQUIRE(meta["panels"].size() == 8);  // 2 rows x 2 groups x 2 layers
  for (const auto& panel : meta["panels"]) {
    Settings s = p.settings;
    settings_from_json(panel["settings"], s);
    const auto snap = ref(s);
    const int layer = panel["layer"];
    const auto csv = parse_csv(read_text(dir / panel["file"].get<std::string>()));
    const auto& expect = snap->layers[std::size_t(layer - 1)].score_mean;
    REQUIRE(csv.size() == expect.size());
    for (std::size_t e = 0; e < csv.size(); ++e) {
      const bool hidden = e % 7 == 0 && e > 0;  // n = 6: diagonal entries except (0, 0)
      if (hidden || std::isnan(expect[e])) CHECK(std::isnan(csv[e]));
      else CHECK(csv[e] == expect[e]);
    }
    CHECK(panel["RP"]["value"].get<double>() == snap->layers[std::size_t(layer - 1)].rp.mean);
  }
  CHECK(preset_from_json(nlohmann::json::parse(read_text(dir / "preset.json"))) == p);

  // SVG: one group per panel with exactly n * n rectangles, real text.
  const std::string svg = read_text(dir / "figure.svg");
  const test::SvgSummary parsed = test::read_svg(svg);
  REQUIRE(parsed.well_formed);
  int groups = 0;
  for (const auto& h : parsed.heatmaps) {
    CHECK(h.rects == 36);
    CHECK(h.n == 6);
    ++groups;
  }
  CHECK(groups == 8);
  CHECK(svg.find(">Layer 2</text>") != std::string::npos);
  CHECK(svg.find(">d = 4</text>") != std::string::npos);

  // PNG: the requested size, a white page, and each cell's centre exactly its colour.
  const Scene scene = layout_figure(data);
  int w = 0, h = 0, ch = 0;
  unsigned char* px = stbi_load((dir / "figure.png").string().c_str(), &w, &h, &ch, 3);
  REQUIRE(px != nullptr);
  CHECK(w == res.png_width);
  CHECK(h == res.png_height);
  CHECK(w == int(std::ceil(scene.width * 2 - 1e-6)));
  CHECK(px[0] == 255);
  CHECK(px[1] == 255);
  int checked = 0;
  for (const SceneItem& item : scene.items)
    if (const auto* hm = std::get_if<SceneHeatmap>(&item)) {
      const float cw = (hm->x1 - hm->x0) / float(hm->n), chh = (hm->y1 - hm->y0) / float(hm->n);
      for (int i = 0; i < hm->n; ++i)
        for (int j = 0; j < hm->n; ++j) {
          const int x = int((hm->x0 + (float(j) + 0.5f) * cw) * 2), y = int((hm->y0 + (float(i) + 0.5f) * chh) * 2);
          const unsigned char* q = px + 3 * (std::size_t(y) * std::size_t(w) + std::size_t(x));
          const Rgba& c = hm->cells[std::size_t(i * hm->n + j)];
          CHECK(std::abs(int(q[0]) - int(std::lround(c.r * 255))) <= 1);
          CHECK(std::abs(int(q[2]) - int(std::lround(c.b * 255))) <= 1);
          ++checked;
        }
    }
  CHECK(checked == 8 * 36);
  stbi_image_free(px);

  // A chosen width in pixels.
  const ExportResult wide = export_figure(data, p, (dir / "wide").string(), {1.0, 1500});
  REQUIRE(wide.ok);
  CHECK(wide.png_width == 1500);
}

TEST_CASE("export into a path that cannot be a folder fails with a message and no partial files") {
  const fs::path dir = scratch("export_bad");
  std::ofstream(dir / "file") << "x";
  Reference ref;
  Preset p;
  p.settings = tiny();
  p.figure = two_row_spec();
  const ExportResult res = export_figure(build_figure(p.figure, std::ref(ref)), p, (dir / "file" / "sub").string(), {});
  CHECK_FALSE(res.ok);
  CHECK(res.error.find("cannot create folder") != std::string::npos);
}

TEST_CASE("labels with control characters still give a well-formed SVG (XML 1.0 forbids them)") {
  Scene scene;
  scene.width = scene.height = 100;
  SceneText label;
  label.x = label.y = label.size = 10;
  label.text = std::string("row \x01\x1b[31m & <b> \"q\"\x7f");
  scene.items.emplace_back(std::in_place_type<SceneText>, std::move(label));
  const std::string svg = scene_to_svg(scene);
  const test::SvgSummary parsed = test::read_svg(svg);
  CHECK(parsed.well_formed);
  CHECK(parsed.texts == 1);
  CHECK(svg.find('\x01') == std::string::npos);
}

TEST_CASE("an export removes the temporaries a killed export left, and leaves no temporary of its own") {
  const fs::path dir = scratch("export_stale");
  fs::create_directories(dir);
  std::ofstream(dir / ".figure.png.maskscope-tmp") << "half a PNG";
  std::ofstream(dir / ".row0_col0_layer1.csv.maskscope-tmp") << "1,2";
  std::ofstream(dir / "notes.txt") << "the user's own file";
  Reference ref;
  Preset p;
  p.settings = tiny();
  p.figure = two_row_spec();
  const ExportResult res = export_figure(build_figure(p.figure, std::ref(ref)), p, dir.string(), {});
  REQUIRE(res.ok);
  for (const auto& e : fs::directory_iterator(dir))
    CHECK(e.path().filename().string().find(kTemporarySuffix) == std::string::npos);
  CHECK(fs::exists(dir / "notes.txt"));  // only our own temporaries go
  CHECK(fs::exists(dir / "figure.png"));
}
