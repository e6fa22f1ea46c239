// View options as JSON and the per-layer maps shown by the tabs and the figures.
#include "model/panels.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/stats/metrics.hpp"
#include "core/model/strict_number.hpp"

namespace maskscope::gui {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Whether shown values fall outside [lo, hi]; the range is stored as float, so values within a
// float's rounding of an end are not clipped.
void mark_clipping(PanelData& p) {
  const double slack = 1e-6 * std::max({double(p.hi) - double(p.lo), std::fabs(double(p.lo)), std::fabs(double(p.hi))});
  p.below = p.above = false;
  for (double v : p.value) {
    if (!std::isfinite(v)) continue;
    p.below = p.below || v < double(p.lo) - slack;
    p.above = p.above || v > double(p.hi) + slack;
  }
}

}  // namespace

std::string_view to_string(Tab t) { return enum_name(kTabNames, t); }
std::string_view to_string(Quantity q) { return enum_name(kQuantityNames, q); }
std::string_view to_string(Transform t) { return enum_name(kTransformNames, t); }
std::string_view to_string(RangeMode r) { return enum_name(kRangeModeNames, r); }
RangeMode parse_range_mode(const std::string& text, const std::string& what) {
  return parse_enum(kRangeModeNames, text, what);
}
std::string_view symbol(Quantity q) {
  switch (q) {
    case Quantity::score: return "S";
    case Quantity::weight: return "A";
    case Quantity::cosine: return "cos";
    case Quantity::norm: return "||x||";
    default: break;
  }
  // Built once: "<s_i, s_j> input" and "cos(s_i, s_j) input" for each stage.
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (int c = 0; c < 2; ++c)
      for (const auto& [stage, name] : kStageNames)
        v.push_back((c == 0 ? "<s_i,s_j> " : "cos(s_i,s_j) ") + std::string(name));
    return v;
  }();
  return names[std::size_t(int(q) - int(Quantity::gram_input))];
}

std::string stage_quantity_label(Quantity q, bool random_weights) {
  return (is_stage_cosine(q) ? "cos: " : "Gram: ") + std::string(stage_label(stage_of(q), random_weights));
}

Tab parse_tab(const std::string& text, const std::string& what) { return parse_enum(kTabNames, text, what); }
Quantity parse_quantity(const std::string& text, const std::string& what) {
  return parse_enum(kQuantityNames, text, what);
}
Transform parse_transform(const std::string& text, const std::string& what) {
  return parse_enum(kTransformNames, text, what);
}
ColormapId parse_colormap(const std::string& text, const std::string& what) {
  return parse_enum(kColormapNames, text, what);
}

nlohmann::json view_to_json(const ViewOptions& v) {
  return {{"tab", to_string(v.tab)},
          {"show", to_string(v.quantity)},
          {"colormap", enum_name(kColormapNames, v.sequential)},
          {"diverging", enum_name(kColormapNames, v.diverging)},
          {"hide_diagonal", v.hide_diagonal},
          {"range", to_string(v.range)},
          {"grey_noise", v.grey_noise},
          {"shared_range", v.shared_range},
          {"theme", v.light_theme ? "light" : "dark"},
          {"head", v.head}};
}

