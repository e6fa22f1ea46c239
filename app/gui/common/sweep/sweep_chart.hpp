// A sweep's picture (issue 32), with no window: the metric against one swept setting as lines (one per layer,
// or per value of a second, categorical setting) with +-1 SE bars, or against two numeric settings as a heat
// map with contour lines; laid out by the chart layer (chart.hpp) so the tab, PNG and SVG show the same.
#pragma once

#include <string>
#include <vector>

#include "core/run/sweep.hpp"
#include "common/figure/chart.hpp"
#include "common/sweep/sweep_view.hpp"

namespace maskscope::gui {

// A hit's id: point * kSweepLayerSlots + (layer - 1).
constexpr int kSweepLayerSlots = 64;

struct SweepPicture {
  Scene scene;
  std::vector<ChartHit> hits;
  bool heat_map = false;  // two numeric settings
};

// The display name of a metric ("RP", "adjacency", "dR^2 of S", "A[9,0]") and of a setting ("alpha", "RoPE base").
std::string sweep_metric_label(const SweepMetric& m);
std::string sweep_setting_label(const std::string& key);
// The metric's value without positional order (0.5 for RP and the adjacency scores; the table's chance), drawn
// as a reference line; NaN when it has none (a cell, dR^2, the weight on key 0).
double metric_chance(const SweepMetric& m);
// Two numeric settings with at least 5 values each give a heat map (a phase diagram); any other pair gives one
// line per value of one of them (x: the numeric one, or the one with more values).
bool sweep_is_heat_map(const SweepPlan& plan);

// `state` may be null (nothing computed yet): the axes are drawn with "no data yet".
SweepPicture layout_sweep(const SweepView& view, const SweepPlan& plan, const SweepState* state, float width = 760,
                          float height = 460);

// What hovering a point shows: the swept values, the layer, the metric with its SE, samples, ties and whether
// it stopped early at the target SE. Empty for an unknown id.
std::string sweep_point_text(const SweepPlan& plan, const SweepState& state, int id);

}  // namespace maskscope::gui
