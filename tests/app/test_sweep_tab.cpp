// The Sweep tab's model without a window (issue 32): its JSON in presets, the plan over the live settings,
// the chart's points and hits, and the workbench's restarts, cancel, click-to-set and CSV.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "core/model/settings_text.hpp"
#include "core/run/runner.hpp"
#include "common/figure/figure.hpp"
#include "common/sweep/sweep_chart.hpp"
#include "common/sweep/sweep_workbench.hpp"

using namespace maskscope;
using namespace maskscope::gui;

namespace {

Settings small() {
  Settings s;
  s.n = 6;
  s.d = 8;
  s.layers = 2;
  s.samples = 400;
  s.threads = 2;
  return s;
}

// Refreshes until the sweep has finished (or 10 minutes, which fails the test instead of hanging: under
// ThreadSanitizer on a busy machine a sweep of this size has taken over a minute).
void run_to_end(SweepWorkbench& wb, const Settings& live) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(10);
  do {
    wb.refresh(live, true);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  } while (!wb.complete() && std::chrono::steady_clock::now() < until);
  REQUIRE(wb.complete());
}

std::size_t lines(const std::string& text) {
  std::size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

}  // namespace

TEST_CASE("a sweep view reads back from its JSON, and bad values name their key") {
  SweepView v;
  v.title = "RP against d";
  v.metric = "weight:5,0";
  v.axes = {{"d", "4:64:5log"}, {"norm", "none,layernorm"}};
  v.layer = 2;
  v.target_se = 0.001;
  v.samples = 5000;
  v.contours = "0.5";
  CHECK(sweep_view_from_json(sweep_view_to_json(v)) == v);

  auto refused = [](const char* text) {
    try {
      sweep_view_from_json(nlohmann::json::parse(text));
    } catch (const std::exception& e) { return std::string(e.what()); }
    return std::string("accepted");
  };
  CHECK(refused(R"({"metrc": "rp"})").find("sweep: unknown key 'metrc'") != std::string::npos);
  CHECK(refused(R"({"metric": "speed"})").find("sweep.metric: unknown metric 'speed'") != std::string::npos);
  CHECK(refused(R"({"vary": [{"name": "alpha", "values": "0:2:3"}]})").find("sweep.vary[0]") != std::string::npos);
  CHECK(refused(R"({"vary": [{"name": "colour", "values": "1,2"}]})").find("unknown setting 'colour'") !=
        std::string::npos);
  CHECK(refused(R"({"vary": [{"name": "d", "values": "4,8"}, {"name": "d", "values": "16"}]})").find("swept twice") !=
        std::string::npos);
  CHECK(refused(R"({"se": -1})").find("sweep.se") != std::string::npos);
  CHECK(refused(R"({"samples": 0})").find("sweep.samples") != std::string::npos);
  CHECK(refused(R"({"contours": "0.5,x"})").find("sweep.contours") != std::string::npos);
  CHECK(refused(R"({"contours": "1,2,3,4,5,6,7,8,9"})").find("at most 8") != std::string::npos);
  // A flag name is read as its key.
  const SweepView flag =
      sweep_view_from_json(nlohmann::json::parse(R"({"vary": [{"name": "init-std", "values": "0.1,0.2"}]})"));
  CHECK(flag.axes[0].key == "init_std");
}

