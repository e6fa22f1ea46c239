// What a sweep computes (issue 32): its axes (a setting and a list of values as text), the points they
// span over base settings, and the metric that the stopping rule and the tables read from a layer.
// Shared by `maskscope-cli sweep` and the window; every value goes through setting_from_text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/settings.hpp"
#include "core/stats/metric_table.hpp"
#include "core/stats/snapshot.hpp"

namespace maskscope {

// Limits of a sweep: values per axis and points in all (docs/cli.md, `sweep`).
constexpr std::size_t kSweepMaxValues = 1000;
constexpr std::size_t kSweepMaxPoints = 10000;
constexpr std::size_t kSweepMaxAxes = 2;

struct SweepAxis {
  std::string key;                  // the setting's key (setting_key_of): "init_std"
  std::vector<std::string> values;  // as text, each for setting_from_text
};

// "NAME=LIST": NAME a flag name or key (init-std, init_std); LIST "a,b,c", "START:STOP:COUNT" (linear) or
// "START:STOP:COUNTlog" (log-spaced, START and STOP > 0). Whole-number settings (n, d, layers, ...) from a
// range are rounded and duplicates dropped, in order. Each value is checked alone (setting_from_text on
// default settings). Throws std::runtime_error with the reason and the valid form or range (without the
// flag's name: the caller says "--vary").
SweepAxis parse_sweep_axis(const std::string& spec);

// The points: base with every combination of the axes' values, the first axis outermost. Each point
// applies the family's default gamma (apply_family_default_gamma: a switch to random_weights without
// gamma given gets 1) and must validate(); throws std::runtime_error naming the point's values and every
// violation, or the number of points over kSweepMaxPoints, or the same setting swept twice.
// `gamma_given`: the base's gamma was set by the user.
std::vector<Settings> sweep_points(const Settings& base, const std::vector<SweepAxis>& axes, bool gamma_given);
// The number of points (the product of the axes' values); 0 without axes or over kSweepMaxPoints.
std::size_t sweep_point_count(const std::vector<SweepAxis>& axes);
// Point p (< sweep_point_count) of sweep_points, not checked: base with the axes' values and the family's
// default gamma. What `merge` re-derives a shard's points from. Throws for a value that does not apply.
Settings sweep_point_settings(const Settings& base, const std::vector<SweepAxis>& axes, bool gamma_given,
                              std::size_t p);

// "" when the sweep fits in memory, else why not ("441 points need about 3.1 GB; this machine has ..."): every
// unfinished point keeps its exact sums (48 bytes a value) and its latest picture (16), and up to `threads`
// points run side by side, one thread each (resources.hpp). The CLI, the window and Python refuse with it.
std::string sweep_memory_refusal(const std::vector<Settings>& points, int threads);

// The point's value of each axis as text (settings_to_json's spelling: "0.25", "layernorm", "window:4").
std::string axis_value_text(const Settings& s, const std::string& key);

// What a sweep measures in each layer: a sweepable row of the metric table (metric_table.hpp: RP, adjacency,
// norm adjacency, the leakage dR^2 of S and A, the weight on key 0, ...), or one cell of the mean score or
// weight map.
struct SweepMetric {
  enum class Kind { table, score, weight } kind = Kind::table;
  const MetricInfo* row = &metric_table().front();  // kind table: a sweepable row
  int i = 0, j = 0;                                 // the cell of score / weight (0-based query i, key j)
};
// A sweepable row's key, "score:I,J" or "weight:I,J". Throws std::runtime_error listing the valid names (and,
// for a name a metric had before, its new name).
SweepMetric parse_sweep_metric(const std::string& text);
std::string sweep_metric_name(const SweepMetric& m);
// The valid --metric names: the sweepable rows' keys, then "score:I,J, weight:I,J".
std::string sweep_metric_names_text();
// "" when the metric applies to these settings (the row's sweep_error; a cell within n and not masked off
// by causality), else why not.
std::string sweep_metric_error(const SweepMetric& m, const Settings& s);

// The layer's estimate of the metric; its ties NaN for a metric without ties (a cell has none).
Estimate metric_value(const LayerStats& l, const SweepMetric& m);

}  // namespace maskscope
