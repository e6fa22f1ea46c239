// Figures of a trained network (issue 50 item 2): the probes figure's step-0 row is the drawn network's probes (the
// numbers `maskscope-cli probe` gives), its trained row another network's; train_curves reads r_l from log.jsonl
// ("show": "r_l"), null where the log says the causal dR^2 was not significant.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/figure/figure_lines.hpp"
#include "common/figure/figure_runs.hpp"
#include "common/train/run_preset.hpp"
#include "core/run/position_probes.hpp"

using namespace maskscope;
using namespace maskscope::gui;
namespace fs = std::filesystem;

namespace {

FigureData finished_figure(FigureRuns& runs, const FigureSpec& spec) {
  runs.update(spec);
  const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(3);
  while (!runs.all_done() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return runs.build(spec);
}

}  // namespace

TEST_CASE("trained-probes: step 0 is the drawn network's probes on the evaluation prompts, the trained row differs") {
  const fs::path work = fs::path(MASKSCOPE_TEST_WORK) / "trained_probes";
  fs::remove_all(work);
  const std::string folder = (work / "run").string();
  PresetRun recipe;
  recipe.train = {{"model", {{"d", 16}}},   {"steps", 20},          {"batch", 8}, {"eval_every", 10},
                  {"checkpoint_every", 10}, {"eval_sequences", 16}, {"warmup", 5}};
  train::run_training(preset_training(recipe, folder), false, nullptr, nullptr);

  Preset p = *find_shipped_preset("trained-probes");
  REQUIRE(p.figure.kind == FigureKind::probes);
  for (FigureRow& row : p.figure.rows) row.settings.samples = 64;  // 32 training and 32 test prompts: quick
  std::string error;
  REQUIRE_MESSAGE(bind_preset_run(p, folder, error), error);
  REQUIRE(validate(p.figure).empty());
  FigureRuns runs;
  const FigureData data = finished_figure(runs, p.figure);
  REQUIRE(data.complete);
  REQUIRE(data.cells.size() == 2);

  // The network step 0 holds is the one `--weights fixed` draws from the weight seed (model.md section 15): its probes
  // on the same prompts, split the same way, are the figure's first row bit for bit.
  Settings drawn = cell_settings(p.figure, 0, 0);
  drawn.checkpoint.clear();
  drawn.step = -1;
  REQUIRE(validate(drawn).empty());
  const ProbeRequest request = figure_probe_request(drawn);
  CHECK(request.train == 32);
  CHECK(request.test == 32);
  const auto expected = run_position_probes(drawn, request);
  REQUIRE(expected);
  bool trained_differs = false;
  for (std::size_t k = 0; k < p.figure.layers.size(); ++k) {
    const int layer = p.figure.layers[k];
    const ProbeLayer* want = nullptr;
    for (const ProbeLayer& l : expected->layers)
      if (l.layer == layer) want = &l;
    REQUIRE(want);
    for (ProbeFeature f : kProbeFeatures) {
      const auto& got = data.cells[0][k].probe[std::size_t(f)];
      const auto& w = want->score[std::size_t(f)];
      REQUIRE(got);
      REQUIRE(w);
      CHECK(got->pearson_r == w->pearson_r);
      CHECK(got->pearson_r_se == w->pearson_r_se);
      CHECK(got->nrmse == w->nrmse);
      const auto& trained = data.cells[1][k].probe[std::size_t(f)];
      REQUIRE(trained);
      trained_differs |= layer > 0 && trained->pearson_r != got->pearson_r;
    }
  }
  CHECK(trained_differs);
  // The charts: Pearson-R of X, Var_X, Sim_X, then their NRMSE; one line per row, a point per layer.
  const FigureLines lines = figure_lines(data);
  REQUIRE(lines.charts.size() == 6);
  CHECK(lines.charts[0].series.size() == 2);
  CHECK(lines.charts[0].series[0].y[1] == data.cells[0][1].probe[0]->pearson_r);
  CHECK(lines.charts[5].series[1].y[2] == data.cells[1][2].probe[2]->nrmse);
}

TEST_CASE("train_curves with show r_l: r_l per layer against the step, a gap where the log's r_l is null") {
  const fs::path work = fs::path(MASKSCOPE_TEST_WORK) / "train_curves_r_l";
  fs::remove_all(work);
  fs::create_directories(work);
  {
    std::ofstream log(work / "log.jsonl");
    log << R"({"step":0,"layers":[{"layer":1,"sink_weight":0.3,"sink_weight_se":0.01,)"
        << R"("residual_stream_share":{"value":null,"se":null,"note":"denominator not significant"}}]})"
        << "\n"
        << R"({"step":10,"layers":[{"layer":1,"sink_weight":0.5,"sink_weight_se":0.02,)"
        << R"("residual_stream_share":{"value":0.25,"se":0.05}}]})"
        << "\n";
  }
  const auto preset = preset_from_json(nlohmann::json::parse(R"({
    "settings": {"model": "random_weights", "weights": "fixed"},
    "figure": {"kind": "train_curves", "layers": [1], "rows": [
      {"label": "weight", "show": "weight"}, {"label": "r_l", "show": "r_l"}]}})"));
  CHECK_FALSE(preset.figure.rows[0].residual_share);
  CHECK(preset.figure.rows[1].residual_share);
  // Written back as it was read.
  CHECK(preset_to_json(preset)["figure"]["rows"][1]["show"] == "r_l");
  CHECK(preset_from_json(preset_to_json(preset)) == preset);
  // r_l is a reading of a run's log: another kind refuses it, naming the key.
  CHECK_THROWS_WITH_AS(preset_from_json(nlohmann::json::parse(
                           R"({"settings": {}, "figure": {"kind": "layer_lines", "rows": [{"show": "r_l"}]}})")),
                       doctest::Contains("figure.rows[0].show"), std::runtime_error);
  FigureSpec spec = preset.figure;
  for (FigureRow& row : spec.rows) row.settings.checkpoint = work.string();
  FigureData data;
  data.spec = spec;
  data.row_labels = {"weight", "r_l"};
  data.cells.assign(2, std::vector<FigureCell>(1));
  const FigureLines lines = figure_lines(data);
  REQUIRE(lines.charts.size() == 2);
  const ChartSeries& weight = lines.charts[0].series.at(0);
  const ChartSeries& share = lines.charts[1].series.at(0);
  CHECK(weight.y == std::vector<double>{0.3, 0.5});
  REQUIRE(share.x == std::vector<double>{0, 10});
  CHECK(std::isnan(share.y[0]));  // null in the log: not significant at step 0
  CHECK(share.y[1] == 0.25);
  CHECK(share.se[1] == 0.05);
  CHECK(lines.charts[1].y.label.find("r_l") != std::string::npos);
}

TEST_CASE("trained-layer-lines: rows name their own run folder and recipe; every missing folder trains when asked") {
  const fs::path work = fs::path(MASKSCOPE_TEST_WORK) / "several_runs";
  fs::remove_all(work);
  const std::string reversal = (work / "reversal").string(), addition = (work / "addition").string();
  Preset p = *find_shipped_preset("trained-layer-lines");
  CHECK(preset_from_json(preset_to_json(p)) == p);  // a row's {"folder", "train"} written back as read
  // The preset's own folder (moved by --run DIR) and the Addition rows' own, each once with its recipe.
  std::vector<PresetRun> runs = preset_runs(p, reversal);
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].folder == reversal);
  CHECK(runs[0].train.at("task") == "reversal");
  CHECK(runs[1].folder == "maskscope-runs/addition-d32");
  CHECK(runs[1].train.at("task") == "addition");
  // The same preset on folders of this test, with quick recipes.
  const nlohmann::json quick = {{"steps", 10},          {"batch", 8},  {"eval_every", 5},     {"checkpoint_every", 5},
                                {"eval_sequences", 16}, {"warmup", 2}, {"model", {{"d", 16}}}};
  p.run->train.update(quick);
  for (FigureRow& row : p.figure.rows)
    if (!row.run.empty()) {
      row.run = addition;
      if (!row.run_train.empty()) row.run_train.update(quick);
    }
  CHECK(missing_preset_runs(p, reversal).size() == 2);
  const std::string message = missing_runs_message(p, reversal);
  CHECK(message.find("'" + reversal + "' is missing") != std::string::npos);
  CHECK(message.find("'" + addition + "' (a row's own") != std::string::npos);
  CHECK(message.find("on addition") != std::string::npos);
  std::string error;
  CHECK_FALSE(bind_preset_run(p, reversal, error));
  CHECK_FALSE(fs::exists(addition));  // never trained silently
  std::vector<std::string> trained;
  train_missing_preset_runs(p, reversal, [&](const PresetRun& r, const train::TrainRunConfig& c) {
    trained.push_back(r.folder);
    CHECK(c.steps == 10);
  });
  CHECK(trained == std::vector<std::string>{reversal, addition});
  CHECK(missing_preset_runs(p, reversal).empty());
  REQUIRE_MESSAGE(bind_preset_run(p, reversal, error), error);
  for (const FigureRow& row : p.figure.rows) {
    const bool own = row.label.rfind("Addition", 0) == 0;
    CHECK(row.settings.checkpoint == (own ? addition : reversal));
    CHECK(row.settings.step == (row.state == "init" ? 0 : -1));
    CHECK(row.settings.n == (own ? 8 : 22));  // "123+456=" and "rev(...)=": each task's evaluation prompts
  }
}
