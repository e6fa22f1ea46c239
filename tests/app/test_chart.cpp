// Charts (chart.hpp): contour lines by marching squares on known grids, hits that map back to their points and
// cells, log and categorical axes, and scenes whose every coordinate is finite and inside the chart's box.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "common/figure/chart.hpp"
#include "common/format.hpp"

using namespace maskscope::gui;

namespace {

using Segment = std::array<double, 4>;

// Every coordinate of every item (and hit) is finite and within [x0, x1] x [y0, y1].
bool all_inside(const Scene& sc, const std::vector<ChartHit>& hits, float x0, float y0, float x1, float y1,
                std::string& why) {
  auto ok = [&](float x, float y, const char* what) {
    if (std::isfinite(x) && std::isfinite(y) && x >= x0 - 1e-3f && x <= x1 + 1e-3f && y >= y0 - 1e-3f &&
        y <= y1 + 1e-3f)
      return true;
    why = std::string(what) + " at " + std::to_string(x) + ", " + std::to_string(y);
    return false;
  };
  for (const SceneItem& item : sc.items) {
    bool good = true;
    if (const auto* r = std::get_if<SceneRect>(&item)) good = ok(r->x0, r->y0, "rect") && ok(r->x1, r->y1, "rect");
    else if (const auto* b = std::get_if<SceneColorbar>(&item))
      good = ok(b->x0, b->y0, "colorbar") && ok(b->x1, b->y1, "colorbar");
    else if (const auto* t = std::get_if<SceneText>(&item)) good = ok(t->x, t->y, t->text.c_str());
    else if (const auto* m = std::get_if<SceneMarker>(&item)) good = ok(m->x, m->y, "marker");
    else if (const auto* p = std::get_if<ScenePath>(&item))
      for (const auto& q : p->points) good = good && ok(q[0], q[1], "path");
    else if (std::holds_alternative<SceneHeatmap>(item)) good = false, why = "unexpected heatmap";
    if (!good) return false;
  }
  for (const ChartHit& h : hits)
    if (!ok(h.x0, h.y0, "hit") || !ok(h.x1, h.y1, "hit")) return false;
  return true;
}

std::vector<const SceneText*> texts(const Scene& sc) {
  std::vector<const SceneText*> out;
  for (const SceneItem& item : sc.items)
    if (const auto* t = std::get_if<SceneText>(&item)) out.push_back(t);
  return out;
}

bool has_text(const Scene& sc, const std::string& s) {
  const auto all = texts(sc);
  return std::any_of(all.begin(), all.end(), [&](const SceneText* t) { return t->text == s; });
}

// The x axis' tick labels: the only centred, upright 9-unit texts of a chart.
std::vector<std::string> x_tick_labels(const Scene& sc) {
  std::vector<std::string> out;
  for (const SceneText* t : texts(sc))
    if (t->anchor == Anchor::middle && !t->vertical && t->size == 9.0f) out.push_back(t->text);
  return out;
}

}  // namespace

TEST_CASE("contour_segments: a linear ramp gives a straight line at the interpolated position") {
  // v = 2 * column over xs 0, 10, 30: the level 3 lies halfway between columns 1 (v 2) and 2 (v 4), at x = 20.
  const std::vector<double> xs = {0, 10, 30}, ys = {0, 1, 5};
  std::vector<double> v;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) v.push_back(2.0 * c);
  const auto segs = contour_segments(xs, ys, v, 3);
  REQUIRE(segs.size() == 2);  // one per row of squares
  std::set<double> ys_seen;
  for (const Segment& s : segs) {
    CHECK(s[0] == 20.0);
    CHECK(s[2] == 20.0);
    ys_seen.insert(s[1]), ys_seen.insert(s[3]);
  }
  CHECK(ys_seen == std::set<double>{0, 1, 5});  // the line runs the whole height
  CHECK(contour_segments(xs, ys, v, 1).front()[0] == 5.0);
  // Levels outside the values' range, or not a number, give no line.
  CHECK(contour_segments(xs, ys, v, 4.5).empty());
  CHECK(contour_segments(xs, ys, v, -1).empty());
  CHECK(contour_segments(xs, ys, v, NAN).empty());
  CHECK(contour_segments({0}, ys, {0, 1, 2}, 0.5).empty());  // one column: no squares
}