TEST_CASE("the plan: every point is the live settings with the swept values and the sweep's cap") {
  Settings live = small();
  live.alpha = 0.3;
  SweepView v;
  v.axes = {{"alpha", "0:1:5"}, {"d", "4,8,16"}};
  v.samples = 777;
  const SweepPlan plan = plan_sweep(v, live);
  REQUIRE(plan.error.empty());
  REQUIRE(plan.points.size() == 15);
  CHECK(plan.points[0].alpha == 0.0);
  CHECK(plan.points[0].d == 4);
  CHECK(plan.points[1].d == 8);  // the first axis is outermost
  CHECK(plan.points[3].alpha == 0.25);
  CHECK(plan.points[14].alpha == 1.0);
  for (const Settings& p : plan.points) {
    CHECK(p.samples == 777);
    CHECK(p.n == live.n);
    CHECK(p.seed == live.seed);  // common random numbers
  }
  CHECK(plan.contours == std::vector<double>{0.5, 0.6});

  v.metric = "score:9,0";  // outside n 6
  CHECK(plan_sweep(v, live).error.find("outside the n x n map") != std::string::npos);
  v.metric = "rp";
  v.layer = 3;  // the points have 2 layers
  CHECK(plan_sweep(v, live).error.find("layer 3") != std::string::npos);
  v.layer = 0;
  v.axes = {{"alpha", "0:1:9999"}};
  CHECK(plan_sweep(v, live).error.find("values of alpha") != std::string::npos);
}

TEST_CASE("the chart: one line per layer over one setting, a heat map over two, hits for every point") {
  Settings live = small();
  SweepView v;
  v.axes = {{"alpha", "0:1:5"}};
  v.target_se = 0;
  v.samples = 400;
  SweepWorkbench wb;
  wb.view() = v;
  run_to_end(wb, live);
  const SweepPicture& pic = wb.picture();
  CHECK_FALSE(pic.heat_map);
  // 5 points x 2 layers, each with a hit whose id decodes to its point and layer.
  REQUIRE(pic.hits.size() == 10);
  for (const ChartHit& h : pic.hits) {
    CHECK(h.id / kSweepLayerSlots < 5);
    CHECK(h.id % kSweepLayerSlots < 2);
    const float cx = (h.x0 + h.x1) / 2, cy = (h.y0 + h.y1) / 2;
    // The hit there is this one, or one whose marker lies on it (two layers with the same value).
    const int at = chart_hit(pic.hits, cx, cy);
    const auto other = std::find_if(pic.hits.begin(), pic.hits.end(), [&](const ChartHit& o) { return o.id == at; });
    REQUIRE(other != pic.hits.end());
    CHECK(other->x0 == doctest::Approx(h.x0));
    CHECK(other->y0 == doctest::Approx(h.y0).epsilon(0.01));
  }
  // The hover text gives the point's value, its metric with SE and samples, as a run of its settings does.
  const int id = 3 * kSweepLayerSlots + 1;  // alpha 0.75, layer 2
  const std::string text = wb.point_text(id);
  CAPTURE(text);
  CHECK(text.find("alpha = 0.75, layer 2") != std::string::npos);
  CHECK(text.find("400 samples") != std::string::npos);
  Settings direct = wb.plan().points[3];
  const auto snap = run_to_completion(direct);
  CHECK(text.find("RP 0.") != std::string::npos);
  CHECK(wb.state()->points[3].snapshot->layers[1].rp.mean == snap->layers[1].rp.mean);

  // Two numeric settings of 5 values each: a heat map with one cell (hit) per point.
  wb.view().axes = {{"alpha", "0:1:5"}, {"d", "4,8,16,32,64"}};
  wb.view().layer = 2;
  run_to_end(wb, live);
  CHECK(wb.picture().heat_map);
  CHECK(wb.picture().hits.size() == 25);
  // A categorical second setting: one line per value instead.
  wb.view().axes = {{"alpha", "0:1:5"}, {"norm", "none,layernorm"}};
  run_to_end(wb, live);
  CHECK_FALSE(wb.picture().heat_map);
  CHECK(wb.picture().hits.size() == 10);
}

