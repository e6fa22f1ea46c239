// A sweep's chart from its state (sweep_chart.hpp).
#include "common/sweep/sweep_chart.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/format.hpp"
#include "core/model/settings_text.hpp"

namespace maskscope::gui {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The axis' values as numbers (categorical ones: 0, 1, ...).
std::vector<double> axis_numbers(const SweepAxis& a) {
  std::vector<double> x;
  for (std::size_t k = 0; k < a.values.size(); ++k)
    x.push_back(categorical_setting(a.key) ? double(k) : std::strtod(a.values[k].c_str(), nullptr));
  return x;
}

ChartAxis chart_axis(const SweepAxis& a) {
  ChartAxis axis;
  axis.label = sweep_setting_label(a.key);
  if (categorical_setting(a.key)) {
    axis.scale = AxisScale::categorical;
    for (const std::string& v : a.values) axis.categories.push_back(setting_value_label(a.key, v));
    return axis;
  }
  const std::vector<double> x = axis_numbers(a);
  const auto [lo, hi] = std::minmax_element(x.begin(), x.end());
  if (*lo > 0 && wants_log_axis(*lo, *hi)) axis.scale = AxisScale::log;
  return axis;
}

// The metric of point p's layer (1-based; 0 = its last), NaN before its first picture or past its layers.
Estimate value_at(const SweepState* state, const SweepMetric& m, std::size_t p, int layer) {
  if (!state || p >= state->points.size() || !state->points[p].snapshot) return {kNaN, kNaN, kNaN, 0};
  const auto& layers = state->points[p].snapshot->layers;
  if (layers.empty()) return {kNaN, kNaN, kNaN, 0};
  const int k = layer == 0 ? int(layers.size()) : layer;
  if (k > int(layers.size())) return {kNaN, kNaN, kNaN, 0};
  return metric_value(layers[std::size_t(k - 1)], m);
}

int max_layers(const SweepPlan& plan) {
  int L = 1;
  for (const Settings& s : plan.points) L = std::max(L, s.layers);
  return L;
}

std::string title_of(const SweepView& view, const SweepPlan& plan, int layer) {
  // The plan's first point is the base settings but for the swept ones and the samples (sweep_title_holds
  // leaves those out too).
  if (sweep_title_holds(view, plan.points[0])) return view.title;
  std::string t = sweep_metric_label(plan.metric) + " against " + sweep_setting_label(plan.axes[0].key);
  if (plan.axes.size() == 2) t += " and " + sweep_setting_label(plan.axes[1].key);
  if (layer > 0) t += ", layer " + std::to_string(layer);
  const std::string fixed = sweep_settings_text(plan.points[0], plan.axes);
  if (!fixed.empty()) t += "; " + fixed;
  return t;
}

std::string note_of(const SweepPlan& plan, const SweepState* state) {
  std::string note = "\u00b11 SE; every point uses the same random draws (seed " +
                     std::to_string(plan.points.empty() ? 0 : plan.points[0].seed) + ")";
  if (state) {
    std::int64_t samples = 0, done = 0;
    for (const SweepPoint& p : state->points) samples += p.samples, done += p.done;
    note += "; " + std::to_string(done) + " of " + std::to_string(state->points.size()) + " points done, " +
            with_thousands(samples) + " samples";
  }
  return note;
}

}  // namespace

std::string sweep_metric_label(const SweepMetric& m) {
  const std::string name = sweep_metric_name(m);
  switch (m.kind) {
    case SweepMetric::Kind::table: return std::string(m.row->label);
    case SweepMetric::Kind::score: return "S[" + name.substr(6) + "]";
    case SweepMetric::Kind::weight: return "A[" + name.substr(7) + "]";
  }
  return name;
}

std::string sweep_setting_label(const std::string& key) {
  if (key == "alpha") return "alpha (input anisotropy)";
  if (key == "gamma") return "gamma (residual strength)";
  if (key == "rope") return "RoPE base theta";
  if (key == "init_std") return "init std";
  if (key == "init_mean") return "init mean";
  if (key == "layers") return "layers L";
  if (key == "heads") return "heads H";
  if (key == "scale") return "score scale";
  if (key == "unit_input") return "unit inputs";
  return key;
}

bool sweep_is_heat_map(const SweepPlan& plan) {
  if (plan.axes.size() != 2) return false;
  for (const SweepAxis& a : plan.axes)
    if (categorical_setting(a.key) || a.values.size() < 5) return false;
  return true;
}

double metric_chance(const SweepMetric& m) { return m.kind == SweepMetric::Kind::table ? m.row->chance : kNaN; }

