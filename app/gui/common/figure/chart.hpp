// Charts laid out into a Scene (figure_render.hpp), so the window, SVG and PNG draw the same picture: a line
// chart (y against x with +-1 SE bars, linear, log or categorical axes, reference lines, a legend) and a heat
// chart over a grid of x by y values (a labelled colorbar and contour lines at given levels). The Sweep tab and
// the Figure tab's line kinds (metric against layer, norms against position, dR^2 against query bin) use them.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "common/colormap.hpp"
#include "common/figure/figure_render.hpp"

namespace maskscope::gui {

enum class AxisScale { linear, log, categorical };

struct ChartAxis {
  std::string label;
  AxisScale scale = AxisScale::linear;
  // categorical: the tick texts of the values 0, 1, ..., k-1 (a series' x or a heat chart's xs are indices).
  std::vector<std::string> categories;
  std::optional<double> lo, hi;  // a fixed range (e.g. 0..1 for RP); otherwise from the data (+ padding)
};

struct ChartSeries {
  std::string label;             // in the legend; empty: not in the legend
  std::vector<double> x, y, se;  // se may be empty (no bars); non-finite y (or x <= 0 on a log axis): a gap in
                                 // the line, no marker; a fixed axis range clips lines and bars, drops markers
  std::vector<int> ids;          // per point, what a hit returns (empty: no hits for this series)
  std::optional<Rgba> color;     // default: series_color(index of the series)
  bool markers = true;
  bool dashed = false;
};

struct LineChart {
  std::string title;  // above the plot (may be empty)
  ChartAxis x, y;
  std::vector<ChartSeries> series;
  std::vector<double> reference_y;  // dashed horizontal lines (e.g. RP 0.5: no position bias), value labelled at the
                                    // right; a y range from the data reaches them
  std::string note;                 // small grey text under the plot (e.g. "common random numbers ..."), wrapped
};

struct HeatChart {
  std::string title;
  ChartAxis x, y;
  // Increasing cell centres (categorical: 0..k-1); cells reach halfway to their neighbours in the axis' coordinate
  // (log10 on a log axis), the outer ones as far out as in, a single one 1 wide. A log axis with a value <= 0 is
  // drawn linear.
  std::vector<double> xs, ys;
  std::vector<double> values;  // ys.size() rows of xs.size() values, row 0 = ys[0] at the bottom; NaN: no data
  std::vector<int> ids;        // per cell, what a hit returns (empty: no hits)
  std::string colorbar_label;  // e.g. "RP, layer 4"
  ColormapId colormap = ColormapId::viridis;
  std::optional<double> lo, hi;  // colour range (values beyond take the end colours); otherwise the values' range
  // Levels: lines where the interpolated values cross them, each labelled once and marked on the colorbar; none
  // when an axis is categorical (nothing lies between two categories).
  std::vector<double> contours;
  // Per cell, the values' standard errors (as `values`; empty: not known, every contour drawn in full). Given, a
  // contour is drawn only where its level is crossed by more than 2 SE (significant_contour_segments), the cells
  // within 2 SE of a level are hatched, and the note says so (issue 48: a line through noise reads as a boundary).
  std::vector<double> ses;
  std::string note;
};

// A region of the scene (scene units) and the id of the point or cell it shows.
struct ChartHit {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  int id = -1;
};

// Lays the chart out into `scene` within the box [x0, x1] x [y0, y1] (title, axes, labels and legend or
// colorbar included), and appends one hit per point (a few units around its marker) or per cell to `hits`
// when it is given. A chart with no finite value still draws its axes and says "no data yet". Every coordinate of
// the items and hits is finite and inside the box; the scene's size is the caller's. Axis ticks: the categories; the
// data's own values when few (a heat chart's cell centres, at most 12); else 1, 2, 5 x 10^k (or powers of ten) on
// a log axis, nice ticks on a linear one.
void layout_line_chart(const LineChart& chart, float x0, float y0, float x1, float y1, Scene& scene,
                       std::vector<ChartHit>* hits = nullptr);
void layout_heat_chart(const HeatChart& chart, float x0, float y0, float x1, float y1, Scene& scene,
                       std::vector<ChartHit>* hits = nullptr);

// The id of the hit nearest (x, y) within `radius` scene units of its region (0 inside it), or -1. Of regions that
// contain the point (overlapping markers), the one whose centre is nearest; of identical ones the last (on top).
int chart_hit(const std::vector<ChartHit>& hits, float x, float y, float radius = 4);

// Whether values over [lo, hi] (all > 0) ask for a log axis: hi / lo >= 20.
bool wants_log_axis(double lo, double hi);

// Contour segments of `values` (rows of xs.size(), as HeatChart) at `level` by marching squares over the cell
// centres, linear interpolation along cell edges, as {x0, y0, x1, y1} in the coordinates of xs and ys (the
// heat chart passes log10 of a log axis' values, so lines are straight where the picture's axis is); NaN cells
// cut the line. A saddle (diagonal corners on the same side) joins the pair on the side of the corners' mean.
std::vector<std::array<double, 4>> contour_segments(const std::vector<double>& xs, const std::vector<double>& ys,
                                                    const std::vector<double>& values, double level);
// The segments of contour_segments in the grid squares where the level is crossed by more than `k` standard errors:
// one corner above level + k SE and another below level - k SE (`ses` as `values`; a non-finite SE is never
// significant). A square whose corners are within k SE of the level on one side gives no line: the data cannot
// tell on which side of it the level lies.
std::vector<std::array<double, 4>> significant_contour_segments(const std::vector<double>& xs,
                                                                const std::vector<double>& ys,
                                                                const std::vector<double>& values,
                                                                const std::vector<double>& ses, double level,
                                                                double k = 2);
// Whether a value with standard error `se` is within k SE of `level` (a non-finite SE counts as within).
bool within_se(double value, double se, double level, double k = 2);

}  // namespace maskscope::gui