TEST_CASE("legends and axes show an enum setting by the label a reader knows, not its internal name") {
  // Issue 48: sweep-behind-rope-fig7's legend said "score scale d" for 1/d.
  SweepView v;
  v.axes = {{"d", "4,8,16"}, {"scale", "one,sqrt_d,d"}};
  const SweepPlan plan = plan_sweep(v, small());
  REQUIRE(plan.error.empty());
  std::vector<std::string> texts;
  for (const auto& item : layout_sweep(v, plan, nullptr).scene.items)
    if (const auto* t = std::get_if<SceneText>(&item)) texts.push_back(t->text);
  auto has = [&](const std::string& s) { return std::find(texts.begin(), texts.end(), s) != texts.end(); };
  CHECK(has("score scale 1"));
  CHECK(has("score scale 1/sqrt(d)"));
  CHECK(has("score scale 1/d"));
  CHECK_FALSE(has("score scale d"));
  CHECK_FALSE(has("score scale sqrt_d"));
  // A categorical x axis: its tick labels are the labels too.
  v.axes = {{"norm", "none,layernorm"}};
  texts.clear();
  for (const auto& item : layout_sweep(v, plan_sweep(v, small()), nullptr).scene.items)
    if (const auto* t = std::get_if<SceneText>(&item)) texts.push_back(t->text);
  CHECK(has("LayerNorm"));
  CHECK_FALSE(has("layernorm"));
  // The one map from names to labels, which the window's combo boxes read too.
  CHECK(setting_value_label("scale", "sqrt_d") == "1/sqrt(d)");
  CHECK(setting_value_label("mask", "window:4") == "sliding window 4");
  CHECK(setting_value_label("alpha", "0.25") == "0.25");
}

TEST_CASE("the workbench restarts on a change of the points only, cancels when hidden, and sets the controls") {
  Settings live = small();
  live.samples = 100000;
  SweepWorkbench wb;
  wb.view().axes = {{"alpha", "0:1:3"}};
  wb.view().samples = 200000;
  wb.view().target_se = 0;
  wb.refresh(live, true);
  CHECK(wb.restarts() == 1);
  CHECK(wb.running());

  // The live alpha is swept over: changing it changes no point, so the sweep goes on.
  Settings moved = live;
  moved.alpha = 0.9;
  moved.samples = 500;  // the live run's count is not the sweep's
  wb.refresh(moved, true);
  CHECK(wb.restarts() == 1);
  // d is not swept: every point changes, the running sweep is cancelled at once and a new one starts.
  moved.d = 16;
  wb.refresh(moved, true);
  CHECK(wb.restarts() == 2);
  CHECK(wb.retired() >= 1);
  // Hidden: cancelled within a sample; the retired sweeps are destroyed once their threads are done.
  wb.refresh(moved, false);
  CHECK_FALSE(wb.running());
  const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  while (wb.retired() > 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    wb.refresh(moved, false);
  }
  CHECK(wb.retired() == 0);

  // A click on point 2 (alpha 1): the live settings with alpha 1, all else (samples too) as they were.
  const auto target = wb.live_settings_at(2 * kSweepLayerSlots, moved);
  REQUIRE(target);
  CHECK(target->alpha == 1.0);
  CHECK(target->samples == moved.samples);
  CHECK(target->d == 16);
  CHECK_FALSE(wb.live_settings_at(7 * kSweepLayerSlots, moved));
}

TEST_CASE("the workbench's CSV has one row per point and layer, and the export writes the four files") {
  Settings live = small();
  SweepWorkbench wb;
  wb.view().axes = {{"d", "4,8,16"}, {"gamma", "0,1"}};
  wb.view().target_se = 0;
  run_to_end(wb, live);
  const std::string csv = wb.csv();
  CHECK(csv.rfind("d,gamma,layer,metric,value,se,samples,ties\n", 0) == 0);
  CHECK(lines(csv) == 1 + 6 * 2);
  CHECK(csv.find("\n16,1,2,rp,") != std::string::npos);

  const std::string dir = std::string(MASKSCOPE_TEST_WORK) + "/sweep_export";
  Preset p;
  p.name = std::string(1, 't');  // not a literal: GCC 12's -Wrestrict false positive (GCC bug 105329)
  p.settings = live;
  p.sweep = wb.view();
  wb.export_options().width = 400;
  const ExportResult r = wb.export_now(dir, p);
  CHECK(r.ok);
  CHECK(r.files == std::vector<std::string>{"sweep.png", "sweep.svg", "sweep.csv", "preset.json"});
  CHECK(r.png_width == 400);
  Preset back;
  std::string error;
  REQUIRE(load_preset_file(dir + "/preset.json", back, error));
  REQUIRE(back.sweep);
  CHECK(*back.sweep == wb.view());
}