void view_from_json(const nlohmann::json& j, ViewOptions& out) {
  if (!j.is_object()) throw std::runtime_error("view: expected an object");
  ViewOptions v = out;
  auto text = [&](const char* key) -> std::string {
    const auto& x = j.at(key);
    if (!x.is_string()) throw std::runtime_error(std::string("view.") + key + ": expected a string");
    return x.get<std::string>();
  };
  auto flag = [&](const char* key) {
    const auto& x = j.at(key);
    if (!x.is_boolean()) throw std::runtime_error(std::string("view.") + key + ": expected true or false");
    return x.get<bool>();
  };
  for (const auto& [key, value] : j.items()) {
    if (key == "tab") v.tab = parse_tab(text("tab"), "view.tab");
    else if (key == "show") v.quantity = parse_quantity(text("show"), "view.show");
    else if (key == "colormap") {
      v.sequential = parse_colormap(text("colormap"), "view.colormap");
      if (colormap(v.sequential).diverging) throw std::runtime_error("view.colormap: valid: rocket, viridis, magma");
    } else if (key == "diverging") {
      v.diverging = parse_colormap(text("diverging"), "view.diverging");
      if (!colormap(v.diverging).diverging) throw std::runtime_error("view.diverging: valid: rdbu, coolwarm");
    } else if (key == "hide_diagonal") v.hide_diagonal = flag("hide_diagonal");
    else if (key == "shared_range") v.shared_range = flag("shared_range");
    else if (key == "range") v.range = parse_range_mode(text("range"), "view.range");
    else if (key == "grey_noise") v.grey_noise = flag("grey_noise");
    else if (key == "head") v.head = int(whole_number("view.head", value, -1, Limits::heads_max - 1));
    else if (key == "theme") {
      const std::string t = text("theme");
      if (t != "dark" && t != "light") throw std::runtime_error("view.theme: '" + t + "'; valid: dark, light");
      v.light_theme = t == "light";
    } else {
      throw std::runtime_error(
          "view: unknown key '" + key +
          "'; valid: tab, show, colormap, diverging, hide_diagonal, range, grey_noise, shared_range, theme, head");
    }
  }
  out = v;
}

bool has_quantity(const LayerStats& l, Quantity q) {
  switch (q) {
    case Quantity::score: return !l.score_mean.empty();
    case Quantity::weight: return !l.weight_mean.empty();
    case Quantity::cosine: return !l.cosine_mean.empty();
    case Quantity::norm: return !l.norm_mean.empty();
    default: return !l.stages[std::size_t(stage_of(q))].gram_mean.empty();
  }
}

namespace {
// Quantity q's standard errors (`se`) or means as a full array, into `out`.
void values_of(const LayerStats& l, Quantity q, bool se, std::vector<double>& out) {
  switch (q) {
    case Quantity::score: return (se ? l.score_se : l.score_mean).unpack(out);
    case Quantity::weight: return (se ? l.weight_se : l.weight_mean).unpack(out);
    case Quantity::cosine: return (se ? l.cosine_se : l.cosine_mean).unpack(out);
    case Quantity::norm: {
      const std::vector<double>& v = se ? l.norm_se : l.norm_mean;
      out.assign(v.begin(), v.end());
      return;
    }
    default: {
      const StageGram& g = l.stages[std::size_t(stage_of(q))];
      if (is_stage_cosine(q)) return (se ? g.cosine_se : g.cosine_mean).unpack(out);
      return (se ? g.gram_se : g.gram_mean).unpack(out);
    }
  }
}
}  // namespace

void mean_of(const LayerStats& l, Quantity q, std::vector<double>& out) { values_of(l, q, false, out); }
void se_of(const LayerStats& l, Quantity q, std::vector<double>& out) { values_of(l, q, true, out); }

std::vector<double> transformed(const LayerStats& l, Quantity q, Transform t, int n) {
  std::vector<double> out;
  transformed(l, q, t, n, out);
  return out;
}

void transformed(const LayerStats& l, Quantity q, Transform t, int n, std::vector<double>& out) {
  if (t == Transform::raw || q == Quantity::norm) {  // norms have no diagonals
    mean_of(l, q, out);
  } else if (q == Quantity::score) {
    l.score_diag_normalized.unpack(out);
  } else {
    // Kept between calls: at n 512 a full map is 2 MiB, and fresh memory costs the UI thread page faults.
    thread_local std::vector<double> raw;
    mean_of(l, q, raw);
    diagonal_normalized(raw, n, out);
  }
}

