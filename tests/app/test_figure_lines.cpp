// The line kinds of a figure without a window: a metric against the layer (Zuo et al. Fig. 3 / 7), output norms
// against the position (Fig. 11) and dR^2 against the query bin (Ruscio et al. Fig. 1), checked against the
// core's own numbers from real runs; their presets, refusals and lines.csv.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "figure_helpers.hpp"
#include "common/figure/figure.hpp"
#include "common/figure/figure_lines.hpp"
#include "common/figure/figure_render.hpp"

using namespace maskscope;
using namespace maskscope::gui;
using namespace maskscope::test;

namespace {

std::vector<std::string> csv_lines(const std::string& csv) {
  std::vector<std::string> out;
  std::stringstream in(csv);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string full(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

bool has_text_containing(const Scene& scene, const std::string& text) {
  return std::any_of(scene.items.begin(), scene.items.end(), [&](const SceneItem& item) {
    const auto* t = std::get_if<SceneText>(&item);
    return t && t->text.find(text) != std::string::npos;
  });
}

}  // namespace

TEST_CASE("layer lines: each row's metric at x = layer (0 = the embeddings) with its SE, exactly the run's") {
  const Settings s = random_network();
  FigureSpec f;
  f.kind = FigureKind::layer_lines;
  f.layers = {0, 1, 2};
  f.rows = {{"cos", s, Quantity::cosine, Transform::raw}, {"norms", s, Quantity::norm, Transform::raw}};
  REQUIRE(validate(f).empty());
  Reference ref;
  const auto snap = ref(s);
  const FigureLines lines = figure_lines(build_figure(f, std::ref(ref)));
  REQUIRE(lines.charts.size() == 1);  // one column group
  const LineChart& chart = lines.charts[0];
  REQUIRE(chart.series.size() == 2);                     // one line per row
  CHECK(chart.reference_y == std::vector<double>{0.5});  // adjacency: 1/2 is no order
  const std::vector<const LayerStats*> layers = {&snap->embeddings[0], &snap->layers[0], &snap->layers[1]};
  for (std::size_t k = 0; k < 3; ++k) {
    CHECK(chart.series[0].x[k] == double(k));
    CHECK(chart.series[0].y[k] == layers[k]->adjacency.mean);
    CHECK(chart.series[0].se[k] == layers[k]->adjacency.se);
    CHECK(chart.series[1].y[k] == layers[k]->norm_adjacency.mean);
    CHECK(chart.series[1].se[k] == layers[k]->norm_adjacency.se);
    CHECK(chart.series[0].se[k] > 0);
  }
  // The rows' metrics differ: each legend entry names its own.
  CHECK(chart.series[1].label.find("norm adj") != std::string::npos);

  // dR^2 of S: the embeddings have no attention (a gap), the layers give the snapshot's leakage; no 0.5 line.
  f.table_metric = TableMetric::delta_r2;
  const FigureLines dr2 = figure_lines(build_figure(f, std::ref(ref)));
  REQUIRE(dr2.charts.size() == 1);
  CHECK(dr2.charts[0].reference_y.empty());
  CHECK(std::isnan(dr2.charts[0].series[0].y[0]));
  CHECK(dr2.charts[0].series[0].y[2] == snap->layers[1].leakage.delta_r2.mean);
  CHECK(dr2.charts[0].series[0].se[2] == snap->layers[1].leakage.delta_r2.se);

  // Two column groups: one chart each.
  f.table_metric = TableMetric::automatic;
  f.groups = {{"d 16", nlohmann::json::object()}, {"d 32", {{"d", 32}}}};
  const FigureData grouped = build_figure(f, std::ref(ref));
  const FigureLines two = figure_lines(grouped);
  REQUIRE(two.charts.size() == 2);
  CHECK(two.charts[1].title == "d 32");
  Settings wide = s;
  wide.d = 32;
  CHECK(two.charts[1].series[0].y[2] == ref(wide)->layers[1].adjacency.mean);
  // Laid out through the charts: the legend names the rows; no heatmaps.
  const Scene scene = layout_figure(grouped);
  CHECK(scene.width > 0);
  CHECK(has_text_containing(scene, "cos"));
  CHECK(std::none_of(scene.items.begin(), scene.items.end(),
                     [](const SceneItem& item) { return std::holds_alternative<SceneHeatmap>(item); }));
}

TEST_CASE("norm lines: ||x_i|| at x = position i, one line per layer, one chart per row") {
  FigureSpec f = two_row_spec();  // n 6, layers 1-2, parameter-free; B has the residual
  f.kind = FigureKind::norms;
  REQUIRE(validate(f).empty());
  Reference ref;
  const FigureLines lines = figure_lines(build_figure(f, std::ref(ref)));
  REQUIRE(lines.charts.size() == 2);
  for (std::size_t r = 0; r < 2; ++r) {
    const auto snap = ref(f.rows[r].settings);
    const LineChart& chart = lines.charts[r];
    CHECK(chart.title == f.rows[r].label);
    REQUIRE(chart.series.size() == 2);
    for (std::size_t k = 0; k < 2; ++k) {
      const ChartSeries& s = chart.series[k];
      REQUIRE(s.x.size() == 6);
      for (std::size_t i = 0; i < 6; ++i) {
        CHECK(s.x[i] == double(i));
        CHECK(s.y[i] == snap->layers[k].norm_mean[i]);
        CHECK(s.se[i] == snap->layers[k].norm_se[i]);
      }
    }
  }
  // The residual changes the norms: row B's lines are not row A's.
  CHECK(lines.charts[0].series[1].y[3] != lines.charts[1].series[1].y[3]);
}

TEST_CASE("leakage bins: dR^2 per query bin at the bin's geometric centre on a log axis") {
  Settings s = tiny();
  s.n = 30;  // bins [0,5) [5,12) [12,25) [25,30)
  s.rope_base = 10000;
  s.norm = Norm::l2;
  s.scale = Scale::one;
  s.gamma = 1.0;
  s.samples = 800;
  FigureSpec f;
  f.kind = FigureKind::leakage_bins;
  f.layers = {2, 3};
  s.layers = 3;
  f.rows = {{"causal", s, Quantity::score, Transform::raw}};
  REQUIRE(validate(f).empty());
  Reference ref;
  const auto snap = ref(cell_settings(f, 0, 0));
  const FigureLines one = figure_lines(build_figure(f, std::ref(ref)));
  REQUIRE(one.charts.size() == 1);  // one row: its layers are the lines
  const LineChart& chart = one.charts[0];
  CHECK(chart.x.scale == AxisScale::log);
  REQUIRE(chart.series.size() == 2);
  const std::vector<double> centres = {std::sqrt(5.0), std::sqrt(60.0), std::sqrt(300.0), std::sqrt(750.0)};
  for (std::size_t k = 0; k < 2; ++k) {
    const auto& bins = snap->layers[std::size_t(f.layers[k] - 1)].leakage.bins;
    REQUIRE(bins.size() == 4);
    REQUIRE(chart.series[k].x.size() == 4);
    CHECK(chart.series[k].se.empty());  // core's bins carry no SE
    for (std::size_t b = 0; b < 4; ++b) {
      CHECK(chart.series[k].x[b] == doctest::Approx(centres[b]).epsilon(1e-15));
      CHECK(chart.series[k].y[b] == bins[b].delta_r2);
    }
  }
  CHECK(std::any_of(chart.series[1].y.begin(), chart.series[1].y.end(), [](double v) { return v > 0; }));

  // Several rows: one chart per layer, a line per row (causal against bidirectional, as Fig. 1); of A by the metric.
  Settings bi = s;
  bi.mask = MaskKind::bidirectional;
  f.rows.push_back({"bidirectional", bi, Quantity::score, Transform::raw});
  f.table_metric = TableMetric::weight_delta_r2;
  const FigureData data = build_figure(f, std::ref(ref));
  const FigureLines two = figure_lines(data);
  REQUIRE(two.charts.size() == 2);
  CHECK(two.charts[1].title == "layer 3");
  REQUIRE(two.charts[1].series.size() == 2);
  CHECK(two.charts[1].series[0].y[1] == snap->layers[2].weight_leakage.bins[1].delta_r2);
  CHECK(two.charts[1].series[1].y[1] == ref(cell_settings(f, 1, 0))->layers[2].weight_leakage.bins[1].delta_r2);

  // lines.csv: one line per point with its bin; the numbers at full precision.
  const auto rows = csv_lines(lines_csv(data));
  CHECK(rows[0] == "chart,row,label,group,layer,bin_from,bin_to,x,y,se");
  CHECK(rows.size() == 1 + 2 * 2 * 4);
  CHECK(rows[1 + 4 + 1] == "0,1,\"bidirectional\",\"\",2,5,12," + full(std::sqrt(60.0)) + "," +
                               full(ref(bi)->layers[1].weight_leakage.bins[1].delta_r2) + ",");
}

TEST_CASE("lines.csv of a layer-lines figure: chart,row,label,group,layer,x,y,se per point") {
  const Settings s = random_network();
  FigureSpec f;
  f.kind = FigureKind::layer_lines;
  f.layers = {1, 2};
  f.rows = {{"cos", s, Quantity::cosine, Transform::raw}, {"A", s, Quantity::weight, Transform::raw}};
  Reference ref;
  const FigureData data = build_figure(f, std::ref(ref));
  const auto rows = csv_lines(lines_csv(data));
  REQUIRE(rows.size() == 1 + 2 * 2);
  CHECK(rows[0] == "chart,row,label,group,layer,x,y,se");
  const LayerStats& l2 = ref(s)->layers[1];
  CHECK(rows[2] == "0,0,\"cos\",\"\",2,2," + full(l2.adjacency.mean) + "," + full(l2.adjacency.se));
  CHECK(rows[4] == "0,1,\"A\",\"\",2,2," + full(l2.rp.mean) + "," + full(l2.rp.se));
  // The export writes it beside the pictures and lists it in figure.json.
  Preset p;
  p.name = "lines";
  p.figure = f;
  const fs::path dir = fs::temp_directory_path() / "maskscope_test_figure_lines";
  fs::remove_all(dir);
  const ExportResult res = export_figure(data, p, dir.string(), {1.0, 0});
  REQUIRE_MESSAGE(res.ok, res.error);
  CHECK(read_text(dir / "lines.csv") == lines_csv(data));
  CHECK(read_text(dir / "figure.json").find("\"lines.csv\"") != std::string::npos);
  CHECK(fs::file_size(dir / "figure.png") > 1000);
  fs::remove_all(dir);
}

TEST_CASE("the line kinds survive a preset round trip under their names") {
  for (const auto& [kind, name] :
       {std::pair{FigureKind::layer_lines, "layer_lines"}, std::pair{FigureKind::norms, "norms"},
        std::pair{FigureKind::leakage_bins, "leakage_bins"}}) {
    Preset p;
    p.name = name;
    p.settings = tiny();
    p.figure = two_row_spec();
    p.figure.kind = kind;
    p.figure.table_metric = kind == FigureKind::leakage_bins ? TableMetric::weight_delta_r2 : TableMetric::automatic;
    const nlohmann::json j = preset_to_json(p);
    CHECK(j["figure"]["kind"] == name);
    CHECK(preset_from_json(j) == p);
  }
  nlohmann::json j = preset_to_json(Preset{});
  j["figure"]["kind"] = "lines";
  CHECK_THROWS_WITH(preset_from_json(j), doctest::Contains("figure.kind: 'lines'; valid: heatmaps, h_of_j, table, "
                                                           "layer_lines, norms, leakage_bins"));
}

TEST_CASE("line figures refuse what they cannot draw, naming the key") {
  FigureSpec f = two_row_spec();
  auto first_error = [&](FigureKind kind) {
    f.kind = kind;
    const auto errors = validate(f);
    return errors.empty() ? std::string() : errors[0].setting + ": " + errors[0].message;
  };
  f.difference = true;  // heatmaps draw B - A; lines draw every row
  CHECK(first_error(FigureKind::heatmaps).empty());
  for (FigureKind k : {FigureKind::layer_lines, FigureKind::norms, FigureKind::leakage_bins})
    CHECK(first_error(k).find("figure.difference") == 0);
  f.difference = false;
  f.layers.clear();
  CHECK(first_error(FigureKind::norms).find("figure.layers: choose at least one layer") == 0);
  f.layers = {0, 1};  // parameter-free rows have no embeddings
  CHECK(first_error(FigureKind::layer_lines).find("figure.layers: layer 0") == 0);
  for (auto& r : f.rows) r.settings = random_network();
  CHECK(first_error(FigureKind::norms).empty());
  CHECK(first_error(FigureKind::leakage_bins).find("no dR^2 per query bin") != std::string::npos);
  // Norm rows are lines (their norm adjacency), not a refused map as in a heatmap figure.
  f.rows[0].quantity = Quantity::norm;
  CHECK(first_error(FigureKind::layer_lines).empty());
  CHECK_FALSE(first_error(FigureKind::heatmaps).empty());
}

TEST_CASE("a bin's x is the geometric centre of its edges, the 0 edge taken as 1") {
  CHECK(bin_centre({0, 5, 0}) == doctest::Approx(std::sqrt(5.0)));
  CHECK(bin_centre({5, 12, 0}) == doctest::Approx(std::sqrt(60.0)));
  CHECK(bin_centre({200, 256, 0}) == doctest::Approx(std::sqrt(200.0 * 256.0)));
  // Every centre lies inside its bin, and they increase: the log axis keeps Ruscio's order.
  const auto bins = leakage_bins(300);
  for (std::size_t k = 0; k < bins.size(); ++k) {
    CHECK(bin_centre(bins[k]) >= std::max(bins[k].from, 1));
    CHECK(bin_centre(bins[k]) <= bins[k].to);
    if (k) CHECK(bin_centre(bins[k]) > bin_centre(bins[k - 1]));
  }
}
