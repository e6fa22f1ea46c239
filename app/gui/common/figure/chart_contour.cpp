// Contour lines of a heat chart: marching squares over the cell centres, and the lines drawn in black or white
// (whichever reads on the colormap at the level) with the level written once on the longest line.
#include <algorithm>
#include <cmath>

#include "common/figure/chart.hpp"
#include "common/figure/chart_axis.hpp"
#include "common/format.hpp"

namespace maskscope::gui {

namespace {

// Marching squares over the squares `keep(r, c)` accepts (r, c: the square's bottom-left grid point).
template <typename Keep>
std::vector<std::array<double, 4>> squares_segments(const std::vector<double>& xs, const std::vector<double>& ys,
                                                    const std::vector<double>& values, double level, Keep keep) {
  std::vector<std::array<double, 4>> out;
  const std::size_t nx = xs.size(), ny = ys.size();
  if (nx < 2 || ny < 2 || values.size() < nx * ny || !std::isfinite(level)) return out;
  auto v = [&](std::size_t r, std::size_t c) { return values[r * nx + c]; };
  // The crossing on the edge from grid point a to grid point b, a always the lower index: the two cells that share
  // an edge compute the same bits, so their segments meet exactly and chain into one line.
  auto cross = [&](double pa, double va, double pb, double vb) { return pa + (level - va) / (vb - va) * (pb - pa); };
  for (std::size_t r = 0; r + 1 < ny; ++r)
    for (std::size_t c = 0; c + 1 < nx; ++c) {
      // Corners counter-clockwise from the bottom left: (r, c), (r, c + 1), (r + 1, c + 1), (r + 1, c).
      const double corner[4] = {v(r, c), v(r, c + 1), v(r + 1, c + 1), v(r + 1, c)};
      if (!std::all_of(corner, corner + 4, [](double x) { return std::isfinite(x); })) continue;  // NaN cuts
      if (!keep(r, c)) continue;
      bool up[4];
      for (int k = 0; k < 4; ++k) up[k] = corner[k] >= level;
      // Edge k runs from corner k to corner k + 1: bottom, right, top, left.
      std::array<double, 2> at[4] = {
          {cross(xs[c], corner[0], xs[c + 1], corner[1]), ys[r]},
          {xs[c + 1], cross(ys[r], corner[1], ys[r + 1], corner[2])},
          {cross(xs[c], corner[3], xs[c + 1], corner[2]), ys[r + 1]},
          {xs[c], cross(ys[r], corner[0], ys[r + 1], corner[3])},
      };
      auto add = [&](int e0, int e1) {
        if (at[e0] != at[e1]) out.push_back({at[e0][0], at[e0][1], at[e1][0], at[e1][1]});
      };
      int crossed[4], n = 0;
      for (int k = 0; k < 4; ++k)
        if (up[k] != up[(k + 1) % 4]) crossed[n++] = k;
      if (n == 2) {
        add(crossed[0], crossed[1]);
      } else if (n == 4) {
        // Saddle: the mean of the corners decides which diagonal pair is joined through the middle; the other pair's
        // corners are cut off, each by the segment between its two edges (corner k touches edges k - 1 and k).
        const bool centre_up = (corner[0] + corner[1] + corner[2] + corner[3]) / 4 >= level;
        if (up[0] != centre_up) add(3, 0), add(1, 2);  // corners 0 and 2 cut off
        else add(0, 1), add(2, 3);                     // corners 1 and 3 cut off
      }
    }
  return out;
}

}  // namespace

std::vector<std::array<double, 4>> contour_segments(const std::vector<double>& xs, const std::vector<double>& ys,
                                                    const std::vector<double>& values, double level) {
  return squares_segments(xs, ys, values, level, [](std::size_t, std::size_t) { return true; });
}

bool within_se(double value, double se, double level, double k) {
  return !std::isfinite(se) || std::fabs(value - level) <= k * std::fabs(se);
}

std::vector<std::array<double, 4>> significant_contour_segments(const std::vector<double>& xs,
                                                                const std::vector<double>& ys,
                                                                const std::vector<double>& values,
                                                                const std::vector<double>& ses, double level,
                                                                double k) {
  const std::size_t nx = xs.size();
  if (ses.size() < nx * ys.size()) return {};
  return squares_segments(xs, ys, values, level, [&](std::size_t r, std::size_t c) {
    bool above = false, below = false;
    for (const std::size_t g : {r * nx + c, r * nx + c + 1, (r + 1) * nx + c, (r + 1) * nx + c + 1}) {
      if (within_se(values[g], ses[g], level, k)) continue;
      (values[g] > level ? above : below) = true;
    }
    return above && below;
  });
}

namespace chart_detail {

Rgba contour_color(const Colormap& cm, double t) {
  const auto c = cm.at(float(std::clamp(t, 0.0, 1.0)));
  const float luminance = 0.2126f * c[0] + 0.7152f * c[1] + 0.0722f * c[2];
  return luminance < 0.4f ? Rgba{1, 1, 1, 1} : Rgba{0, 0, 0, 1};
}

void add_contours(Scene& sc, const std::vector<double>& cx, const std::vector<double>& cy,
                  const std::vector<double>& values, const std::vector<double>& ses, const std::vector<double>& levels,
                  const AxisMap& ax, const AxisMap& ay, const Box& plot, const Colormap& cm, double lo, double hi,
                  float font) {
  std::vector<Box> labels;  // placed so far, so that close levels' labels do not overlap
  for (double level : levels) {
    if (!std::isfinite(level)) continue;
    std::vector<std::array<double, 4>> segs = ses.empty() ? contour_segments(cx, cy, values, level)
                                                          : significant_contour_segments(cx, cy, values, ses, level);
    for (auto& s : segs) s = {ax.at(s[0]), ay.at(s[1]), ax.at(s[2]), ay.at(s[3])};
    const double t = (level - lo) / (hi - lo);
    const Rgba col = contour_color(cm, t);
    const auto lines = chain_segments(segs);
    std::size_t longest = 0;
    double longest_len = -1;
    for (std::size_t k = 0; k < lines.size(); ++k) {
      add_clipped_polyline(sc, lines[k], plot, ScenePath{{}, col, 1.2f, false});
      double len = 0;
      for (std::size_t m = 1; m < lines[k].size(); ++m)
        len += std::hypot(lines[k][m][0] - lines[k][m - 1][0], lines[k][m][1] - lines[k][m - 1][1]);
      if (len > longest_len) longest_len = len, longest = k;
    }
    if (lines.empty()) continue;
    // The label: on the longest line near its middle (or further along when that spot is taken), on a patch of the
    // level's own colour that hides the line beneath, as matplotlib's inline contour labels.
    const std::string text = compact_number(level, 3);
    const double w = double(text_width(text, font, true)) + 4, h = double(font) * 1.25;
    const auto& line = lines[longest];
    for (double f : {0.5, 0.35, 0.65, 0.2, 0.8, 0.1, 0.9}) {
      double goal = f * longest_len, run = 0;
      Point p = line.front();
      for (std::size_t m = 1; m < line.size(); ++m) {
        const double seg = std::hypot(line[m][0] - line[m - 1][0], line[m][1] - line[m - 1][1]);
        if (run + seg >= goal && seg > 0) {
          const double u = (goal - run) / seg;
          p = {line[m - 1][0] + u * (line[m][0] - line[m - 1][0]), line[m - 1][1] + u * (line[m][1] - line[m - 1][1])};
          break;
        }
        run += seg;
        p = line[m];
      }
      // Moved inside the plot when the line runs along its edge.
      p = {std::clamp(p[0], plot.x0 + w / 2, std::max(plot.x0 + w / 2, plot.x1 - w / 2)),
           std::clamp(p[1], plot.y0 + h / 2, std::max(plot.y0 + h / 2, plot.y1 - h / 2))};
      const Box b{p[0] - w / 2, p[1] - h / 2, p[0] + w / 2, p[1] + h / 2};
      const bool free = std::none_of(labels.begin(), labels.end(), [&](const Box& o) {
        return b.x0 < o.x1 && o.x0 < b.x1 && b.y0 < o.y1 && o.y0 < b.y1;
      });
      if (!free || b.x1 > plot.x1 || b.y1 > plot.y1) continue;  // taken, or a plot too small for it
      const auto c = cm.at(float(std::clamp(t, 0.0, 1.0)));
      sc.items.push_back(SceneRect{float(b.x0), float(b.y0), float(b.x1), float(b.y1), {c[0], c[1], c[2], 1}, {}, 0});
      sc.items.push_back(
          SceneText{float(p[0]), float(p[1] + font * 0.36), font, text, Anchor::middle, false, true, col});
      labels.push_back(b);
      break;
    }
  }
}

}  // namespace chart_detail

}  // namespace maskscope::gui
