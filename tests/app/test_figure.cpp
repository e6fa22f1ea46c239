// Figures without a window: shared runs, figure panels against the core's numbers (difference
// mode too), h(j) figures beside Eq. 42, and table figures.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <sstream>
#include <thread>

#include "core/model/theory.hpp"
#include "figure_helpers.hpp"
#include "common/figure/figure.hpp"
#include "common/figure/figure_render.hpp"
#include "common/figure/figure_runs.hpp"
#include "common/figure/figure_workbench.hpp"

using namespace maskscope;
using namespace maskscope::gui;
using namespace maskscope::test;

TEST_CASE("rows that differ only in what they show share one run; removed rows stop theirs") {
  FigureSpec f = two_row_spec();
  FigureRow cos = f.rows[0];
  cos.quantity = Quantity::cosine;
  FigureRow diag = f.rows[0];
  diag.transform = Transform::diagonal_normalized;
  f.rows.push_back(cos);
  f.rows.push_back(diag);
  f.rows[0].settings.threads = 1;  // threads never change the numbers
  CHECK(figure_simulations(f).size() == 2);
  FigureRuns runs;
  runs.update(f);
  CHECK(runs.run_count() == 2);
  CHECK(runs.started() == 2);
  f.rows.erase(f.rows.begin() + 1);  // drop B
  runs.update(f);
  CHECK(runs.run_count() == 1);
  CHECK(runs.started() == 2);  // nothing restarted
}

TEST_CASE("the figure on screen is the finished one as soon as its runs are done (a screenshot waits for it)") {
  // Issue 48: --screenshot on the Figure tab showed 97-98% of the rows' samples: the picture was rebuilt ten
  // times a second, so the one on screen when the runs finished could be up to 100 ms old.
  gui::FigureWorkbench wb;
  wb.spec() = two_row_spec();
  for (auto& r : wb.spec().rows) r.settings.samples = 40000;
  const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(10);
  do {
    wb.refresh(false);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  } while (!wb.complete() && std::chrono::steady_clock::now() < until);
  REQUIRE(wb.complete());
  wb.refresh(false);  // the next frame
  CHECK(wb.shown_complete());
  CHECK(wb.data().complete);
}

TEST_CASE("figure panels equal the core's numbers; difference mode is B - A with the same draws") {
  FigureSpec f = two_row_spec();
  Reference ref;
  const FigureData data = build_figure(f, std::ref(ref));
  REQUIRE(data.cells.size() == 2);
  REQUIRE(data.cells[0].size() == 2);
  CHECK(data.complete);
  for (std::size_t r = 0; r < 2; ++r)
    for (std::size_t c = 0; c < 2; ++c) {
      const auto snap = ref(cell_settings(f, r, 0));
      const LayerStats& l = snap->layers[c];
      const PanelData& p = data.cells[r][c].panel;
      CHECK(data.cells[r][c].metric_name == "RP");
      CHECK(data.cells[r][c].metric == l.rp.mean);
      for (int i = 0; i < p.n; ++i)
        for (int j = 0; j < p.n; ++j) {
          const double v = p.value[std::size_t(i * p.n + j)];
          if (i == j && i > 0) CHECK(std::isnan(v));  // hidden diagonal except row 0
          else if (j > i) CHECK(std::isnan(v));       // causal mask
          else CHECK(v == l.score_mean[std::size_t(i * p.n + j)]);
        }
    }
  f.difference = true;
  const FigureData diff = build_figure(f, std::ref(ref));
  REQUIRE(diff.cells.size() == 1);
  const auto a = ref(cell_settings(f, 0, 0)), b = ref(cell_settings(f, 1, 0));
  const PanelData& p = diff.cells[0][1].panel;
  CHECK(p.lo == -p.hi);
  for (std::size_t e = 0; e < p.value.size(); ++e)
    if (std::isfinite(p.value[e])) CHECK(p.value[e] == b->layers[1].score_mean[e] - a->layers[1].score_mean[e]);
  CHECK(diff.note.empty());
  // A row minus itself is exactly zero: the same seed gives the same random draws.
  f.rows[1] = f.rows[0];
  const FigureData same = build_figure(f, std::ref(ref));
  for (double v : same.cells[0][0].panel.value)
    if (std::isfinite(v)) CHECK(v == 0.0);
  f.rows[1].settings.seed = 99;
  CHECK_FALSE(build_figure(f, std::ref(ref)).note.empty());  // warns: different seeds
}