TEST_CASE("every shipped sweep preset plans its points at its own settings") {
  int sweeps = 0;
  for (const Preset& p : shipped_presets()) {
    if (!p.sweep) continue;
    ++sweeps;
    CAPTURE(p.name);
    CHECK(p.view.tab == Tab::sweep);
    const SweepPlan plan = plan_sweep(*p.sweep, p.settings);
    CHECK(plan.error.empty());
    CHECK(plan.points.size() >= 2);
  }
  CHECK(sweeps >= 5);
}

namespace {

// The chart's title: the scene's first bold text (chart_axis.cpp's title; contour labels come later, with data).
std::string sweep_title(const SweepPicture& pic) {
  for (const SceneItem& item : pic.scene.items)
    if (const auto* t = std::get_if<SceneText>(&item); t && t->bold) return t->text;
  return "";
}

}  // namespace

TEST_CASE("a sweep's title follows the settings: a preset's title while they are its own, else made from them") {
  // Issue 48 item 2: sweep-ln-recency-fig5 with d=64 and gamma=1 was titled "d 16, LayerNorm, no residual".
  const Preset* shipped = find_shipped_preset("sweep-ln-recency-fig5");
  REQUIRE(shipped);
  REQUIRE(shipped->sweep);
  const std::string own = shipped->sweep->title;
  CHECK(own.find("d 16") != std::string::npos);
  // At the preset's own settings (its samples and threads may differ) the preset's title holds.
  Settings live = shipped->settings;
  live.samples = 10;
  live.threads = 1;
  CHECK(sweep_title_holds(*shipped->sweep, live));
  CHECK(sweep_title(layout_sweep(*shipped->sweep, plan_sweep(*shipped->sweep, live), nullptr)) == own);
  // Once d and gamma change, the title is made from the settings used.
  live.d = 64;
  live.gamma = 1;
  CHECK_FALSE(sweep_title_holds(*shipped->sweep, live));
  const std::string made = sweep_title(layout_sweep(*shipped->sweep, plan_sweep(*shipped->sweep, live), nullptr));
  CAPTURE(made);
  CHECK(made.find("d 64") != std::string::npos);
  CHECK(made.find("residual") != std::string::npos);
  CHECK(made.find("no residual") == std::string::npos);
  CHECK(made.find("d 16") == std::string::npos);
  CHECK(made.find("n 10") != std::string::npos);
  CHECK(made.find("alpha 0.5") == std::string::npos);  // alpha is swept: not a fixed setting
  // The Sweep tab's "n 10" (sweep-ln-recency-phase) follows n too.
  const Preset* phase = find_shipped_preset("sweep-ln-recency-phase");
  REQUIRE(phase);
  REQUIRE(phase->sweep);
  Settings wide = phase->settings;
  wide.n = 128;
  const std::string phase_title = sweep_title(layout_sweep(*phase->sweep, plan_sweep(*phase->sweep, wide), nullptr));
  CAPTURE(phase_title);
  CHECK(phase_title.find("n 128") != std::string::npos);
  CHECK(phase_title.find("n 10") == std::string::npos);
  // A preset saved at the changed settings leaves the stale title out; read back, it shows the made title.
  Preset changed = *shipped;
  changed.settings = live;
  const nlohmann::json j = preset_to_json(changed);
  CHECK_FALSE(j.at("sweep").contains("title"));
  CHECK(preset_to_json(*shipped).at("sweep").at("title") == own);  // unchanged settings keep it
  const Preset back = preset_from_json(j);
  CHECK(sweep_title(layout_sweep(*back.sweep, plan_sweep(*back.sweep, back.settings), nullptr)) == made);
}
