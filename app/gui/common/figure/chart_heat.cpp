// The heat chart (a phase diagram): one rectangle per cell of an x by y grid reaching halfway to its neighbours,
// a labelled colorbar at the right and contour lines at the given levels.
#include <algorithm>
#include <cmath>

#include "common/figure/chart.hpp"
#include "common/figure/chart_axis.hpp"
#include "common/figure/scene_parts.hpp"
#include "common/format.hpp"

namespace maskscope::gui {

using namespace chart_detail;

namespace {

const Rgba kNoData{0.86f, 0.86f, 0.86f, 1};

// The centres of an axis in axis coordinates. A log axis with a value <= 0 becomes linear; an axis with a value
// that has no coordinate at all counts its cells 0, 1, ... instead.
std::vector<double> centres(ChartAxis& axis, AxisMap& a, const std::vector<double>& values) {
  auto coords = [&] {
    std::vector<double> c;
    for (double v : values) c.push_back(a.coord(v));
    return c;
  };
  auto finite = [](const std::vector<double>& c) {
    return std::all_of(c.begin(), c.end(), [](double x) { return std::isfinite(x); });
  };
  std::vector<double> c = coords();
  if (!finite(c) && a.scale == AxisScale::log) {
    axis.scale = a.scale = AxisScale::linear;
    c = coords();
  }
  if (!finite(c))
    for (std::size_t k = 0; k < c.size(); ++k) c[k] = double(k);
  return c;
}

// Cell edges halfway between neighbouring centres; the outer cells reach as far out as in; one cell is 1 wide.
std::vector<double> cell_edges(const std::vector<double>& c) {
  const std::size_t n = c.size();
  if (n == 0) return {};
  if (n == 1) return {c[0] - 0.5, c[0] + 0.5};
  std::vector<double> e(n + 1);
  e[0] = c[0] - (c[1] - c[0]) / 2;
  for (std::size_t k = 1; k < n; ++k) e[k] = (c[k - 1] + c[k]) / 2;
  e[n] = c[n - 1] + (c[n - 1] - c[n - 2]) / 2;
  return e;
}

}  // namespace

void layout_heat_chart(const HeatChart& chart, float x0, float y0, float x1, float y1, Scene& sc,
                       std::vector<ChartHit>* hits) {
  const float fs_label = kLabelSize, fs_tick = kTickSize, fs_level = 8;
  const std::size_t nx = chart.xs.size(), ny = chart.ys.size();
  ChartAxis xaxis = chart.x, yaxis = chart.y;
  AxisMap ax{xaxis.scale}, ay{yaxis.scale};
  const std::vector<double> cx = centres(xaxis, ax, chart.xs), cy = centres(yaxis, ay, chart.ys);
  const std::vector<double> ex = cell_edges(cx), ey = cell_edges(cy);
  auto span = [](const std::vector<double>& e, double& lo, double& hi) {
    lo = INFINITY, hi = -INFINITY;
    for (double v : e) lo = std::min(lo, v), hi = std::max(hi, v);
  };
  // A categorical axis spans its categories (axis_range takes their centres); others their cells' outer edges.
  double exlo, exhi, eylo, eyhi;
  span(xaxis.scale == AxisScale::categorical ? cx : ex, exlo, exhi);
  span(yaxis.scale == AxisScale::categorical ? cy : ey, eylo, eyhi);
  axis_range(xaxis, exlo, exhi, 0, ax.lo, ax.hi);
  axis_range(yaxis, eylo, eyhi, 0, ay.lo, ay.hi);

  // Colour range: the given ends, else the finite values' range; a constant map gets a small range around it.
  auto value = [&](std::size_t r, std::size_t c) {
    const std::size_t k = r * nx + c;
    const double v = k < chart.values.size() ? chart.values[k] : NAN;
    return std::isfinite(v) && std::fabs(v) <= kHuge ? v : NAN;
  };
  double vmin = INFINITY, vmax = -INFINITY;
  for (std::size_t r = 0; r < ny; ++r)
    for (std::size_t c = 0; c < nx; ++c)
      if (const double v = value(r, c); std::isfinite(v)) vmin = std::min(vmin, v), vmax = std::max(vmax, v);
  const bool any_value = vmin <= vmax;
  double lo = any_value ? vmin : 0, hi = any_value ? vmax : 1;
  if (chart.lo && std::isfinite(*chart.lo) && std::fabs(*chart.lo) <= kHuge) lo = *chart.lo;
  if (chart.hi && std::isfinite(*chart.hi) && std::fabs(*chart.hi) <= kHuge) hi = *chart.hi;
  if (!(hi > lo)) {
    const double half = lo != 0 ? std::fabs(lo) * 0.05 : 0.5;
    lo -= half, hi = lo + 2 * half;
  }
  const bool below = any_value && vmin < lo, above = any_value && vmax > hi;
  const Colormap& cm = colormap(chart.colormap);

  // Contours interpolate between neighbouring values, which means nothing between categories.
  const bool categorical = xaxis.scale == AxisScale::categorical || yaxis.scale == AxisScale::categorical;
  const bool contours = any_value && !categorical && nx * ny <= chart.values.size() && !chart.contours.empty();
  // With SEs: the cells within 2 SE of a contour level, which are hatched (no line can be placed among them).
  const bool with_se = contours && chart.ses.size() >= nx * ny;
  std::vector<unsigned char> hatched(nx * ny, 0);
  if (with_se)
    for (std::size_t k = 0; k < nx * ny; ++k)
      for (double level : chart.contours)
        if (std::isfinite(value(k / nx, k % nx)) && std::isfinite(level) &&
            within_se(value(k / nx, k % nx), chart.ses[k], level))
          hatched[k] = 1;
  std::string note = chart.note;
  if (with_se)
    note += std::string(note.empty() ? "" : "; ") +
            "contour lines only where the level is crossed by more than 2 SE; hatched: within 2 SE of a level";

  // Rows: title, plot, tick labels, x label, note; room above for the colorbar's clipped-end triangle.
  ChartFrame f = frame_rows(x0, y0, x1, y1, chart.title, !xaxis.label.empty(), note, above ? 14 : 0);
  const float py0 = f.py0, py1 = f.py1;
  ay.p0 = py1, ay.p1 = py0;
  const std::vector<Tick> yt = axis_ticks(ay, yaxis, distinct(chart.ys), false, fs_tick, 12);

  // Horizontal layout: y label, y tick labels, plot, colorbar with its tick labels and label.
  float ytick_w = 0, cbtick_w = 0;
  for (const Tick& t : yt) ytick_w = std::max(ytick_w, text_width(t.text, fs_tick));
  for (const ColorbarTick& t : colorbar_ticks(lo, hi)) cbtick_w = std::max(cbtick_w, text_width(t.text, fs_tick));
  const float cb_w = 10, right = 12 + cb_w + 4 + cbtick_w + (chart.colorbar_label.empty() ? 0 : 6 + fs_label) + 4;
  const float px0 = x0 + 4 + (yaxis.label.empty() ? 0 : fs_label + 6) + ytick_w + 6;
  const float px1 = std::max(px0 + 10, x1 - right);
  ax.p0 = f.px0 = px0, ax.p1 = f.px1 = px1;
  const std::vector<Tick> xt = axis_ticks(ax, xaxis, distinct(chart.xs), true, fs_tick, 12);
  const Box plot{px0, py0, px1, py1};

  // Cells, each outlined in its own colour so that anti-aliased neighbours leave no seam.
  for (std::size_t r = 0; r < ny; ++r)
    for (std::size_t c = 0; c < nx; ++c) {
      const double a0 = ax.at(ex[c]), a1 = ax.at(ex[c + 1]), b0 = ay.at(ey[r]), b1 = ay.at(ey[r + 1]);
      const Box cell{std::max(std::min(a0, a1), plot.x0), std::max(std::min(b0, b1), plot.y0),
                     std::min(std::max(a0, a1), plot.x1), std::min(std::max(b0, b1), plot.y1)};
      if (!(cell.x1 > cell.x0) || !(cell.y1 > cell.y0)) continue;
      const double v = value(r, c);
      Rgba fill = kNoData;
      if (std::isfinite(v)) {
        const auto rgb = cm.at(float(std::clamp((v - lo) / (hi - lo), 0.0, 1.0)));
        fill = {rgb[0], rgb[1], rgb[2], 1};
      }
      sc.items.push_back(SceneRect{float(cell.x0), float(cell.y0), float(cell.x1), float(cell.y1), fill, fill, 0.5f});
      const std::size_t k = r * nx + c;
      if (hits && k < chart.ids.size())
        hits->push_back(ChartHit{float(cell.x0), float(cell.y0), float(cell.x1), float(cell.y1), chart.ids[k]});
    }
  // Hatching: diagonal lines on one global pattern (neighbouring cells' lines join), in black or white by the cell.
  const float hatch_step = 5;
  for (std::size_t r = 0; r < ny && with_se; ++r)
    for (std::size_t c = 0; c < nx; ++c) {
      if (!hatched[r * nx + c]) continue;
      const double a0 = ax.at(ex[c]), a1 = ax.at(ex[c + 1]), b0 = ay.at(ey[r]), b1 = ay.at(ey[r + 1]);
      const Box cell{std::max(std::min(a0, a1), plot.x0), std::max(std::min(b0, b1), plot.y0),
                     std::min(std::max(a0, a1), plot.x1), std::min(std::max(b0, b1), plot.y1)};
      if (!(cell.x1 > cell.x0) || !(cell.y1 > cell.y0)) continue;
      Rgba ink = contour_color(cm, (value(r, c) - lo) / (hi - lo));
      ink.a = 0.6f;
      // Lines x + y = const through the cell, at multiples of the step.
      for (double k = std::ceil((cell.x0 + cell.y0) / hatch_step) * hatch_step; k <= cell.x1 + cell.y1; k += hatch_step)
        add_clipped_polyline(sc, {{k - cell.y1, cell.y1}, {k - cell.y0, cell.y0}}, cell,
                             ScenePath{{}, ink, 0.7f, false});
    }
  if (contours) {
    std::vector<double> finite_values(chart.values.begin(), chart.values.begin() + std::ptrdiff_t(nx * ny));
    for (double& v : finite_values)
      if (std::fabs(v) > kHuge) v = NAN;
    const std::vector<double> ses =
        with_se ? std::vector<double>(chart.ses.begin(), chart.ses.begin() + std::ptrdiff_t(nx * ny))
                : std::vector<double>{};
    add_contours(sc, cx, cy, finite_values, ses, chart.contours, ax, ay, plot, cm, lo, hi, fs_level);
  }

  add_axes(sc, f, ax, ay, xt, yt, chart.title, xaxis.label, yaxis.label);

  // Colorbar, with the contour levels marked across it.
  const float cbx0 = px1 + 12, cbx1 = cbx0 + cb_w;
  add_colorbar(sc, cbx0, py0, cbx1, py1, cm, float(lo), float(hi), below, above, fs_tick);
  for (double level : categorical ? std::vector<double>{} : chart.contours)
    if (std::isfinite(level) && level >= lo && level <= hi) {
      const float y = py1 - float((level - lo) / (hi - lo)) * (py1 - py0);
      sc.items.push_back(ScenePath{{{cbx0, y}, {cbx1, y}}, contour_color(cm, (level - lo) / (hi - lo)), 1.2f, false});
    }
  if (!chart.colorbar_label.empty())
    sc.items.push_back(SceneText{cbx1 + 4 + cbtick_w + 4 + fs_label * 0.8f, (py0 + py1) / 2, fs_label,
                                 chart.colorbar_label, Anchor::middle, true, false, kBlack});
  if (!any_value) add_no_data(sc, f);
}

}  // namespace maskscope::gui