TEST_CASE("h(j) figures: Eq. 42 beside the simulated 1/||x_j||, scaled to meet at j = 1") {
  Preset p = *find_shipped_preset("ln-recency-fig2");
  for (auto& r : p.figure.rows) r.settings.samples = 3000;
  Reference ref;
  const FigureData data = build_figure(p.figure, std::ref(ref));
  REQUIRE(data.curves.size() == 2);
  REQUIRE(data.curves[0].size() == 5);
  const FigureCurve& c = data.curves[0][2];  // alpha 0.4, gamma 0
  const auto theory = theory::ln_recency_h_curve(10, 64, 0.4, 0.0, false);
  REQUIRE(c.theory.size() == 10);
  for (std::size_t k = 0; k < 10; ++k) CHECK(c.theory[k] == doctest::Approx(theory[k]).epsilon(1e-12));
  CHECK(c.simulated[0] == doctest::Approx(c.theory[0]).epsilon(1e-12));
  for (std::size_t k = 1; k < 10; ++k) CHECK(c.simulated[k] > c.simulated[k - 1]);  // h(j) rises with j
  const std::string csv = curves_csv(data.curves[0]);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 11);
}

TEST_CASE("table figures: each row's metric per layer (layer 0 = embeddings) with its SE, as CSV") {
  const Settings s = random_network();
  FigureSpec f;
  f.kind = FigureKind::table;
  f.layers = {0, 1, 2};
  f.rows = {{"cos", s, Quantity::cosine, Transform::raw},
            {"norms", s, Quantity::norm, Transform::raw},
            {"scores", s, Quantity::score, Transform::raw}};
  CHECK(validate(f).empty());
  Reference ref;
  const FigureData data = build_figure(f, std::ref(ref));
  const auto snap = ref(s);
  REQUIRE(data.cells.size() == 3);
  CHECK(data.cells[0][0].metric == snap->embeddings[0].adjacency.mean);
  CHECK(data.cells[0][2].metric == snap->layers[1].adjacency.mean);
  CHECK(data.cells[0][2].metric_se == snap->layers[1].adjacency.se);
  CHECK(data.cells[1][1].metric == snap->layers[0].norm_adjacency.mean);
  CHECK(data.cells[2][1].metric == snap->layers[0].rp.mean);
  CHECK(std::isnan(data.cells[2][0].metric));  // the embeddings have no RP
  const std::string csv = table_csv(data);
  std::stringstream lines(csv);
  std::string line;
  std::getline(lines, line);
  CHECK(line == "row,label,group,layer,metric,value,se");
  int count = 0;
  while (std::getline(lines, line)) ++count;
  CHECK(count == 9);
  char expect[64];
  std::snprintf(expect, sizeof expect, "%.17g", snap->layers[1].adjacency.mean);
  CHECK(csv.find(std::string("\"cos\",\"\",2,\"adj\",") + expect) != std::string::npos);
  // A table lays out as text, no heatmaps.
  const Scene scene = layout_figure(data);
  CHECK(std::none_of(scene.items.begin(), scene.items.end(),
                     [](const SceneItem& item) { return std::holds_alternative<SceneHeatmap>(item); }));
  // Norms are not a map: a heatmap figure refuses them, naming the row.
  f.kind = FigureKind::heatmaps;
  const auto errors = validate(f);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].setting == "figure.rows[1].show");
}
