// The Sweep tab's choices as JSON and as a sweep's points (sweep_view.hpp).
#include "common/sweep/sweep_view.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/model/settings_text.hpp"
#include "core/run/sweep_spec.hpp"
#include "core/model/strict_number.hpp"

namespace maskscope::gui {

namespace {

using nlohmann::json;

std::string string_at(const json& j, const char* key, const std::string& where) {
  const json& v = j.at(key);
  if (!v.is_string()) throw std::runtime_error(where + "." + key + ": expected a string");
  return v.get<std::string>();
}

// "0.5,0.6" -> {0.5, 0.6}; throws naming `where` on anything but finite numbers, or too many.
std::vector<double> parse_levels(const std::string& text, const std::string& where) {
  std::vector<double> levels;
  std::size_t at = 0;
  while (at <= text.size() && !text.empty()) {
    const std::size_t comma = text.find(',', at);
    std::string part = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    while (!part.empty() && part.front() == ' ') part.erase(part.begin());
    while (!part.empty() && part.back() == ' ') part.pop_back();
    levels.push_back(real_number(where, number_from_text(where, part), -1e300, 1e300));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  if (levels.size() > SweepViewLimits::contours_max)
    throw std::runtime_error(where + ": " + std::to_string(levels.size()) + " levels; valid: at most " +
                             std::to_string(SweepViewLimits::contours_max));
  return levels;
}

}  // namespace

// The settings table's rows with a window_sweep column, in its order.
const std::vector<std::string>& sweepable_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const SettingInfo& row : setting_table())
      if (row.window_sweep) k.push_back(row.key);
    return k;
  }();
  return keys;
}

std::string default_axis_values(const std::string& key) {
  const SettingInfo* row = setting_info(key);
  return row && row->window_sweep ? row->window_sweep : "";
}

bool categorical_setting(const std::string& key) {
  const SettingFlag* f = setting_flag(key);
  return f && setting_value(*f) == SettingValue::name;
}

json sweep_view_to_json(const SweepView& v) {
  json axes = json::array();
  for (const SweepAxisText& a : v.axes) axes.push_back({{"name", a.key}, {"values", a.values}});
  json j = {{"metric", v.metric}, {"vary", std::move(axes)}, {"layer", v.layer},
            {"se", v.target_se},  {"samples", v.samples},    {"contours", v.contours}};
  if (!v.title.empty()) j["title"] = v.title;
  return j;
}

bool sweep_title_holds(const SweepView& v, const Settings& base) {
  if (v.title.empty()) return false;
  if (!v.title_settings) return true;
  json a = settings_to_json(*v.title_settings), b = settings_to_json(base);
  for (json* j : {&a, &b}) {
    j->erase("samples");
    j->erase("threads");
    for (const SweepAxisText& axis : v.axes) j->erase(axis.key);
  }
  return a == b;
}

SweepView sweep_view_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) throw std::runtime_error(where + ": expected an object");
  check_object_keys(j, where, {"title", "metric", "vary", "layer", "se", "samples", "contours"});
  SweepView v;
  if (j.contains("title")) v.title = string_at(j, "title", where);
  if (j.contains("metric")) {
    v.metric = string_at(j, "metric", where);
    try {
      parse_sweep_metric(v.metric);
    } catch (const std::exception& e) { throw std::runtime_error(where + ".metric: " + e.what()); }
  }
  if (j.contains("vary")) {
    const json& axes = j.at("vary");
    if (!axes.is_array() || axes.empty() || axes.size() > kSweepMaxAxes)
      throw std::runtime_error(where + ".vary: expected a list of 1 or 2 {\"name\", \"values\"} objects");
    v.axes.clear();
    for (std::size_t k = 0; k < axes.size(); ++k) {
      const std::string at = where + ".vary[" + std::to_string(k) + "]";
      if (!axes[k].is_object()) throw std::runtime_error(at + ": expected an object {\"name\", \"values\"}");
      check_object_keys(axes[k], at, {"name", "values"});
      if (!axes[k].contains("name") || !axes[k].contains("values"))
        throw std::runtime_error(at + ": needs \"name\" and \"values\"");
      SweepAxisText a{string_at(axes[k], "name", at), string_at(axes[k], "values", at)};
      try {
        a.key = parse_sweep_axis(a.key + "=" + a.values).key;  // a flag name becomes its key
      } catch (const std::exception& e) { throw std::runtime_error(at + ": " + e.what()); }
      v.axes.push_back(std::move(a));
    }
    if (v.axes.size() == 2 && v.axes[0].key == v.axes[1].key)
      throw std::runtime_error(where + ".vary: " + v.axes[0].key + " is swept twice");
  }
  if (j.contains("layer")) v.layer = int(whole_number(where + ".layer", j.at("layer"), 0, Limits::layers_max));
  if (j.contains("se")) v.target_se = real_number(where + ".se", j.at("se"), 0, SweepViewLimits::se_max);
  if (j.contains("samples"))
    v.samples = whole_number(where + ".samples", j.at("samples"), 1, SweepViewLimits::samples_max);
  if (j.contains("contours")) {
    v.contours = string_at(j, "contours", where);
    parse_levels(v.contours, where + ".contours");
  }
  return v;
}

