// Layouts that cannot collide (issue 48 item 4): every shipped preset's export, laid out from small runs (the
// layout is what is checked, not the numbers), has no two text boxes that overlap and none outside the page;
// the same before any sample has arrived. Text boxes come from the scene's own text metrics (text_box).
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/run/sweep.hpp"
#include "figure_helpers.hpp"
#include "common/figure/figure.hpp"
#include "common/figure/figure_render.hpp"
#include "common/sweep/sweep_chart.hpp"
#include "common/sweep/sweep_view.hpp"

using namespace maskscope;
using namespace maskscope::gui;

namespace {

constexpr std::int64_t kLayoutSamples = 48;  // enough for every metric to have a value and an SE

// Every collision of the scene's text boxes with each other or with the page's edges, in words.
std::vector<std::string> collisions(const Scene& sc) {
  std::vector<std::pair<TextBox, const SceneText*>> boxes;
  for (const SceneItem& item : sc.items)
    if (const auto* t = std::get_if<SceneText>(&item); t && !t->text.empty()) boxes.emplace_back(text_box(*t), t);
  std::vector<std::string> out;
  auto where = [](const TextBox& b) {
    char buf[96];
    std::snprintf(buf, sizeof buf, " [%.1f,%.1f - %.1f,%.1f]", double(b.x0), double(b.y0), double(b.x1), double(b.y1));
    return std::string(buf);
  };
  // Data points: no text on one, and no legend (a translucent box) over one drawn before it (its own swatches
  // come after it).
  for (std::size_t k = 0; k < sc.items.size(); ++k) {
    const auto* m = std::get_if<SceneMarker>(&sc.items[k]);
    if (!m) continue;
    for (const auto& [box, t] : boxes)
      if (m->x > box.x0 && m->x < box.x1 && m->y > box.y0 && m->y < box.y1)
        out.push_back("'" + t->text + "'" + where(box) + " covers a data point at " + std::to_string(m->x) + "," +
                      std::to_string(m->y));
    for (std::size_t r = k + 1; r < sc.items.size(); ++r)
      if (const auto* rect = std::get_if<SceneRect>(&sc.items[r]); rect && rect->fill.a > 0 && rect->fill.a < 1)
        if (m->x > rect->x0 && m->x < rect->x1 && m->y > rect->y0 && m->y < rect->y1)
          out.push_back("a legend covers a data point at " + std::to_string(m->x) + "," + std::to_string(m->y));
  }
  for (std::size_t a = 0; a < boxes.size(); ++a) {
    const auto& [box, t] = boxes[a];
    if (box.x0 < 0 || box.y0 < 0 || box.x1 > sc.width || box.y1 > sc.height)
      out.push_back("'" + t->text + "' leaves the page" + where(box));
    for (std::size_t b = a + 1; b < boxes.size(); ++b)
      if (boxes_overlap(box, boxes[b].first))
        out.push_back("'" + t->text + "'" + where(box) + " overlaps '" + boxes[b].second->text + "'" +
                      where(boxes[b].first));
  }
  return out;
}

void check_scene(const Scene& sc, const std::string& what) {
  INFO(what);
  CHECK(sc.width > 0);
  CHECK(sc.height > 0);
  const std::vector<std::string> found = collisions(sc);
  std::string all;
  for (const std::string& c : found) all += "\n  " + c;
  CHECK_MESSAGE(found.empty(), what << ":" << all);
}

FigureSpec small(FigureSpec spec) {
  for (FigureRow& r : spec.rows) {
    r.settings.samples = kLayoutSamples;
    r.settings.threads = 2;
  }
  return spec;
}

}  // namespace

