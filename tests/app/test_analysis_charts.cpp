// The Probes and Histograms tabs' exports (analysis_charts.hpp): the CSV holds the core's numbers in full
// precision, the charts one line per feature / difference, and the export writes PNG, SVG and CSV.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>

#include "core/run/runner.hpp"
#include "common/figure/analysis_charts.hpp"

using namespace maskscope;
using namespace maskscope::gui;

TEST_CASE("probe charts and CSV: the table's numbers, one line per feature, 0 = the embeddings") {
  ProbeTable t;
  t.layers.resize(2);
  for (int l = 0; l < 2; ++l) {
    t.layers[std::size_t(l)].layer = l;
    t.layers[std::size_t(l)].score[std::size_t(ProbeFeature::x)] = ProbeScore{0.1 + l, 0.01, 0.2, 0.02};
    t.layers[std::size_t(l)].score[std::size_t(ProbeFeature::sim)] = ProbeScore{0.3, 0.03, 0.25, 0.005};
  }
  const auto charts = probe_charts(t);
  REQUIRE(charts.size() == 2);
  REQUIRE(charts[0].series.size() == 2);  // x and sim (var not requested)
  CHECK(charts[0].series[0].y == std::vector<double>{0.1, 1.1});
  CHECK(charts[1].series[1].se == std::vector<double>{0.005, 0.005});
  const std::string csv = probes_csv(t);
  CHECK(csv.find("1,x,1.1000000000000001,0.01,0.20000000000000001,0.02") != std::string::npos);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 5);  // header + 2 layers x 2 features
  const Scene page = charts_page("probes", charts, 2);
  CHECK(scene_to_svg(page).find("Pearson-R") != std::string::npos);
}

TEST_CASE("histogram charts, CSV and export from a run with histograms") {
  Settings s;
  s.model = Model::random_weights;
  s.n = 8;
  s.d = 16;
  s.heads = 2;
  s.layers = 2;
  s.gamma = 1;
  s.samples = 20;
  s.histograms = 10;
  s.threads = 1;
  Run run(s);
  run.wait();
  const auto snap = run.snapshot();
  const auto charts = histogram_charts(*snap);
  REQUIRE(charts.size() == 3);  // the embeddings and two layers
  CHECK(charts[1].series[0].y == snap->layers[0].histograms.forward_difference);
  const std::string csv = histograms_csv(*snap);
  std::istringstream lines(csv);
  std::string line;
  int rows = 0;
  while (std::getline(lines, line)) ++rows;
  CHECK(rows == 1 + 3 * 3 * 10 + 2 * 10);  // 3 histograms per layer, RP only after attention
  const std::string dir = (std::filesystem::temp_directory_path() / "maskscope_histograms_export").string();
  const ExportResult res = export_charts(dir, "histograms", charts_page("h", charts, 3), csv, ExportOptions{});
  CHECK_MESSAGE(res.ok, res.error);
  CHECK(res.files == std::vector<std::string>{"histograms.png", "histograms.svg", "histograms.csv"});
  CHECK(res.png_width > 0);
}
