// Significance-aware contours (issue 48 item 3): a level line is drawn only where the level is crossed by more
// than 2 SE; where the values sit within 2 SE of it, the cells are hatched and the note says so.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common/figure/chart.hpp"

using namespace maskscope::gui;

namespace {

// 6 columns x 5 rows, SE 0.01 everywhere. Rows 0-1: 0.3 up to column 2, 0.8 from column 3 (a clear crossing between
// columns 2 and 3). Rows 2-4: 0.3 up to column 1, then a band of columns 2-3 within 1 SE of 0.5 (0.495 / 0.505,
// alternating so that the plain contour crosses it several times), 0.8 from column 4.
struct Grid {
  std::vector<double> xs{0, 1, 2, 3, 4, 5}, ys{0, 1, 2, 3, 4}, values, ses;
};

Grid synthetic() {
  Grid g;
  for (std::size_t r = 0; r < g.ys.size(); ++r)
    for (std::size_t c = 0; c < g.xs.size(); ++c) {
      double v = c <= 2 ? 0.3 : 0.8;
      if (r >= 2) v = c <= 1 ? 0.3 : c >= 4 ? 0.8 : ((r + c) % 2 ? 0.495 : 0.505);
      g.values.push_back(v);
      g.ses.push_back(0.01);
    }
  return g;
}

bool segment_in(const std::array<double, 4>& s, double y_lo, double y_hi) {
  return std::min(s[1], s[3]) >= y_lo && std::max(s[1], s[3]) <= y_hi;
}

}  // namespace

TEST_CASE("a contour is drawn where the level is crossed by more than 2 SE, not through a band within 1 SE") {
  const Grid g = synthetic();
  const auto plain = contour_segments(g.xs, g.ys, g.values, 0.5);
  const auto significant = significant_contour_segments(g.xs, g.ys, g.values, g.ses, 0.5);
  // The plain contour runs through the band (rows 2-4) as well as across the clear jump (rows 0-1).
  CHECK(std::any_of(plain.begin(), plain.end(), [](const auto& s) { return segment_in(s, 2, 4); }));
  // Kept: the clear crossing between columns 2 and 3 in rows 0-1, whole; nothing among rows 2-4.
  const auto low =
      std::count_if(significant.begin(), significant.end(), [](const auto& s) { return segment_in(s, 0, 1); });
  CHECK(low == 1);
  for (const auto& s : significant) {
    CHECK(std::min(s[0], s[2]) >= 2);
    CHECK(std::max(s[0], s[2]) <= 3);
    CHECK_FALSE(segment_in(s, 2, 4));
  }
  // Every kept segment is one of the plain contour's (the rule removes lines, never moves them).
  for (const auto& s : significant) CHECK(std::find(plain.begin(), plain.end(), s) != plain.end());
  // With tiny SEs everything is significant: the same segments as without SEs.
  std::vector<double> tiny(g.ses.size(), 1e-6);
  CHECK(significant_contour_segments(g.xs, g.ys, g.values, tiny, 0.5) == plain);
  // An unknown SE (one sample) is never significant.
  std::vector<double> unknown(g.ses.size(), NAN);
  CHECK(significant_contour_segments(g.xs, g.ys, g.values, unknown, 0.5).empty());
  CHECK(within_se(0.49, 0.01, 0.5));
  CHECK_FALSE(within_se(0.47, 0.01, 0.5));
}

TEST_CASE("a heat chart with SEs hatches the cells within 2 SE of a level and says so in its note") {
  const Grid g = synthetic();
  HeatChart chart;
  chart.xs = g.xs;
  chart.ys = g.ys;
  chart.values = g.values;
  chart.contours = {0.5};
  auto layout = [&](const HeatChart& c) {
    Scene sc;
    sc.width = 600, sc.height = 400;
    layout_heat_chart(c, 0, 0, 600, 400, sc);
    return sc;
  };
  auto texts = [](const Scene& sc) {
    std::string all;
    for (const SceneItem& item : sc.items)
      if (const auto* t = std::get_if<SceneText>(&item)) all += t->text + "\n";
    return all;
  };
  auto thin_paths = [](const Scene& sc) {  // hatch lines are 0.7 wide; contours 1.2, axes 0.8
    return std::count_if(sc.items.begin(), sc.items.end(), [](const SceneItem& item) {
      const auto* p = std::get_if<ScenePath>(&item);
      return p && p->width == 0.7f;
    });
  };
  const Scene without = layout(chart);
  CHECK(thin_paths(without) == 0);
  CHECK(texts(without).find("2 SE") == std::string::npos);
  chart.ses = g.ses;
  const Scene with = layout(chart);
  CHECK(thin_paths(with) > 0);
  CHECK(texts(with).find("hatched: within 2 SE of a level") != std::string::npos);
}