TEST_CASE("text boxes: widths from DejaVu Sans' advances, placed by the anchor, turned for vertical text") {
  // '0' is 0.6362 em and '1' too in DejaVu Sans; bold digits are 0.6958 em.
  CHECK(text_width("10", 10) == doctest::Approx(12.724).epsilon(1e-4));
  CHECK(text_width("10", 10, true) == doctest::Approx(13.916).epsilon(1e-4));
  CHECK(text_width("\u00b1", 10) == doctest::Approx(8.379).epsilon(1e-4));  // one character, two bytes
  const TextBox mid = text_box(SceneText{100, 50, 10, "10", Anchor::middle, false, false, {}});
  CHECK(mid.x0 == doctest::Approx(100 - 6.362));
  CHECK(mid.x1 == doctest::Approx(100 + 6.362));
  CHECK(mid.y0 == doctest::Approx(50 - 7.6));
  CHECK(mid.y1 == doctest::Approx(50 + 2.4));
  const TextBox up = text_box(SceneText{20, 100, 10, "10", Anchor::start, true, false, {}});
  CHECK(up.y1 == doctest::Approx(100));  // reads upwards from its baseline point
  CHECK(up.y0 == doctest::Approx(100 - 12.724));
  CHECK(up.x0 == doctest::Approx(20 - 7.6));
  CHECK(boxes_overlap({0, 0, 10, 10}, {9, 9, 20, 20}));
  CHECK_FALSE(boxes_overlap({0, 0, 10, 10}, {10, 0, 20, 10}));  // sharing an edge is not overlapping
}

TEST_CASE("every preset's figure export: no two text boxes overlap and none leaves the page") {
  for (const Preset& p : shipped_presets()) {
    if (p.figure.rows.empty()) continue;
    const FigureSpec spec = small(p.figure);
    const FigureData before = build_figure(spec, [](const Settings&) { return std::shared_ptr<const Snapshot>(); });
    check_scene(layout_figure(before), p.name + " (no samples yet)");
    test::Reference ref;
    const FigureData data = build_figure(spec, std::ref(ref));
    check_scene(layout_figure(data), p.name);
  }
}

TEST_CASE("every preset's sweep export: no two text boxes overlap and none leaves the page") {
  for (const Preset& p : shipped_presets()) {
    if (!p.sweep) continue;
    SweepView view = *p.sweep;
    view.samples = kLayoutSamples;
    view.target_se = 0;
    Settings live = p.settings;
    live.threads = 2;
    const SweepPlan plan = plan_sweep(view, live);
    REQUIRE_MESSAGE(plan.error.empty(), p.name << ": " << plan.error);
    check_scene(layout_sweep(view, plan, nullptr).scene, p.name + " (no samples yet)");
    SweepOptions options;
    options.metric = plan.metric;
    options.threads = 2;
    Sweep sweep(plan.points, options);
    sweep.wait();
    const auto state = sweep.snapshot();
    REQUIRE(state->finished);
    check_scene(layout_sweep(view, plan, state.get()).scene, p.name);
  }
}

TEST_CASE("a table's columns are as wide as their widest number: Ruscio et al.'s first-token values stay apart") {
  // The export ran "0.010781 +- 0.000086" and "0.001397 +- 0.000046" into one string.
  FigureData data;
  data.spec.kind = FigureKind::table;
  data.spec.layers = {1, 2, 3, 4};
  data.spec.title = "dR^2";
  data.spec.rows = {FigureRow{}, FigureRow{}};
  data.row_labels = {"causal", "causal, fixed first token"};
  data.group_titles = {""};
  const double values[2][4][2] = {{{0.010781, 0.000086}, {0.001397, 0.000046}, {0.0123456, 0.0000123}, {-0.5, 0.25}},
                                  {{0.98765, 0.00027}, {1234.5678, 0.0001234}, {0.5, 0.0}, {0.25, 0.125}}};
  for (const auto& row : values) {
    data.cells.emplace_back();
    for (const auto& v : row) {
      FigureCell c;
      c.metric_name = "dR^2";
      c.metric = v[0];
      c.metric_se = v[1];
      c.available = true;
      data.cells.back().push_back(c);
    }
  }
  const Scene sc = layout_figure(data);
  check_scene(sc, "table");
  int numbers = 0;
  for (const SceneItem& item : sc.items)
    if (const auto* t = std::get_if<SceneText>(&item);
        t && t->anchor == Anchor::middle && t->text.find("\u00b1") != std::string::npos)
      ++numbers;
  CHECK(numbers == 8);  // each value its own text, none merged
}