TEST_CASE("contour_segments: saddles give two segments, cut off by the mean of the corners") {
  // Rows bottom first: (0,0)=1 (0,1)=0 / (1,0)=0 (1,1)=1. The mean 0.5 >= 0.5 joins the high diagonal, so the
  // two low corners are cut off: bottom-right by (0.5, 0)-(1, 0.5), top-left by (0, 0.5)-(0.5, 1).
  const std::vector<double> xs = {0, 1}, ys = {0, 1};
  auto normal = [](const Segment& s) {
    return std::min(std::array<double, 4>{s[0], s[1], s[2], s[3]}, std::array<double, 4>{s[2], s[3], s[0], s[1]});
  };
  std::set<std::array<double, 4>> got;
  for (const Segment& s : contour_segments(xs, ys, {1, 0, 0, 1}, 0.5)) got.insert(normal(s));
  CHECK(got == std::set<std::array<double, 4>>{{0.5, 0, 1, 0.5}, {0, 0.5, 0.5, 1}});
  // Mean below the level: the high corners are cut off instead.
  got.clear();
  for (const Segment& s : contour_segments(xs, ys, {1, 0, 0, 1}, 0.6)) got.insert(normal(s));
  CHECK(got == std::set<std::array<double, 4>>{{0, 0.4, 0.4, 0}, {0.6, 1, 1, 0.6}});
  CHECK(contour_segments(xs, ys, {0, 1, 1, 0}, 0.5).size() == 2);
}

TEST_CASE("contour_segments: NaN cells cut the line") {
  // 4 columns x 3 rows, v = column, (row 1, column 1) missing: every square touching it has no segment.
  const std::vector<double> xs = {0, 1, 2, 3}, ys = {0, 1, 2};
  std::vector<double> v;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) v.push_back(r == 1 && c == 1 ? NAN : double(c));
  CHECK(contour_segments(xs, ys, v, 1.5).empty());  // both squares of column 1 touch the hole
  CHECK(contour_segments(xs, ys, v, 0.5).empty());
  CHECK(contour_segments(xs, ys, v, 2.5).size() == 2);  // column 2 is whole
}

TEST_CASE("line chart: hits map back to the points' ids at their markers; a log axis spaces 4, 16, 64 evenly") {
  LineChart ch;
  ch.title = "RP against d";
  ch.x = {"d", AxisScale::log, {}, {}, {}};
  ch.y.label = "RP";
  ch.series.push_back({"layer 1", {4, 16, 64}, {0.6, 0.7, 0.8}, {0.01, 0.02, 0.01}, {10, 11, 12}, {}, true, false});
  ch.series.push_back({"layer 2", {4, 16, 64}, {0.55, NAN, 0.9}, {}, {20, 21, 22}, {}, true, false});
  ch.reference_y = {0.5};
  Scene sc;
  sc.width = 400, sc.height = 300;
  std::vector<ChartHit> hits;
  layout_line_chart(ch, 0, 0, 400, 300, sc, &hits);
  REQUIRE(hits.size() == 5);  // the NaN point has neither marker nor hit

  std::vector<SceneMarker> markers;
  for (const SceneItem& item : sc.items)
    if (const auto* m = std::get_if<SceneMarker>(&item)) markers.push_back(*m);
  for (const ChartHit& h : hits) {
    const float cx = (h.x0 + h.x1) / 2, cy = (h.y0 + h.y1) / 2;
    CHECK(chart_hit(hits, cx, cy) == h.id);
    CHECK(std::any_of(markers.begin(), markers.end(), [&](const SceneMarker& m) {
      return std::fabs(m.x - cx) < 1e-3f && std::fabs(m.y - cy) < 1e-3f;
    }));
  }
  // Series 1's hits in order: d = 4, 16, 64 evenly spaced on the log axis; y rises with RP.
  const float x4 = (hits[0].x0 + hits[0].x1) / 2, x16 = (hits[1].x0 + hits[1].x1) / 2,
              x64 = (hits[2].x0 + hits[2].x1) / 2;
  CHECK(x16 - x4 == doctest::Approx(x64 - x16).epsilon(1e-4));
  CHECK(x16 - x4 > 50);
  CHECK(hits[0].y0 > hits[1].y0);
  CHECK(chart_hit(hits, x4, hits[0].y0 - 30) == -1);
  CHECK(chart_hit(hits, hits[0].x1 + 3, (hits[0].y0 + hits[0].y1) / 2) == 10);  // within the 4-unit radius
  CHECK(chart_hit(hits, hits[0].x1 + 3, (hits[0].y0 + hits[0].y1) / 2, 2) == -1);
  // Ticks at the data's own values, the reference line's value, the legend, the title; no "no data yet".
  const auto xl = x_tick_labels(sc);
  for (const char* d : {"4", "16", "64"}) CHECK(std::find(xl.begin(), xl.end(), d) != xl.end());
  for (const char* s : {"0.5", "layer 1", "layer 2", "RP against d", "d", "RP"}) CHECK_MESSAGE(has_text(sc, s), s);
  CHECK_FALSE(has_text(sc, "no data yet"));
}

