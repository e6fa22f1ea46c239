// The charts' shared parts (internal to chart*.cpp): an axis mapping values to scene coordinates on a linear,
// log10 or categorical scale, tick choice whose labels fit (text_width: figure_render.hpp), and clipping to the plot.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "common/figure/chart.hpp"

namespace maskscope::gui::chart_detail {

// Values beyond this magnitude count as non-finite: their scene coordinates would overflow a float.
inline constexpr double kHuge = 1e30;

struct AxisMap {
  AxisScale scale = AxisScale::linear;
  double lo = 0, hi = 1;  // the range in axis coordinates (log10 of the values on a log axis)
  double p0 = 0, p1 = 1;  // scene coordinates of lo and hi (p1 < p0 on a y axis: y grows downwards)
  // The axis coordinate of value v: log10(v) on a log axis; NaN where v has none (v <= 0 on a log axis, non-finite,
  // or beyond kHuge).
  double coord(double v) const;
  // The scene coordinate of axis coordinate c (a double: a far outside c must be clipped before it becomes a float).
  double at(double c) const { return p0 + (c - lo) / (hi - lo) * (p1 - p0); }
  double value(double c) const;  // inverse of coord
};

struct Tick {
  double c = 0;  // axis coordinate
  std::string text;
};

// The range of an axis in axis coordinates: the fixed ends of `axis`, the rest from [dmin, dmax] (finite axis
// coordinates of the data; dmin > dmax when there is none) padded by `pad` of the span on each side. A categorical
// axis spans [-0.5, k - 0.5]. Always finite with hi > lo.
void axis_range(const ChartAxis& axis, double dmin, double dmax, double pad, double& lo, double& hi);

// Ticks of `a` whose labels do not collide, at most `most` of them: the categories (every one, or every 2nd, 5th,
// ...); else `centres` (the data's distinct values, if at most 12: 16, 64, 256, 1024 read better than 20, 50,
// 100, ...); else on a log axis 1, 2, 5 x 10^k or powers of ten; else nice ticks.
std::vector<Tick> axis_ticks(const AxisMap& a, const ChartAxis& axis, const std::vector<double>& centres,
                             bool horizontal, float size, int most);

// The distinct finite values of `v` in increasing order (exact duplicates merged).
std::vector<double> distinct(std::vector<double> v);

inline constexpr float kTitleSize = 13, kLabelSize = 11, kTickSize = 9, kNoteSize = 8;

// A chart's box and the plot inside it.
struct ChartFrame {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;      // the chart's box
  float px0 = 0, py0 = 0, px1 = 0, py1 = 0;  // the plot (px0, px1 are the caller's, once it knows its margins)
  float title_size = kTitleSize;             // shrunk so that a long title fits the box
  std::vector<std::string> note;             // the note's lines, wrapped to the box
};

// The rows of a chart in its box: title, plot, tick labels, x label, note; at least `top_room` above the plot.
ChartFrame frame_rows(float x0, float y0, float x1, float y1, const std::string& title, bool x_label,
                      const std::string& note, float top_room);

// The plot's outline, ticks with their labels, the axis labels, the title and the note.
void add_axes(Scene& sc, const ChartFrame& f, const AxisMap& ax, const AxisMap& ay, const std::vector<Tick>& xt,
              const std::vector<Tick>& yt, const std::string& title, const std::string& x_label,
              const std::string& y_label);

// "no data yet" in the middle of the plot, on a patch of page that hides the lines beneath.
void add_no_data(Scene& sc, const ChartFrame& f);

using Point = std::array<double, 2>;
struct Box {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  bool contains(double x, double y) const { return x >= x0 && x <= x1 && y >= y0 && y <= y1; }
};

// Appends the parts of the polyline `pts` (scene coordinates, possibly far outside) inside `box` as paths styled as
// `style`; non-finite points break the line.
void add_clipped_polyline(Scene& sc, const std::vector<Point>& pts, const Box& box, const ScenePath& style);

// Joins segments {x0, y0, x1, y1} that share exact end points into polylines, deterministically.
std::vector<std::vector<Point>> chain_segments(const std::vector<std::array<double, 4>>& segments);

// Black, or white where the colormap at t (0..1) is dark (viridis below about 0.35): a contour line that reads.
Rgba contour_color(const Colormap& cm, double t);

// Draws the contour lines of `values` (grid over the axis coordinates cx, cy) at `levels` into `plot`, each level
// written once near the middle of its longest line, away from the labels of the levels before it. With `ses` (as
// `values`), only where a level is crossed by more than 2 SE (significant_contour_segments).
void add_contours(Scene& sc, const std::vector<double>& cx, const std::vector<double>& cy,
                  const std::vector<double>& values, const std::vector<double>& ses, const std::vector<double>& levels,
                  const AxisMap& ax, const AxisMap& ay, const Box& plot, const Colormap& cm, double lo, double hi,
                  float font);

}  // namespace maskscope::gui::chart_detail
