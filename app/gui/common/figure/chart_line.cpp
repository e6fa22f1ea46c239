// The line chart: y against x with +-1 SE bars, linear, log or categorical axes, dashed reference lines and a
// legend in the emptiest corner, in the house style of the h(j) plots (figure_layout.cpp's layout_curves).
#include <algorithm>
#include <cmath>
#include <iterator>

#include "common/figure/chart.hpp"
#include "common/figure/chart_axis.hpp"
#include "common/figure/scene_parts.hpp"
#include "common/format.hpp"

namespace maskscope::gui {

using namespace chart_detail;

namespace {

const Rgba kGrid{0.88f, 0.88f, 0.88f, 1};
const Rgba kReference{0.45f, 0.45f, 0.45f, 1};

// The legend's entries (the series with a label) and its size.
struct Legend {
  std::vector<std::size_t> entries;
  float w = 0, h = 0;
};

Legend legend_of(const LineChart& chart) {
  Legend l;
  float label_w = 0;
  for (std::size_t si = 0; si < chart.series.size(); ++si)
    if (!chart.series[si].label.empty()) {
      l.entries.push_back(si);
      label_w = std::max(label_w, text_width(chart.series[si].label, kTickSize));
    }
  const float row = kTickSize + 4;
  l.w = 6 + 20 + 6 + label_w + 6;
  l.h = float(l.entries.size()) * row + 6;
  return l;
}

// Lays the chart out with its legend inside the plot (in the corner with the least ink) or, when `outside`, in a
// column right of the plot. Returns how many points of ink (lines every few units, markers, error bar ends,
// reference lines) the legend covers.
std::size_t layout_line_chart_with(const LineChart& chart, float x0, float y0, float x1, float y1, Scene& sc,
                                   std::vector<ChartHit>* hits, bool outside) {
  const float fs_label = kLabelSize, fs_tick = kTickSize;
  const Legend legend = legend_of(chart);
  const float legend_column = outside && !legend.entries.empty() ? legend.w + 10 : 0;
  const float marker_r = 2.6f, hit_half = 4, cap = 2.5f;
  AxisMap ax{chart.x.scale}, ay{chart.y.scale};

  // Data extents in axis coordinates: x from every point (so a sweep's axis shows before its values arrive), y from
  // the finite values with their error bars and the reference lines (which would be invisible outside the range).
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  bool any_value = false;
  std::vector<double> xs_seen;
  for (const ChartSeries& s : chart.series)
    for (std::size_t k = 0; k < s.x.size(); ++k) {
      const double cx = ax.coord(s.x[k]);
      if (!std::isfinite(cx)) continue;
      xmin = std::min(xmin, cx), xmax = std::max(xmax, cx);
      xs_seen.push_back(s.x[k]);
      const double cy = k < s.y.size() ? ay.coord(s.y[k]) : NAN;
      if (!std::isfinite(cy)) continue;
      any_value = true;
      ymin = std::min(ymin, cy), ymax = std::max(ymax, cy);
      const double e = k < s.se.size() && std::isfinite(s.se[k]) ? std::fabs(s.se[k]) : 0;
      for (double v : {ay.coord(s.y[k] - e), ay.coord(s.y[k] + e)})
        if (std::isfinite(v)) ymin = std::min(ymin, v), ymax = std::max(ymax, v);
    }
  for (double r : chart.reference_y)
    if (const double c = ay.coord(r); std::isfinite(c)) ymin = std::min(ymin, c), ymax = std::max(ymax, c);
  axis_range(chart.x, xmin, xmax, 0.05, ax.lo, ax.hi);
  axis_range(chart.y, ymin, ymax, 0.07, ay.lo, ay.hi);

  // Rows: title, plot, tick labels, x label, note.
  ChartFrame f = frame_rows(x0, y0, x1, y1, chart.title, !chart.x.label.empty(), chart.note, 0);
  const float py0 = f.py0, py1 = f.py1;
  ay.p0 = py1, ay.p1 = py0;
  const std::vector<Tick> yt = axis_ticks(ay, chart.y, {}, false, fs_tick, 0);

  // Horizontal layout: y label, y tick labels, plot, reference labels.
  float ytick_w = 0;
  for (const Tick& t : yt) ytick_w = std::max(ytick_w, text_width(t.text, fs_tick));
  std::vector<std::string> ref_text;
  float ref_w = 0;
  for (double r : chart.reference_y) {
    ref_text.push_back(compact_number(r, 3));
    ref_w = std::max(ref_w, text_width(ref_text.back(), fs_tick * 0.9f));
  }
  const float px0 = x0 + 4 + (chart.y.label.empty() ? 0 : fs_label + 6) + ytick_w + 6;
  const float px1 = std::max(px0 + 10, x1 - std::max(12.0f, ref_w + 8) - legend_column);
  ax.p0 = f.px0 = px0, ax.p1 = f.px1 = px1;
  const std::vector<Tick> xt =
      axis_ticks(ax, chart.x, distinct(xs_seen), true, fs_tick, std::max(2, int((px1 - px0) / 40)));
  const Box plot{px0, py0, px1, py1};

  // Grid, then reference lines (labelled outside the right end), under the data.
  for (const Tick& t : yt) {
    const float y = float(ay.at(t.c));
    sc.items.push_back(ScenePath{{{px0, y}, {px1, y}}, kGrid, 0.5f, false});
  }
  for (std::size_t r = 0; r < chart.reference_y.size(); ++r) {
    const double c = ay.coord(chart.reference_y[r]);
    if (!std::isfinite(c) || !plot.contains(px0, ay.at(c))) continue;
    const float y = float(ay.at(c));
    sc.items.push_back(ScenePath{{{px0, y}, {px1, y}}, kReference, 0.9f, true});
    sc.items.push_back(
        SceneText{px1 + 3, y + fs_tick * 0.32f, fs_tick * 0.9f, ref_text[r], Anchor::start, false, false, kReference});
  }

  // Series: error bars, the line (broken at non-finite values and clipped to the plot), markers and hits. `ink`
  // collects points of everything drawn, so that the legend can avoid them.
  std::vector<Point> ink;
  for (std::size_t si = 0; si < chart.series.size(); ++si) {
    const ChartSeries& s = chart.series[si];
    const Rgba col = s.color ? *s.color : palette(si);
    std::vector<Point> line;
    for (std::size_t k = 0; k < s.x.size(); ++k) {
      const double cx = ax.coord(s.x[k]), cy = k < s.y.size() ? ay.coord(s.y[k]) : NAN;
      const bool ok = std::isfinite(cx) && std::isfinite(cy);
      const Point p{ok ? ax.at(cx) : NAN, ok ? ay.at(cy) : NAN};
      line.push_back(p);
      if (!ok) continue;
      const double e = k < s.se.size() && std::isfinite(s.se[k]) ? std::fabs(s.se[k]) : 0;
      if (e > 0 && p[0] >= px0 && p[0] <= px1) {
        const double lo = ay.coord(s.y[k] - e), hi = ay.coord(s.y[k] + e);
        const double b0 = std::isfinite(lo) ? ay.at(lo) : double(py1), b1 = std::isfinite(hi) ? ay.at(hi) : double(py0);
        add_clipped_polyline(sc, {{p[0], b0}, {p[0], b1}}, plot, ScenePath{{}, col, 1.0f, false});
        for (double b : {b0, b1})
          if (b >= py0 && b <= py1) {
            add_clipped_polyline(sc, {{p[0] - cap, b}, {p[0] + cap, b}}, plot, ScenePath{{}, col, 1.0f, false});
            ink.push_back({p[0], b});
          }
      }
    }
    add_clipped_polyline(sc, line, plot, ScenePath{{}, col, 1.6f, s.dashed});
    for (std::size_t k = 1; k < line.size(); ++k)  // the line's ink, every few units
      if (std::isfinite(line[k][0] + line[k][1] + line[k - 1][0] + line[k - 1][1])) {
        const int steps =
            std::clamp(int(std::hypot(line[k][0] - line[k - 1][0], line[k][1] - line[k - 1][1]) / 3), 1, 400);
        for (int m = 0; m <= steps; ++m) {
          const double t = double(m) / steps;
          ink.push_back(
              {line[k - 1][0] + t * (line[k][0] - line[k - 1][0]), line[k - 1][1] + t * (line[k][1] - line[k - 1][1])});
        }
      }
    for (std::size_t k = 0; k < line.size(); ++k) {
      const Point& p = line[k];
      if (!std::isfinite(p[0]) || !std::isfinite(p[1]) || !plot.contains(p[0], p[1])) continue;
      ink.push_back(p);
      if (s.markers) sc.items.push_back(SceneMarker{float(p[0]), float(p[1]), marker_r, col});
      if (hits && k < s.ids.size())
        hits->push_back(ChartHit{
            float(std::max(p[0] - hit_half, double(x0))), float(std::max(p[1] - hit_half, double(y0))),
            float(std::min(p[0] + hit_half, double(x1))), float(std::min(p[1] + hit_half, double(y1))), s.ids[k]});
    }
  }
  for (std::size_t r = 0; r < chart.reference_y.size(); ++r)
    if (const double c = ay.coord(chart.reference_y[r]); std::isfinite(c))
      for (float x = px0; x <= px1; x += 3) ink.push_back({x, ay.at(c)});

  add_axes(sc, f, ax, ay, xt, yt, chart.title, chart.x.label, chart.y.label);

  // The legend: in the corner of the plot that covers the least ink (as layout_curves), or right of the plot.
  const float row = fs_tick + 4;
  std::size_t covered = 0;
  Box best;
  bool place = false;
  if (!legend.entries.empty() && outside) {
    const float lx = x1 - legend.w - 2;
    best = Box{lx, py0, lx + legend.w, py0 + legend.h};
    place = best.x0 > px1 + std::max(12.0f, ref_w + 8) - 4 && best.y1 <= y1;
  } else if (!legend.entries.empty() && legend.w <= px1 - px0 - 12 && legend.h <= py1 - py0 - 12) {
    covered = SIZE_MAX;
    const float l = px0 + 6, r = px1 - 6 - legend.w, t = py0 + 6, b = py1 - 6 - legend.h;
    for (const auto& [cx, cy] : {std::pair{r, t}, std::pair{l, t}, std::pair{r, b}, std::pair{l, b}}) {
      const Box box{cx, cy, cx + legend.w, cy + legend.h};
      const Box grown{box.x0 - 3, box.y0 - 3, box.x1 + 3, box.y1 + 3};
      const std::size_t inside = std::size_t(
          std::count_if(ink.begin(), ink.end(), [&](const Point& p) { return grown.contains(p[0], p[1]); }));
      if (inside < covered) covered = inside, best = box;
    }
    place = true;
  } else if (!legend.entries.empty()) {
    covered = SIZE_MAX;  // no room inside: try outside
  }
  if (place) {
    const Box& bx = best;
    sc.items.push_back(SceneRect{
        float(bx.x0), float(bx.y0), float(bx.x1), float(bx.y1), {1, 1, 1, 0.85f}, {0.8f, 0.8f, 0.8f, 1}, 0.5f});
    float y = float(bx.y0) + 3 + row / 2;
    for (std::size_t si : legend.entries) {
      const ChartSeries& s = chart.series[si];
      const Rgba col = s.color ? *s.color : palette(si);
      const float lx = float(bx.x0) + 6;
      sc.items.push_back(ScenePath{{{lx, y}, {lx + 20, y}}, col, 1.6f, s.dashed});
      if (s.markers) sc.items.push_back(SceneMarker{lx + 10, y, marker_r, col});
      sc.items.push_back(
          SceneText{lx + 26, y + fs_tick * 0.35f, fs_tick, s.label, Anchor::start, false, false, kBlack});
      y += row;
    }
  }
  if (!any_value) add_no_data(sc, f);
  return covered;
}

}  // namespace

// The legend goes inside the plot when a corner is free of data; otherwise the plot gives up a column on its right
// for it (issue 48: a legend hid the layer-1 point of Zuo et al.'s Fig. 3).
void layout_line_chart(const LineChart& chart, float x0, float y0, float x1, float y1, Scene& sc,
                       std::vector<ChartHit>* hits) {
  Scene inside;  // the chart's own items, appended once the legend's place is settled
  std::vector<ChartHit> inside_hits;
  if (layout_line_chart_with(chart, x0, y0, x1, y1, inside, hits ? &inside_hits : nullptr, false) != 0) {
    inside.items.clear();
    inside_hits.clear();
    layout_line_chart_with(chart, x0, y0, x1, y1, inside, hits ? &inside_hits : nullptr, true);
  }
  sc.items.insert(sc.items.end(), std::make_move_iterator(inside.items.begin()),
                  std::make_move_iterator(inside.items.end()));
  if (hits) hits->insert(hits->end(), inside_hits.begin(), inside_hits.end());
}

int chart_hit(const std::vector<ChartHit>& hits, float x, float y, float radius) {
  // Nearest region first; among regions at the same distance (overlapping markers of close points), the one whose
  // centre is nearest, and of identical ones the last (drawn on top).
  int id = -1;
  float nearest = INFINITY, nearest_centre = INFINITY;
  for (const ChartHit& h : hits) {
    const float dx = std::max({h.x0 - x, 0.0f, x - h.x1}), dy = std::max({h.y0 - y, 0.0f, y - h.y1});
    const float d = std::hypot(dx, dy), centre = std::hypot(x - (h.x0 + h.x1) / 2, y - (h.y0 + h.y1) / 2);
    if (d <= radius && (d < nearest || (d == nearest && centre <= nearest_centre)))
      nearest = d, nearest_centre = centre, id = h.id;
  }
  return id;
}

bool wants_log_axis(double lo, double hi) {
  const double a = std::min(lo, hi), b = std::max(lo, hi);
  return a > 0 && std::isfinite(b) && b / a >= 20;
}

}  // namespace maskscope::gui
