// The charts' shared parts: axis coordinates and ranges, ticks whose labels fit, clipping and segment chaining.
#include "common/figure/chart_axis.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "common/figure/scene_parts.hpp"
#include "common/format.hpp"
#include "common/ticks.hpp"

namespace maskscope::gui::chart_detail {

double AxisMap::coord(double v) const {
  if (!std::isfinite(v) || std::fabs(v) > kHuge) return NAN;
  if (scale != AxisScale::log) return v;
  return v >= 1 / kHuge ? std::log10(v) : NAN;
}

double AxisMap::value(double c) const { return scale == AxisScale::log ? std::pow(10.0, c) : c; }

void axis_range(const ChartAxis& axis, double dmin, double dmax, double pad, double& lo, double& hi) {
  const bool data = dmin <= dmax;
  if (axis.scale == AxisScale::categorical) {
    const double k = double(std::max<std::size_t>(axis.categories.size(), 1));
    lo = data ? std::min(-0.5, dmin - 0.5) : -0.5;
    hi = data ? std::max(k - 0.5, dmax + 0.5) : k - 0.5;
  } else if (!data) {
    lo = 0, hi = 1;  // a log axis: 1 to 10
  } else if (dmax > dmin) {
    lo = dmin - pad * (dmax - dmin);
    hi = dmax + pad * (dmax - dmin);
  } else {
    const double half = axis.scale == AxisScale::log ? 0.5 : dmin != 0 ? std::fabs(dmin) * 0.1 : 0.5;
    lo = dmin - half, hi = dmax + half;
  }
  const AxisMap m{axis.scale};
  if (axis.lo && std::isfinite(m.coord(*axis.lo))) lo = m.coord(*axis.lo);
  if (axis.hi && std::isfinite(m.coord(*axis.hi))) hi = m.coord(*axis.hi);
  if (!(hi > lo)) hi = lo + std::max(1.0, std::fabs(lo) * 0.1);
}

namespace {

// A tick's value: whole numbers up to a million in full (1000, 1024, not 1e+03), others compact.
std::string value_label(double v, int digits) {
  if (std::fabs(v) >= 1 && std::fabs(v) < 1e6 && v == std::round(v)) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  return compact_number(v, digits);
}

}  // namespace

std::vector<double> distinct(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }), v.end());
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::vector<Tick> axis_ticks(const AxisMap& a, const ChartAxis& axis, const std::vector<double>& centres,
                             bool horizontal, float size, int most) {
  const double eps = (a.hi - a.lo) * 1e-9;
  auto inside = [&](double c) { return c >= a.lo - eps && c <= a.hi + eps; };
  auto fits = [&](const std::vector<Tick>& t) {
    for (std::size_t k = 1; k < t.size(); ++k) {
      const double gap = std::fabs(a.at(t[k].c) - a.at(t[k - 1].c));
      const double need = horizontal
                              ? 0.5 * double(text_width(t[k].text, size) + text_width(t[k - 1].text, size)) + size
                              : 1.6 * double(size);
      if (gap < need) return false;
    }
    return true;
  };

  if (axis.scale == AxisScale::categorical) {
    std::vector<Tick> ticks;
    const int k = int(std::max<std::size_t>(axis.categories.size(), 1));
    for (int step : {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}) {
      ticks.clear();
      for (int i = 0; i < k; i += step)
        if (inside(i))
          ticks.push_back({double(i), std::size_t(i) < axis.categories.size() ? axis.categories[std::size_t(i)]
                                                                              : std::to_string(i)});
      if (fits(ticks)) break;
    }
    return ticks;
  }

  // The data's own values, when few and all inside: labelled exactly (16, 64, 256, 1024).
  if (!centres.empty() && int(centres.size()) <= most) {
    std::vector<Tick> ticks;
    for (double v : centres)
      if (const double c = a.coord(v); std::isfinite(c) && inside(c)) ticks.push_back({c, value_label(v, 4)});
    if (ticks.size() == centres.size() && fits(ticks)) return ticks;
  }

  std::vector<std::vector<Tick>> candidates;
  auto nice = [&](double lo, double hi, int target, bool log_values) {
    const auto values = nice_ticks(lo, hi, target);
    const double step = values.size() > 1 ? values[1] - values[0] : 1;
    std::vector<Tick> ticks;
    for (double v : values) {
      const double c = log_values ? std::log10(v) : v;
      if (std::isfinite(c) && inside(c)) ticks.push_back({c, tick_text(v, step)});
    }
    candidates.push_back(ticks);
  };
  if (axis.scale == AxisScale::log) {
    const double decades = a.hi - a.lo;
    auto mantissas = [&](std::vector<double> ms, int every) {
      std::vector<Tick> ticks;
      for (double e = std::floor(a.lo); e <= std::ceil(a.hi); ++e) {
        if (std::fmod(std::fabs(e), double(every)) != 0) continue;
        for (double m : ms)
          if (const double c = e + std::log10(m); inside(c)) ticks.push_back({c, value_label(m * std::pow(10, e), 3)});
      }
      candidates.push_back(ticks);
    };
    if (decades <= 0.6) nice(std::pow(10, a.lo), std::pow(10, a.hi), 4, true);
    if (decades <= 1.2) mantissas({1, 2, 3, 4, 5, 6, 7, 8, 9}, 1);
    if (decades <= 4) mantissas({1, 2, 5}, 1);
    for (int every : {1, 2, 3, 5, 10, 20, 50}) mantissas({1}, every);
  } else {
    // Of the nice steps whose labels fit, the one giving the count nearest a tick per 80 (x) or 45 (y) units.
    const double want = std::clamp(std::fabs(a.p1 - a.p0) / (horizontal ? 80 : 45), 3.0, 8.0);
    for (int t = 12; t >= 2; --t) nice(a.lo, a.hi, t, false);
    std::stable_sort(candidates.begin(), candidates.end(), [&](const auto& p, const auto& q) {
      const double dp = std::fabs(double(p.size()) - want), dq = std::fabs(double(q.size()) - want);
      return dp != dq ? dp < dq : p.size() < q.size();
    });
  }
  for (const auto& t : candidates)
    if (t.size() >= 2 && fits(t)) return t;
  // Nothing fits with two ticks: the candidate with the fewest (at least one).
  std::vector<Tick> best;
  for (const auto& t : candidates)
    if (!t.empty() && (best.empty() || t.size() < best.size())) best = t;
  return best;
}