void fit_range(PanelData& p, RangeMode mode, bool centred, bool skip_diagonal) {
  const int n = p.n;
  // Kept between calls: at n 512 these are 2 MiB each, and fresh memory costs the UI thread page
  // faults at every snapshot.
  thread_local std::vector<double> in_range, scratch;
  in_range.clear();
  double max_se = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const std::size_t e = std::size_t(i) * n + j;
      const double v = p.value[e];
      if (!std::isfinite(v)) continue;
      if (e < p.se.size() && std::isfinite(p.se[e])) max_se = std::max(max_se, p.se[e]);
      if (mode != RangeMode::all && skip_diagonal && i == j) continue;
      in_range.push_back(v);
    }
  p.centred = centred;
  p.max_se = max_se;       // the status line asks every frame: not 4 x 262,144 cells a frame at n 512
  if (in_range.empty()) {  // nothing to show (or only the diagonal): a neutral range
    p.lo = centred ? -1.0f : 0.0f;
    p.hi = 1.0f;
  } else if (centred) {
    double m;
    if (mode == RangeMode::robust) {
      const auto q = quantiles(in_range, 0.01, 0.99, scratch);
      m = std::max(std::fabs(q[0]), std::fabs(q[1]));
    } else {
      const auto [mn, mx] = std::minmax_element(in_range.begin(), in_range.end());
      m = std::max(std::fabs(*mn), std::fabs(*mx));
    }
    if (!(m > 0)) m = max_se > 0 ? 2 * max_se : 1.0;  // all zero: the scale of the noise
    p.hi = float(m);
    p.lo = -p.hi;
  } else {
    double a, b;
    if (mode == RangeMode::robust) {
      const auto q = quantiles(in_range, 0.01, 0.99, scratch);
      a = q[0];
      b = q[1];
    } else {
      const auto [mn, mx] = std::minmax_element(in_range.begin(), in_range.end());
      a = *mn;
      b = *mx;
    }
    if (!(b - a > 1e-12 * std::max(1.0, std::fabs(a)))) {  // constant: a small range about it
      const double pad = std::max(std::fabs(a) * 1e-3, 1e-6);
      a -= pad;
      b += pad;
    }
    p.lo = float(a);
    p.hi = float(b);
  }
  mark_clipping(p);
}

void mark_noise(PanelData& p) {
  p.noise.assign(p.value.size(), 0);
  for (std::size_t e = 0; e < p.value.size() && e < p.se.size(); ++e)
    if (std::isfinite(p.value[e]) && std::isfinite(p.se[e]) && std::fabs(p.value[e]) <= 2 * p.se[e]) p.noise[e] = 1;
}

PanelData build_panel(const Snapshot& snap, std::size_t k, Quantity q, Transform t, const PanelStyle& style) {
  return build_panel(snap.layers.at(k), snap.settings.n, q, t, style);
}

PanelMetric panel_metric(const LayerStats& l, Quantity q) {
  switch (q) {
    case Quantity::score:
    case Quantity::weight: return {"RP", l.rp.mean, l.rp.se, l.rp.ties};
    case Quantity::cosine: return {"adj", l.adjacency.mean, l.adjacency.se, l.adjacency.ties};
    case Quantity::norm: return {"norm adj", l.norm_adjacency.mean, l.norm_adjacency.se, l.norm_adjacency.ties};
    default: break;  // a stage's Gram matrix has no metric of its own
  }
  return {"", kNaN, kNaN, kNaN};
}

std::vector<int> shown_layers(const Snapshot& snap, Quantity q) {
  std::vector<int> layers;
  if (!snap.embeddings.empty() && (q == Quantity::cosine || q == Quantity::norm)) layers.push_back(0);
  for (const LayerStats& l : snap.layers) layers.push_back(l.layer);
  return layers;
}

PanelData build_panel(const LayerStats& l, int n, Quantity q, Transform t, const PanelStyle& style) {
  PanelData p;
  build_panel(l, n, q, t, style, p);
  return p;
}

