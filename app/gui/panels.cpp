// View options as JSON and the per-layer maps shown by the tabs and the figures.
#include "panels.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/metrics.hpp"

namespace maskscope::gui {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <class E, std::size_t N>
E parse_name(const std::string& text, const std::string& what, const std::array<std::pair<const char*, E>, N>& names) {
  std::string valid;
  for (const auto& [name, value] : names) {
    if (text == name) return value;
    valid += (valid.empty() ? "" : ", ") + std::string(name);
  }
  throw std::runtime_error(what + ": '" + text + "'; valid: " + valid);
}

const std::array<std::pair<const char*, Tab>, 5> kTabs = {{{"attention", Tab::attention},
                                                          {"diagonal", Tab::diagonal},
                                                          {"hofj", Tab::h_of_j},
                                                          {"metrics", Tab::metrics},
                                                          {"figure", Tab::figure}}};
const std::array<std::pair<const char*, Quantity>, 3> kQuantities = {
    {{"score", Quantity::score}, {"weight", Quantity::weight}, {"cosine", Quantity::cosine}}};
const std::array<std::pair<const char*, Transform>, 2> kTransforms = {
    {{"raw", Transform::raw}, {"diagonal_normalized", Transform::diagonal_normalized}}};
const std::array<std::pair<const char*, ColormapId>, 5> kColormaps = {{{"rocket", ColormapId::rocket},
                                                                      {"viridis", ColormapId::viridis},
                                                                      {"magma", ColormapId::magma},
                                                                      {"rdbu", ColormapId::rdbu},
                                                                      {"coolwarm", ColormapId::coolwarm}}};

template <class E, std::size_t N>
std::string_view name_of(E v, const std::array<std::pair<const char*, E>, N>& names) {
  for (const auto& [name, value] : names)
    if (value == v) return name;
  return "?";
}

void finite_range(const std::vector<double>& v, float& lo, float& hi) {
  double a = std::numeric_limits<double>::infinity(), b = -a;
  for (double x : v)
    if (std::isfinite(x)) { a = std::min(a, x); b = std::max(b, x); }
  if (!std::isfinite(a)) { a = 0; b = 1; }
  if (b - a < 1e-12) { a -= 1e-6; b += 1e-6; }
  lo = float(a);
  hi = float(b);
}

}  // namespace

std::string_view to_string(Tab t) { return name_of(t, kTabs); }
std::string_view to_string(Quantity q) { return name_of(q, kQuantities); }
std::string_view to_string(Transform t) { return name_of(t, kTransforms); }
std::string_view symbol(Quantity q) { return q == Quantity::score ? "S" : q == Quantity::weight ? "A" : "cos"; }

Tab parse_tab(const std::string& text, const std::string& what) { return parse_name(text, what, kTabs); }
Quantity parse_quantity(const std::string& text, const std::string& what) { return parse_name(text, what, kQuantities); }
Transform parse_transform(const std::string& text, const std::string& what) {
  return parse_name(text, what, kTransforms);
}
ColormapId parse_colormap(const std::string& text, const std::string& what) {
  return parse_name(text, what, kColormaps);
}

nlohmann::json view_to_json(const ViewOptions& v) {
  return {{"tab", to_string(v.tab)},
          {"show", to_string(v.quantity)},
          {"colormap", name_of(v.sequential, kColormaps)},
          {"diverging", name_of(v.diverging, kColormaps)},
          {"hide_diagonal", v.hide_diagonal},
          {"shared_range", v.shared_range},
          {"theme", v.light_theme ? "light" : "dark"}};
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
    else if (key == "theme") {
      const std::string t = text("theme");
      if (t != "dark" && t != "light") throw std::runtime_error("view.theme: '" + t + "'; valid: dark, light");
      v.light_theme = t == "light";
    } else {
      throw std::runtime_error("view: unknown key '" + key +
                               "'; valid: tab, show, colormap, diverging, hide_diagonal, shared_range, theme");
    }
  }
  out = v;
}

const std::vector<double>& mean_of(const LayerStats& l, Quantity q) {
  return q == Quantity::score ? l.score_mean : q == Quantity::weight ? l.weight_mean : l.cosine_mean;
}
const std::vector<double>& se_of(const LayerStats& l, Quantity q) {
  return q == Quantity::score ? l.score_se : q == Quantity::weight ? l.weight_se : l.cosine_se;
}

PanelData build_panel(const Snapshot& snap, std::size_t k, Quantity q, Transform t, bool hide_diagonal) {
  const int n = snap.settings.n;
  const LayerStats& l = snap.layers.at(k);
  PanelData p;
  p.layer = l.layer;
  p.n = n;
  p.value = mean_of(l, q);
  p.se = se_of(l, q);
  if (t == Transform::diagonal_normalized) {
    p.value = diagonal_normalized(p.value, n);
    const double m = std::max(std::fabs(quantile(p.value, 0.01)), std::fabs(quantile(p.value, 0.99)));
    p.hi = std::isfinite(m) && m > 0 ? float(m) : 1e-6f;
    p.lo = -p.hi;
  } else {
    if (hide_diagonal && q != Quantity::cosine)
      for (int i = 1; i < n; ++i) p.value[std::size_t(i) * n + i] = kNaN;
    finite_range(p.value, p.lo, p.hi);
  }
  return p;
}

std::vector<PanelData> build_panels(const Snapshot& snap, const ViewOptions& view) {
  const Transform t = view.tab == Tab::diagonal ? Transform::diagonal_normalized : Transform::raw;
  std::vector<PanelData> panels;
  for (std::size_t k = 0; k < snap.layers.size(); ++k)
    panels.push_back(build_panel(snap, k, view.quantity, t, view.hide_diagonal));
  if (view.shared_range) {
    std::vector<PanelData*> all;
    for (auto& p : panels) all.push_back(&p);
    share_range(all, t == Transform::diagonal_normalized);
  }
  return panels;
}

void share_range(std::vector<PanelData*>& panels, bool symmetric) {
  if (panels.empty()) return;
  float lo = panels[0]->lo, hi = panels[0]->hi;
  for (const auto* p : panels) { lo = std::min(lo, p->lo); hi = std::max(hi, p->hi); }
  if (symmetric) hi = std::max(std::fabs(lo), std::fabs(hi)), lo = -hi;
  for (auto* p : panels) { p->lo = lo; p->hi = hi; }
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