SweepPlan plan_sweep(const SweepView& v, const Settings& live) {
  SweepPlan plan;
  try {
    if (v.axes.empty() || v.axes.size() > kSweepMaxAxes) throw std::runtime_error("sweep one or two settings");
    for (const SweepAxisText& a : v.axes) {
      try {
        plan.axes.push_back(parse_sweep_axis(a.key + "=" + a.values));
      } catch (const std::exception& e) { throw std::runtime_error("values of " + a.key + ": " + e.what()); }
    }
    try {
      plan.metric = parse_sweep_metric(v.metric);
    } catch (const std::exception& e) { throw std::runtime_error(std::string("metric: ") + e.what()); }
    if (v.samples < 1 || v.samples > SweepViewLimits::samples_max)
      throw std::runtime_error("samples per point: valid: whole number in [1, " +
                               std::to_string(SweepViewLimits::samples_max) + "]");
    if (!(v.target_se >= 0 && v.target_se <= SweepViewLimits::se_max))
      throw std::runtime_error("target SE: valid: [0, 1] (0 = every point to its cap)");
    plan.contours = parse_levels(v.contours, "contour levels");
    Settings base = live;
    base.samples = v.samples;
    // The live gamma was chosen for the live family; a swept model gets each family's default (the CLI's rule
    // when --gamma is not given).
    plan.points = sweep_points(base, plan.axes, false);
    for (const Settings& p : plan.points)
      if (std::string why = sweep_metric_error(plan.metric, p); !why.empty())
        throw std::runtime_error("metric: " + why);
    if (std::string why = sweep_memory_refusal(plan.points, resolved_threads(live)); !why.empty())
      throw std::runtime_error(why);
    if (v.layer > 0)
      for (const Settings& p : plan.points)
        if (v.layer > p.layers)
          throw std::runtime_error("layer " + std::to_string(v.layer) + ": a point has only " +
                                   std::to_string(p.layers) + " layers; valid: 0 (all) or 1.." +
                                   std::to_string(p.layers));
  } catch (const std::exception& e) {
    plan.points.clear();
    plan.error = e.what();
  }
  return plan;
}

std::string sweep_settings_text(const Settings& s, const std::vector<SweepAxis>& axes) {
  std::vector<std::string> parts;
  auto shown = [&](const char* key) {
    return std::none_of(axes.begin(), axes.end(), [&](const SweepAxis& a) { return a.key == key; });
  };
  auto add = [&](const char* key, std::string text) {
    if (shown(key)) parts.push_back(std::move(text));
  };
  add("n", "n " + std::to_string(s.n));
  add("d", "d " + std::to_string(s.d));
  add("layers", std::to_string(s.layers) + (s.layers == 1 ? " layer" : " layers"));
  if (s.random_weights()) {
    add("init_std", "init std " + axis_value_text(s, "init_std"));
  } else {
    add("alpha", "alpha " + axis_value_text(s, "alpha"));
  }
  switch (s.norm) {
    case Norm::none: add("norm", "no norm"); break;
    case Norm::l2: add("norm", "L2 norm"); break;
    case Norm::layernorm: add("norm", "LayerNorm"); break;
    case Norm::rmsnorm: add("norm", "RMSNorm"); break;
  }
  add("gamma", s.gamma == 0   ? std::string("no residual")
               : s.gamma == 1 ? std::string("residual")
                              : "residual gamma " + axis_value_text(s, "gamma"));
  if (!s.random_weights()) add("scale", "score scale " + setting_value_label("scale", axis_value_text(s, "scale")));
  if (s.mask != MaskKind::causal) add("mask", setting_value_label("mask", mask_to_string(s)));
  if (s.rope()) add("rope", "RoPE theta " + axis_value_text(s, "rope"));
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

}  // namespace maskscope::gui