ChartFrame frame_rows(float x0, float y0, float x1, float y1, const std::string& title, bool x_label,
                      const std::string& note, float top_room) {
  ChartFrame f;
  f.x0 = x0, f.y0 = y0, f.x1 = x1, f.y1 = y1;
  const float room = std::max(x1 - x0 - 8, 20.0f);
  if (!title.empty())
    f.title_size = std::clamp(kTitleSize * room / text_width(title, kTitleSize, true), 8.0f, kTitleSize);
  // The note, word by word, in lines that fit the box.
  std::string line;
  for (std::size_t at = 0; at < note.size();) {
    const std::size_t space = std::min(note.find(' ', at), note.size());
    const std::string word = note.substr(at, space - at);
    at = space + 1;
    if (!line.empty() && text_width(line + " " + word, kNoteSize) > room) f.note.push_back(line), line.clear();
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) f.note.push_back(line);
  f.py0 = std::max(y0 + (title.empty() ? 8 : 6 + f.title_size + 10), y0 + top_room);
  f.py1 = y1 - 4 - (kTickSize + 6) - (x_label ? kLabelSize + 5 : 0) - float(f.note.size()) * (kNoteSize + 3) -
          (f.note.empty() ? 0 : 1);
  f.py1 = std::max(f.py1, f.py0 + 10);
  return f;
}

void add_axes(Scene& sc, const ChartFrame& f, const AxisMap& ax, const AxisMap& ay, const std::vector<Tick>& xt,
              const std::vector<Tick>& yt, const std::string& title, const std::string& x_label,
              const std::string& y_label) {
  sc.items.push_back(SceneRect{f.px0, f.py0, f.px1, f.py1, {0, 0, 0, 0}, kBlack, 0.8f});
  for (const Tick& t : yt) {
    const float y = float(ay.at(t.c));
    sc.items.push_back(ScenePath{{{f.px0 - 3, y}, {f.px0, y}}, kBlack, 0.8f, false});
    sc.items.push_back(
        SceneText{f.px0 - 5, y + kTickSize * 0.35f, kTickSize, t.text, Anchor::end, false, false, kBlack});
  }
  for (const Tick& t : xt) {
    const float x = float(ax.at(t.c));
    sc.items.push_back(ScenePath{{{x, f.py1}, {x, f.py1 + 3}}, kBlack, 0.8f, false});
    sc.items.push_back(SceneText{x, f.py1 + 4 + kTickSize, kTickSize, t.text, Anchor::middle, false, false, kBlack});
  }
  float below = f.py1 + 4 + kTickSize;
  if (!x_label.empty()) {
    below += kLabelSize + 5;
    sc.items.push_back(
        SceneText{(f.px0 + f.px1) / 2, below, kLabelSize, x_label, Anchor::middle, false, false, kBlack});
  }
  if (!y_label.empty())
    sc.items.push_back(SceneText{f.x0 + 3 + kLabelSize, (f.py0 + f.py1) / 2, kLabelSize, y_label, Anchor::middle, true,
                                 false, kBlack});
  below += 1;
  for (const std::string& line : f.note) {
    below += kNoteSize + 3;
    sc.items.push_back(SceneText{(f.x0 + f.x1) / 2, below, kNoteSize, line, Anchor::middle, false, false, kGrey});
  }
  if (!title.empty()) {
    const bool over_plot = text_width(title, f.title_size, true) <= f.px1 - f.px0;
    sc.items.push_back(SceneText{over_plot ? (f.px0 + f.px1) / 2 : (f.x0 + f.x1) / 2, f.y0 + 6 + f.title_size,
                                 f.title_size, title, Anchor::middle, false, true, kBlack});
  }
}