void build_panel(const LayerStats& l, int n, Quantity q, Transform t, const PanelStyle& style, PanelData& p) {
  {
    PanelData fresh;  // every field as new, but p's arrays keep their memory
    fresh.value.swap(p.value);
    fresh.se.swap(p.se);
    fresh.noise.swap(p.noise);
    fresh.noise.clear();
    p = std::move(fresh);
  }
  p.layer = l.layer;
  p.n = n;
  if (!has_quantity(l, q)) {  // the embeddings' scores and weights: there are none
    p.value.assign(q == Quantity::norm ? std::size_t(n) : std::size_t(n) * n, kNaN);
    p.se.assign(p.value.begin(), p.value.end());
  } else {
    transformed(l, q, t, n, p.value);
    se_of(l, q, p.se);
  }
  const PanelMetric m = panel_metric(l, q);
  p.metric_name = m.name;
  p.metric = m.value;
  p.metric_se = m.se;
  p.ties = m.ties;
  if (q == Quantity::norm) {  // bars from 0 to the largest norm plus its SE
    p.norms = true;
    double top = 0;
    for (std::size_t i = 0; i < p.value.size(); ++i)
      if (std::isfinite(p.value[i])) top = std::max(top, p.value[i] + (std::isfinite(p.se[i]) ? p.se[i] : 0.0));
    p.lo = 0;
    p.hi = top > 0 ? float(top * 1.05) : 1.0f;
    return;
  }
  const bool centred = t == Transform::diagonal_normalized;
  if (!centred && style.hide_diagonal)
    for (int i = q == Quantity::cosine || is_stage(q) ? 0 : 1; i < n; ++i) p.value[std::size_t(i) * n + i] = kNaN;
  // The diagonal of raw maps is left out of the range when hidden (row 0's cell stays on
  // screen but does not set the range), and always for cosines (constant 1).
  const bool skip_diagonal = !centred && (style.hide_diagonal || q == Quantity::cosine || is_stage_cosine(q));
  fit_range(p, style.range, centred, skip_diagonal);
  if (centred && style.grey_noise) mark_noise(p);
}

std::vector<PanelData> build_panels(const Snapshot& snap, const ViewOptions& view) {
  std::vector<PanelData> panels;
  build_panels(snap, view, panels);
  return panels;
}

void build_panels(const Snapshot& snap, const ViewOptions& view, std::vector<PanelData>& panels) {
  const Transform t = view.tab == Tab::diagonal ? Transform::diagonal_normalized : Transform::raw;
  const PanelStyle style{view.hide_diagonal, view.range, view.grey_noise};
  const bool per_head = view.head >= 0 && (view.quantity == Quantity::score || view.quantity == Quantity::weight);
  const std::vector<int> layers = shown_layers(snap, view.quantity);
  panels.resize(layers.size());
  for (std::size_t k = 0; k < layers.size(); ++k) {
    const LayerStats& l = *layer_stats(snap, layers[k]);
    if (per_head) build_panel(head_view(l, view.head), snap.settings.n, view.quantity, t, style, panels[k]);
    else build_panel(l, snap.settings.n, view.quantity, t, style, panels[k]);
  }
  if (view.shared_range) {
    std::vector<PanelData*> all;
    for (auto& p : panels) all.push_back(&p);
    share_range(all, t == Transform::diagonal_normalized);
  }
}

double largest_shown_se(const std::vector<PanelData>& panels) {
  double m = 0;
  for (const auto& p : panels) {
    if (p.max_se >= 0) {
      m = std::max(m, p.max_se);
      continue;
    }
    for (std::size_t e = 0; e < p.se.size() && e < p.value.size(); ++e)
      if (std::isfinite(p.value[e]) && std::isfinite(p.se[e])) m = std::max(m, p.se[e]);
  }
  return m;
}

void share_range(std::vector<PanelData*>& panels, bool symmetric) {
  if (panels.empty()) return;
  float lo = panels[0]->lo, hi = panels[0]->hi;
  for (const auto* p : panels) {
    lo = std::min(lo, p->lo);
    hi = std::max(hi, p->hi);
  }
  if (symmetric) hi = std::max(std::fabs(lo), std::fabs(hi)), lo = -hi;
  for (auto* p : panels) {
    p->lo = lo;
    p->hi = hi;
    mark_clipping(*p);
  }
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  std::vector<double> ticks;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return ticks;
  const double raw = (hi - lo) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step)
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
  return ticks;
}

}  // namespace maskscope::gui
