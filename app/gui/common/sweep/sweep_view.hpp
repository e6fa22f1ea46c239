// What the Sweep tab sweeps and shows (issue 32), with no window: the metric, one or two swept settings with
// their values as text (the CLI's --vary forms), the layer, the target SE, the contour levels; its JSON in
// presets; and the plan that turns it and the live settings into the sweep's points (core/run/sweep_spec.hpp).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/model/settings.hpp"
#include "core/run/sweep_spec.hpp"

namespace maskscope::gui {

struct SweepAxisText {
  std::string key;     // a setting key ("alpha", "init_std")
  std::string values;  // "a,b,c", "START:STOP:COUNT" or "START:STOP:COUNTlog"
  bool operator==(const SweepAxisText&) const = default;
};

struct SweepView {
  std::string title;          // a preset's title for the chart; shown only while it holds (sweep_title_holds)
  std::string metric = "rp";  // parse_sweep_metric's names ("rp", "score:9,0", ...)
  std::vector<SweepAxisText> axes = {{"alpha", "0:0.95:20"}};  // one or two
  int layer = 0;             // 0: every layer (one line each); else that layer. Heat maps show one layer (0: the last)
  double target_se = 0.002;  // a point stops once the metric's SE is at most this in every layer; 0: to the cap
  std::int64_t samples = 100000;     // each point's cap
  std::string contours = "0.5,0.6";  // heat maps: contour levels, comma separated (may be empty)
  // The settings `title` describes (the preset's own; not in JSON). nullopt: the title holds for any settings.
  std::optional<Settings> title_settings;
  bool operator==(const SweepView&) const = default;
};

// Limits of the tab's own settings (the axes' limits are the CLI's: kSweepMaxValues, kSweepMaxPoints).
struct SweepViewLimits {
  static constexpr double se_max = 1.0;
  static constexpr std::int64_t samples_max = 10'000'000;
  static constexpr std::size_t contours_max = 8;
};

// The settings the tab offers to sweep (issue 32's list), in menu order.
// The settings a sweep holds fixed, in words, for its generated title: "n 10, d 64, 2 layers, alpha 0.5,
// LayerNorm, residual, score scale 1/sqrt(d)" (the swept settings left out). A figure's generated title uses it too
// (figure_spec.cpp), so it lives here, in the readers' object library (maskscope_gui_io), with figure_spec.cpp.
std::string sweep_settings_text(const Settings& s, const std::vector<SweepAxis>& axes);
const std::vector<std::string>& sweepable_keys();
// A sensible first range for a setting when the user picks it ("0:1:21" for alpha, "4:1024:9log" for d).
std::string default_axis_values(const std::string& key);
// Whether the setting's values are names or 0/1 (lines per value, never a log axis or a heat map axis).
bool categorical_setting(const std::string& key);

nlohmann::json sweep_view_to_json(const SweepView& v);
// Strict: unknown keys, wrong types and values out of range throw std::runtime_error naming the key
// ("sweep.axes[1].values: ..."). The axes and metric are checked as the CLI checks --vary and --metric.
SweepView sweep_view_from_json(const nlohmann::json& j, const std::string& where = "sweep");

// Whether v.title still describes a sweep over `base` (the live settings): true when v has a title and its
// title_settings differ from `base` in nothing but the swept settings, the samples and the threads. A title
// that does not hold is stale text (a preset's "d 16" over a sweep at d 64): the chart's title is made from
// the settings instead (sweep_chart.hpp), and a preset saved from the tab leaves the stale title out.
bool sweep_title_holds(const SweepView& v, const Settings& base);

// The points of a sweep of `v` over the live settings (their samples replaced by v.samples), or why not.
struct SweepPlan {
  std::vector<SweepAxis> axes;
  SweepMetric metric;
  std::vector<Settings> points;
  std::vector<double> contours;
  std::string error;  // non-empty: no points; names the field and its valid range
};
SweepPlan plan_sweep(const SweepView& v, const Settings& live);

}  // namespace maskscope::gui