TEST_CASE("line chart: log ticks are 1, 2, 5 x 10^k, or powers of ten over many decades") {
  auto ticks_for = [](double lo, double hi) {
    LineChart ch;
    ch.x.scale = AxisScale::log;
    ChartSeries s;
    for (int k = 0; k <= 20; ++k) {
      s.x.push_back(lo * std::pow(hi / lo, k / 20.0));
      s.y.push_back(k);
    }
    ch.series = {s};
    Scene sc;
    layout_line_chart(ch, 0, 0, 420, 280, sc);
    return x_tick_labels(sc);
  };
  const auto few = ticks_for(4, 1024);
  CHECK(few.size() >= 4);
  for (const auto& t : few) CHECK_MESSAGE((t[0] == '1' || t[0] == '2' || t[0] == '5'), t);
  CHECK(std::find(few.begin(), few.end(), "100") != few.end());
  CHECK(std::find(few.begin(), few.end(), "20") != few.end());
  const auto many = ticks_for(1e-3, 1e6);
  CHECK(many.size() >= 3);
  for (const auto& t : many) {
    const double v = std::strtod(t.c_str(), nullptr);
    CHECK_MESSAGE(std::fabs(std::log10(v) - std::round(std::log10(v))) < 1e-9, t);
  }
}

TEST_CASE("charts: categorical ticks carry the category texts; an empty chart says so") {
  LineChart ch;
  ch.x = {"norm", AxisScale::categorical, {"none", "LN", "RMSNorm"}, {}, {}};
  ch.series.push_back({"", {0, 1, 2}, {0.1, 0.2, 0.3}, {}, {}, {}, true, false});
  Scene sc;
  layout_line_chart(ch, 0, 0, 300, 200, sc);
  const auto xl = x_tick_labels(sc);
  CHECK(xl == std::vector<std::string>{"none", "LN", "RMSNorm"});

  HeatChart hc;
  hc.y = {"mask", AxisScale::categorical, {"causal", "bidirectional"}, {}, {}};
  hc.xs = {0.1, 0.2, 0.3};
  hc.ys = {0, 1};
  hc.values.assign(6, NAN);
  Scene hs;
  std::vector<ChartHit> hits;
  layout_heat_chart(hc, 0, 0, 300, 200, hs, &hits);
  CHECK(has_text(hs, "causal"));
  CHECK(has_text(hs, "bidirectional"));
  CHECK(has_text(hs, "no data yet"));
  CHECK(hits.empty());  // no ids given

  LineChart empty;
  Scene es;
  layout_line_chart(empty, 0, 0, 300, 200, es);
  CHECK(has_text(es, "no data yet"));
}

