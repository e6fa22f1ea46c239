// The per-layer maps shown by the tabs and the figures.
#include "common/panels.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/stats/metrics.hpp"

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

std::vector<double> transformed(const LayerStats& l, Quantity q, Transform t, int n) {
  std::vector<double> out;
  transformed(l, q, t, n, out);
  return out;
}

void transformed(const LayerStats& l, Quantity q, Transform t, int n, std::vector<double>& out) {
  const QuantityInfo& info = quantity_info(q);
  if (t == Transform::raw || info.is_vector()) {  // n values per position have no diagonals
    mean_of(l, q, out);
  } else if (info.diag_normalized) {  // the snapshot keeps it (the same function)
    (l.*info.diag_normalized).unpack(out);
  } else {
    // Kept between calls: at n 512 a full map is 2 MiB, and fresh memory costs the UI thread page faults.
    thread_local std::vector<double> raw;
    mean_of(l, q, raw);
    diagonal_normalized(raw, n, out);
  }
}

bool noise_only_map(const PanelData& p, bool skip_diagonal, double* mean, double* typical_se) {
  if (p.norms || p.se.size() < p.value.size()) return false;
  auto shown = [&](std::size_t e) {
    const bool diagonal = p.n > 0 && e / std::size_t(p.n) == e % std::size_t(p.n);
    return std::isfinite(p.value[e]) && std::isfinite(p.se[e]) && !(skip_diagonal && diagonal);
  };
  // The weighted mean over the cells with a positive SE, and the mean square SE.
  double sw = 0, swv = 0, sse = 0;
  std::size_t cells = 0;
  for (std::size_t e = 0; e < p.value.size(); ++e) {
    if (!shown(e)) continue;
    ++cells;
    sse += p.se[e] * p.se[e];
    if (p.se[e] > 0) sw += 1 / (p.se[e] * p.se[e]), swv += p.value[e] / (p.se[e] * p.se[e]);
  }
  if (cells < 2 || !(sw > 0)) return false;
  const double m = swv / sw;
  const double z_max = std::sqrt(2 * std::log(double(cells))) + 2;
  double chi2 = 0;
  for (std::size_t e = 0; e < p.value.size(); ++e) {
    if (!shown(e)) continue;
    const double d = p.value[e] - m;
    if (p.se[e] > 0) chi2 += d * d / (p.se[e] * p.se[e]);
    if (std::fabs(d) > z_max * p.se[e]) return false;  // one cell clearly apart (or an exact value off the mean)
  }
  const double dof = double(cells - 1);
  if (mean) *mean = m;
  if (typical_se) *typical_se = std::sqrt(sse / double(cells));
  return chi2 <= dof + 3 * std::sqrt(2 * dof);
}

void fit_range(PanelData& p, RangeMode mode, bool centred, bool skip_diagonal) {
  const int n = p.n;
  // Kept between calls: at n 512 these are 2 MiB each, and fresh memory costs the UI thread page
  // faults at every snapshot.
  thread_local std::vector<double> in_range, scratch;
  in_range.clear();
  double max_se = 0;
  bool any_se = false;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const std::size_t e = std::size_t(i) * n + j;
      const double v = p.value[e];
      if (!std::isfinite(v)) continue;
      if (e < p.se.size() && std::isfinite(p.se[e])) max_se = std::max(max_se, p.se[e]), any_se = true;
      if (mode != RangeMode::all && skip_diagonal && i == j) continue;
      in_range.push_back(v);
    }
  p.centred = centred;
  // The status line asks every frame: not 4 x 262,144 cells a frame at n 512. NaN: no finite SE yet.
  p.max_se = any_se ? max_se : std::numeric_limits<double>::quiet_NaN();
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
  // A map of noise only is not stretched over the whole colour range: +-4 typical SEs about its mean (symmetric
  // about 0 on a centred map), so that its cells read as the near-uniform map they are.
  double m = 0, se = 0;
  p.noise_only = !in_range.empty() && noise_only_map(p, skip_diagonal, &m, &se);
  if (p.noise_only && se > 0) {
    if (centred) {
      p.hi = float(std::fabs(m) + 4 * se);
      p.lo = -p.hi;
    } else {
      p.lo = float(m - 4 * se);
      p.hi = float(m + 4 * se);
    }
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
  const QuantityInfo& info = quantity_info(q);
  if (!info.metric) return {"", kNaN, kNaN, kNaN};  // a stage's Gram matrix has no metric of its own
  const Estimate& e = l.*info.metric;
  return {info.metric_label.data(), e.mean, e.se, e.ties};  // a literal: null-terminated
}

std::vector<int> shown_layers(const Snapshot& snap, Quantity q) {
  std::vector<int> layers;
  if (!snap.embeddings.empty() && quantity_info(q).on_embeddings) layers.push_back(0);
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
  const QuantityInfo& info = quantity_info(q);
  p.norms = info.is_vector();
  if (!has_quantity(l, q)) {  // the embeddings' scores and weights: there are none
    p.value.assign(info.is_vector() ? std::size_t(n) : std::size_t(n) * n, kNaN);
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
  switch (range_rule(q, t)) {
    case RangeRule::from_zero: {  // bars from 0 to the largest value plus its SE
      double top = 0;
      for (std::size_t i = 0; i < p.value.size(); ++i)
        if (std::isfinite(p.value[i])) top = std::max(top, p.value[i] + (std::isfinite(p.se[i]) ? p.se[i] : 0.0));
      p.lo = 0;
      p.hi = top > 0 ? float(top * 1.05) : 1.0f;
      return;
    }
    case RangeRule::symmetric:
      fit_range(p, style.range, true, false);
      if (style.grey_noise) mark_noise(p);
      return;
    case RangeRule::data:
      // A masked map keeps row 0's only cell; the others hide their whole diagonal.
      if (style.hide_diagonal)
        for (int i = info.masked ? 1 : 0; i < n; ++i) p.value[std::size_t(i) * n + i] = kNaN;
      // The diagonal is left out of the range when hidden (row 0's cell stays on screen but does not
      // set the range), and always when it is the cosines' constant 1.
      fit_range(p, style.range, false, style.hide_diagonal || info.unit_diagonal);
      return;
  }
}

std::vector<PanelData> build_panels(const Snapshot& snap, const ViewOptions& view) {
  std::vector<PanelData> panels;
  build_panels(snap, view, panels);
  return panels;
}

void build_panels(const Snapshot& snap, const ViewOptions& view, std::vector<PanelData>& panels) {
  const Transform t = transform_of(view.tab);
  const PanelStyle style{view.hide_diagonal, view.range, view.grey_noise};
  const bool per_head = view.head >= 0 && quantity_info(view.quantity).per_head;
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
    share_range(all, diverging_map(view.quantity, t));
  }
}

double largest_shown_se(const std::vector<PanelData>& panels) {
  double m = 0;
  bool known = false;  // no panel with a finite SE yet: NaN, which the status line writes as "--" (issue 48)
  for (const auto& p : panels) {
    if (std::isnan(p.max_se)) continue;  // fit_range found no finite SE
    if (p.max_se >= 0) {
      m = std::max(m, p.max_se);
      known = true;
      continue;
    }
    for (std::size_t e = 0; e < p.se.size() && e < p.value.size(); ++e)
      if (std::isfinite(p.value[e]) && std::isfinite(p.se[e])) m = std::max(m, p.se[e]), known = true;
  }
  return known ? m : std::numeric_limits<double>::quiet_NaN();
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

}  // namespace maskscope::gui