SweepPicture layout_sweep(const SweepView& view, const SweepPlan& plan, const SweepState* state, float width,
                          float height) {
  SweepPicture pic;
  pic.scene.width = width;
  pic.scene.height = height;
  if (plan.axes.empty() || plan.points.empty()) return pic;
  const SweepAxis& a0 = plan.axes[0];
  const bool two = plan.axes.size() == 2;
  const bool heat = sweep_is_heat_map(plan);
  pic.heat_map = heat;
  const std::size_t n1 = two ? plan.axes[1].values.size() : 1;
  auto point = [&](std::size_t i0, std::size_t i1) { return i0 * n1 + i1; };
  // The hit's layer slot when one layer is shown; 0 (the last layer) takes the last slot (sweep_point_text).
  const int slot = view.layer > 0 ? view.layer - 1 : kSweepLayerSlots - 1;

  if (heat) {
    const SweepAxis& a1 = plan.axes[1];
    HeatChart chart;
    chart.title = title_of(view, plan, view.layer);
    chart.x = chart_axis(a0);
    chart.y = chart_axis(a1);
    chart.xs = axis_numbers(a0);
    chart.ys = axis_numbers(a1);
    for (std::size_t iy = 0; iy < chart.ys.size(); ++iy)
      for (std::size_t ix = 0; ix < chart.xs.size(); ++ix) {
        const std::size_t p = point(ix, iy);
        const Estimate v = value_at(state, plan.metric, p, view.layer);
        chart.values.push_back(v.mean);
        chart.ses.push_back(v.se);
        chart.ids.push_back(int(p) * kSweepLayerSlots + slot);
      }
    chart.colorbar_label =
        sweep_metric_label(plan.metric) + (view.layer > 0 ? ", layer " + std::to_string(view.layer) : ", last layer");
    chart.colormap = ColormapId::viridis;
    chart.contours = plan.contours;
    chart.note = note_of(plan, state);
    layout_heat_chart(chart, 0, 0, width, height, pic.scene, &pic.hits);
    return pic;
  }

  // Lines: a second axis gives one line per value; x is the numeric axis of the two, or the one with more values.
  bool swap = false;
  if (two) {
    const bool cat0 = categorical_setting(a0.key), cat1 = categorical_setting(plan.axes[1].key);
    swap = cat0 != cat1 ? cat0 : plan.axes[1].values.size() > a0.values.size();
  }
  const SweepAxis& ax = swap ? plan.axes[1] : a0;
  LineChart chart;
  chart.x = chart_axis(ax);
  chart.y.label = sweep_metric_label(plan.metric);
  const std::vector<double> xs = axis_numbers(ax);
  auto point_of = [&](std::size_t ix, std::size_t is) {
    if (!two) return ix;
    return swap ? point(is, ix) : point(ix, is);
  };
  if (two) {
    const SweepAxis& as = swap ? a0 : plan.axes[1];
    for (std::size_t is = 0; is < as.values.size(); ++is) {
      ChartSeries s;
      s.label = sweep_setting_label(as.key) + " " + setting_value_label(as.key, as.values[is]);
      for (std::size_t ix = 0; ix < xs.size(); ++ix) {
        const std::size_t p = point_of(ix, is);
        const Estimate v = value_at(state, plan.metric, p, view.layer);
        s.x.push_back(xs[ix]);
        s.y.push_back(v.mean);
        s.se.push_back(v.se);
        s.ids.push_back(int(p) * kSweepLayerSlots + slot);
      }
      chart.series.push_back(std::move(s));
    }
    chart.title = title_of(view, plan, view.layer);
  } else {
    const int first = view.layer > 0 ? view.layer : 1, last = view.layer > 0 ? view.layer : max_layers(plan);
    for (int layer = first; layer <= last; ++layer) {
      ChartSeries s;
      s.label = "layer " + std::to_string(layer);
      for (std::size_t ix = 0; ix < xs.size(); ++ix) {
        const Estimate v = value_at(state, plan.metric, ix, layer);
        s.x.push_back(xs[ix]);
        s.y.push_back(v.mean);
        s.se.push_back(v.se);
        s.ids.push_back(int(ix) * kSweepLayerSlots + layer - 1);
      }
      chart.series.push_back(std::move(s));
    }
    chart.title = title_of(view, plan, view.layer);
  }
  if (std::isfinite(metric_chance(plan.metric))) chart.reference_y = {metric_chance(plan.metric)};
  chart.note = note_of(plan, state);
  layout_line_chart(chart, 0, 0, width, height, pic.scene, &pic.hits);
  return pic;
}

std::string sweep_point_text(const SweepPlan& plan, const SweepState& state, int id) {
  if (id < 0) return "";
  const std::size_t p = std::size_t(id / kSweepLayerSlots);
  const int slot = id % kSweepLayerSlots;
  if (p >= state.points.size() || p >= plan.points.size()) return "";
  const SweepPoint& pt = state.points[p];
  std::string text;
  for (const SweepAxis& a : plan.axes)
    text +=
        (text.empty() ? "" : ", ") + a.key + " = " + setting_value_label(a.key, axis_value_text(plan.points[p], a.key));
  if (!pt.snapshot || pt.snapshot->layers.empty()) return text + ": no samples yet";
  const int L = int(pt.snapshot->layers.size());
  const int layer = std::min(slot + 1, L);
  const Estimate v = metric_value(pt.snapshot->layers[std::size_t(layer - 1)], plan.metric);
  text += ", layer " + std::to_string(layer) + "\n" + sweep_metric_label(plan.metric) + " " + value_with_se(v);
  text += "\n" + with_thousands(pt.samples) + " samples";
  if (std::isfinite(v.ties)) text += ", ties " + compact_number(100.0 * v.ties, 3) + "%";
  if (pt.stopped_early) text += "\nstopped early at the target SE";
  else if (pt.done) text += "\nreached its cap";
  text += "\nclick: set the live controls to this point (Ctrl+Z undoes)";
  return text;
}

}  // namespace maskscope::gui