TEST_CASE("heat chart: cells reach halfway to their neighbours on a log axis, one hit per cell, NaN grey") {
  HeatChart hc;
  hc.x = {"d", AxisScale::log, {}, {}, {}};
  hc.xs = {4, 16, 64};
  hc.ys = {0.25};
  hc.values = {0.2, NAN, 0.8};
  hc.ids = {7, 8, 9};
  Scene sc;
  std::vector<ChartHit> hits;
  layout_heat_chart(hc, 0, 0, 360, 240, sc, &hits);
  REQUIRE(hits.size() == 3);
  const float w0 = hits[0].x1 - hits[0].x0, w1 = hits[1].x1 - hits[1].x0, w2 = hits[2].x1 - hits[2].x0;
  CHECK(w0 == doctest::Approx(w1).epsilon(1e-4));
  CHECK(w2 == doctest::Approx(w1).epsilon(1e-4));
  CHECK(hits[0].x1 == doctest::Approx(hits[1].x0));
  for (const ChartHit& h : hits) CHECK(chart_hit(hits, (h.x0 + h.x1) / 2, (h.y0 + h.y1) / 2) == h.id);
  // The cell rectangles: the middle one (NaN) light grey, the outer ones from the colormap's ends.
  std::vector<SceneRect> cells;
  for (const SceneItem& item : sc.items)
    if (const auto* r = std::get_if<SceneRect>(&item);
        r && r->fill.a == 1 && r->x0 >= hits[0].x0 - 1e-3f && r->y0 == hits[0].y0 && r->x1 <= hits[2].x1 + 1e-3f)
      cells.push_back(*r);
  REQUIRE(cells.size() == 3);
  CHECK(cells[1].fill.r == cells[1].fill.g);
  CHECK(cells[1].fill.r > 0.8f);
  const auto lo = colormap(ColormapId::viridis).at(0), hi = colormap(ColormapId::viridis).at(1);
  CHECK(cells[0].fill.r == lo[0]);
  CHECK(cells[2].fill.g == hi[1]);
}

TEST_CASE("chart_hit: the nearest region; of overlapping ones, the one centred nearest") {
  const std::vector<ChartHit> hits = {
      {0, 0, 8, 8, 1}, {3, 0, 11, 8, 2}, {40, 40, 50, 50, 3}, {0, 20, 8, 28, 4}, {0, 20, 8, 28, 5}};
  CHECK(chart_hit(hits, 4, 24) == 5);  // identical regions: the one drawn last, on top
  CHECK(chart_hit(hits, 4, 4) == 1);
  CHECK(chart_hit(hits, 7, 4) == 2);
  CHECK(chart_hit(hits, 37, 45) == 3);  // 3 units left of the cell
  CHECK(chart_hit(hits, 37, 45, 2) == -1);
  CHECK(chart_hit(hits, 25, 25) == -1);
  CHECK(chart_hit({}, 0, 0) == -1);
}

TEST_CASE("wants_log_axis: a range of 20x or more") {
  CHECK(wants_log_axis(4, 1024));
  CHECK(wants_log_axis(1, 20));
  CHECK_FALSE(wants_log_axis(1, 19));
  CHECK_FALSE(wants_log_axis(0, 100));
  CHECK_FALSE(wants_log_axis(-1, 100));
}

