// Figure titles follow the settings (issue 48 item 2): a preset's title is shown and exported only while the
// figure's cells are the preset's own; after a change the title is made from the settings the cells share.
#include <doctest/doctest.h>

#include <string>

#include "figure_helpers.hpp"
#include "common/figure/figure.hpp"
#include "common/figure/figure_render.hpp"
#include "svg_heatmaps.hpp"

using namespace maskscope;
using namespace maskscope::gui;
using namespace maskscope::test;

namespace {

// The first bold text of the SVG: the figure's title.
std::string svg_title(const std::string& svg) {
  const std::size_t bold = svg.find("font-weight=\"bold\"");
  REQUIRE(bold != std::string::npos);
  const std::size_t open = svg.find('>', bold) + 1;
  return svg.substr(open, svg.find('<', open) - open);
}

}  // namespace

TEST_CASE("a preset's heatmap title holds for its own rows (any samples) and gives way once a setting changes") {
  const Preset* shipped = find_shipped_preset("ln-recency-fig5");
  REQUIRE(shipped);
  Preset p = *shipped;
  REQUIRE(p.figure.title.find("d = 16") != std::string::npos);
  CHECK(figure_title(p.figure) == p.figure.title);
  for (FigureRow& r : p.figure.rows) r.settings.samples = 64, r.settings.threads = 2;
  CHECK(figure_title(p.figure) == p.figure.title);  // samples and threads are no part of what a title describes

  // The rows at d 64: the title is made from the settings; the residual varies by column group, so it is left to
  // the group titles.
  for (FigureRow& r : p.figure.rows) r.settings.d = 64;
  const std::string made = figure_title(p.figure);
  CHECK(made.find("d = 16") == std::string::npos);
  CHECK(made.find("d 64") != std::string::npos);
  CHECK(made.find("LayerNorm") != std::string::npos);
  CHECK(made.find("residual") == std::string::npos);
  CHECK(made.find("alpha") == std::string::npos);  // alpha varies by row

  // Exported: the PNG/SVG title and preset.json (which leaves the stale text out).
  p.figure.layers = {1};
  Reference ref;
  const FigureData data = build_figure(p.figure, std::ref(ref));
  const fs::path dir = scratch("figure-title");
  const ExportResult res = export_figure(data, p, dir.string(), {1.0, 0});
  REQUIRE_MESSAGE(res.ok, res.error);
  const std::string exported = svg_title(read_text(dir / "figure.svg"));
  CHECK(exported == figure_title(p.figure));  // one layer column: the cells simulate 1 layer, and it says so
  CHECK(exported.find("d 64, 1 layer,") != std::string::npos);
  const Preset back = preset_from_json(nlohmann::json::parse(read_text(dir / "preset.json")));
  CHECK(back.figure.title.empty());

  // No column groups, every row with the residual: the title says d 64 and the residual.
  p.figure.groups.clear();
  for (FigureRow& r : p.figure.rows) r.settings.gamma = 1;
  const std::string residual = figure_title(p.figure);
  CHECK(residual.find("d 64") != std::string::npos);
  CHECK(residual.find(", residual") != std::string::npos);
  CHECK(residual.find("no residual") == std::string::npos);
}

TEST_CASE("a figure made in the window (no preset) keeps the title it was given") {
  FigureSpec spec = two_row_spec();  // title "test", no title scope: it holds for any settings
  CHECK(figure_title(spec) == "test");
  spec.rows[0].settings.d = 4;
  CHECK(figure_title(spec) == "test");
  spec.title.clear();
  // d and the residual differ between the rows: left to the row labels.
  CHECK(figure_title(spec).rfind("Maps of S; n 6, 2 layers, alpha 0.5, LayerNorm", 0) == 0);
  CHECK(figure_title(spec).find("d 4") == std::string::npos);
  CHECK(figure_title(spec).find("residual") == std::string::npos);
}