void add_no_data(Scene& sc, const ChartFrame& f) {
  const std::string text = "no data yet";
  const float x = (f.px0 + f.px1) / 2, y = (f.py0 + f.py1) / 2, w = text_width(text, kLabelSize) / 2 + 4;
  sc.items.push_back(SceneRect{std::max(x - w, f.px0),
                               std::max(y - kLabelSize * 0.8f, f.py0),
                               std::min(x + w, f.px1),
                               std::min(y + kLabelSize * 0.8f, f.py1),
                               {1, 1, 1, 1},
                               {},
                               0});
  sc.items.push_back(SceneText{x, y + kLabelSize * 0.35f, kLabelSize, text, Anchor::middle, false, false, kGrey});
}

namespace {

// Liang-Barsky: clips the segment a-b to `box`; false when nothing of it is inside.
bool clip_segment(Point& a, Point& b, const Box& box, bool& cut_a, bool& cut_b) {
  double t0 = 0, t1 = 1;
  const double dx = b[0] - a[0], dy = b[1] - a[1];
  const double p[4] = {-dx, dx, -dy, dy};
  const double q[4] = {a[0] - box.x0, box.x1 - a[0], a[1] - box.y0, box.y1 - a[1]};
  for (int k = 0; k < 4; ++k) {
    if (p[k] == 0) {
      if (q[k] < 0) return false;
      continue;
    }
    const double r = q[k] / p[k];
    if (p[k] < 0) t0 = std::max(t0, r);
    else t1 = std::min(t1, r);
    if (t0 > t1) return false;
  }
  cut_a = t0 > 0;
  cut_b = t1 < 1;
  const Point a0 = a;
  if (cut_a) a = {a0[0] + t0 * dx, a0[1] + t0 * dy};
  if (cut_b) b = {a0[0] + t1 * dx, a0[1] + t1 * dy};
  return true;
}

}  // namespace

void add_clipped_polyline(Scene& sc, const std::vector<Point>& pts, const Box& box, const ScenePath& style) {
  std::vector<std::array<float, 2>> run;
  auto flush = [&] {
    if (run.size() >= 2) {
      ScenePath p = style;
      p.points = std::move(run);
      sc.items.push_back(std::move(p));
    }
    run.clear();
  };
  auto to_float = [&](const Point& q) {
    return std::array<float, 2>{float(std::clamp(q[0], box.x0, box.x1)), float(std::clamp(q[1], box.y0, box.y1))};
  };
  for (std::size_t k = 1; k < pts.size(); ++k) {
    Point a = pts[k - 1], b = pts[k];
    bool cut_a = false, cut_b = false;
    const bool finite = std::isfinite(a[0]) && std::isfinite(a[1]) && std::isfinite(b[0]) && std::isfinite(b[1]);
    if (!finite || !clip_segment(a, b, box, cut_a, cut_b)) {
      flush();
      continue;
    }
    if (run.empty() || cut_a) {
      flush();
      run.push_back(to_float(a));
    }
    run.push_back(to_float(b));
    if (cut_b) flush();
  }
  flush();
}

std::vector<std::vector<Point>> chain_segments(const std::vector<std::array<double, 4>>& segments) {
  std::map<Point, std::vector<std::size_t>> at;  // end point -> the segments that end there
  for (std::size_t s = 0; s < segments.size(); ++s) {
    at[{segments[s][0], segments[s][1]}].push_back(s);
    at[{segments[s][2], segments[s][3]}].push_back(s);
  }
  std::vector<bool> used(segments.size(), false);
  // The unused segment at `p` and its other end, if any.
  auto next = [&](const Point& p, Point& other) {
    for (std::size_t s : at[p]) {
      if (used[s]) continue;
      used[s] = true;
      const Point a{segments[s][0], segments[s][1]};
      other = a == p ? Point{segments[s][2], segments[s][3]} : a;
      return true;
    }
    return false;
  };
  std::vector<std::vector<Point>> lines;
  for (std::size_t s = 0; s < segments.size(); ++s) {
    if (used[s]) continue;
    used[s] = true;
    std::vector<Point> tail{{segments[s][0], segments[s][1]}, {segments[s][2], segments[s][3]}}, head;
    Point q;
    while (next(tail.back(), q)) tail.push_back(q);
    head.push_back(tail.front());
    while (next(head.back(), q)) head.push_back(q);
    std::vector<Point> line(head.rbegin(), head.rend());
    line.insert(line.end(), tail.begin() + 1, tail.end());
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace maskscope::gui::chart_detail