TEST_CASE("charts: random data with NaNs, gaps and empty series stay finite and inside the box") {
  std::mt19937 rng(12345);
  auto uni = [&](double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng); };
  auto pick = [&](int n) { return int(rng() % unsigned(n)); };
  auto number = [&](double a, double b) {
    switch (pick(12)) {
      case 0: return double(NAN);
      case 1: return double(INFINITY);
      case 2: return -1.0;
      default: return uni(a, b);
    }
  };
  auto axis = [&] {
    ChartAxis a;
    a.label = pick(2) ? "axis" : "";
    a.scale = AxisScale(pick(3));
    if (a.scale == AxisScale::categorical)
      for (int k = pick(6); k > 0; --k) a.categories.push_back("c" + std::to_string(k));
    if (pick(4) == 0) a.lo = uni(0.01, 1);
    if (pick(4) == 0) a.hi = uni(0.5, 5);
    return a;
  };
  for (int trial = 0; trial < 300; ++trial) {
    const float x0 = float(uni(0, 50)), y0 = float(uni(0, 50));
    const float x1 = x0 + float(uni(260, 600)), y1 = y0 + float(uni(200, 400));
    std::string why;
    LineChart ch;
    ch.title = pick(2) ? "title" : "";
    ch.note = pick(2) ? "note" : "";
    ch.x = axis(), ch.y = axis();
    for (int s = pick(5); s > 0; --s) {
      ChartSeries se;
      se.label = pick(3) ? "series " + std::to_string(s) : "";
      for (int k = pick(16); k > 0; --k) {
        se.x.push_back(number(0.001, 1000));
        se.y.push_back(number(-1, 2));
        se.se.push_back(number(0, 0.5));
        se.ids.push_back(k);
      }
      se.dashed = pick(2);
      ch.series.push_back(se);
    }
    for (int r = pick(3); r > 0; --r) ch.reference_y.push_back(number(0, 1));
    Scene sc;
    std::vector<ChartHit> hits;
    layout_line_chart(ch, x0, y0, x1, y1, sc, &hits);
    CHECK_MESSAGE(all_inside(sc, hits, x0, y0, x1, y1, why), "line chart trial ", trial, ": ", why);

    HeatChart hc;
    hc.title = pick(2) ? "title" : "";
    hc.colorbar_label = pick(2) ? "RP, layer 4" : "";
    hc.x = axis(), hc.y = axis();
    const int nx = pick(14), ny = pick(14);
    for (int k = 0; k < nx; ++k) hc.xs.push_back(pick(8) ? 4 * std::pow(2.0, k) : number(0, 10));
    for (int k = 0; k < ny; ++k) hc.ys.push_back(pick(8) ? 0.1 * k : number(0, 10));
    for (int k = 0; k < nx * ny; ++k) {
      hc.values.push_back(number(0, 1));
      hc.ids.push_back(k);
    }
    if (pick(3) == 0) hc.lo = uni(0, 0.5), hc.hi = uni(0.5, 1);
    hc.contours = {0.5, uni(0, 1), NAN};
    Scene hs;
    hits.clear();
    layout_heat_chart(hc, x0, y0, x1, y1, hs, &hits);
    CHECK_MESSAGE(all_inside(hs, hits, x0, y0, x1, y1, why), "heat chart trial ", trial, ": ", why);
  }
}

TEST_CASE("heat chart: the SVG carries the title, the colorbar label and each contour level once") {
  HeatChart hc;
  hc.title = "RP: alpha x d";
  hc.colorbar_label = "RP, layer 2";
  hc.x = {"alpha", AxisScale::linear, {}, {}, {}};
  hc.y = {"d", AxisScale::log, {}, {}, {}};
  for (int k = 0; k < 9; ++k) hc.xs.push_back(k / 8.0);
  for (int k = 0; k < 6; ++k) hc.ys.push_back(4 * std::pow(4.0, k));
  for (double d : hc.ys)
    for (double a : hc.xs) hc.values.push_back(0.3 + 0.6 * a * std::log(d) / std::log(4096.0));
  hc.contours = {0.5, 0.6};
  Scene sc;
  sc.width = 420, sc.height = 300;
  layout_heat_chart(hc, 0, 0, 420, 300, sc);
  const std::string svg = scene_to_svg(sc);
  CHECK(svg.find(">RP: alpha x d</text>") != std::string::npos);
  CHECK(svg.find(">RP, layer 2</text>") != std::string::npos);
  // Contour labels are the only bold texts besides the title; each level is written once.
  for (const char* level : {"font-weight=\"bold\">0.5</text>", "font-weight=\"bold\">0.6</text>"}) {
    const auto at = svg.find(level);
    CHECK_MESSAGE(at != std::string::npos, level);
    CHECK(svg.find(level, at + 1) == std::string::npos);
  }
  // The y ticks sit at the cell centres, labelled with the values.
  for (const char* d : {">16</text>", ">1024</text>"}) CHECK_MESSAGE(svg.find(d) != std::string::npos, d);
}
