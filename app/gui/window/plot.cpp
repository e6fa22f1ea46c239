// The plotting widget: layout, ticks, series, legend and hover.
#include "window/plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "common/format.hpp"
#include "common/ticks.hpp"

namespace maskscope::gui {

namespace {

void dashed_line(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 col, float thickness) {
  const float len = std::hypot(b.x - a.x, b.y - a.y);
  const float dash = 6.0f;
  for (float s = 0; s < len; s += 2 * dash) {
    const float e = std::min(len, s + dash);
    dl->AddLine(ImVec2(a.x + (b.x - a.x) * s / len, a.y + (b.y - a.y) * s / len),
                ImVec2(a.x + (b.x - a.x) * e / len, a.y + (b.y - a.y) * e / len), col, thickness);
  }
}

}  // namespace

void plot(const char* id, ImVec2 size, const PlotSpec& spec, const std::vector<PlotSeries>& series) {
  ImGui::PushID(id);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (size.x <= 0) size.x = avail.x;
  if (size.y <= 0) size.y = avail.y;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("##plot", size);
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 grid_col = ImGui::GetColorU32(ImGuiCol_Border);
  const float fh = ImGui::GetFontSize();

  // Data bounds, error bars included.
  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y0 = x0, y1 = -x0;
  for (const auto& s : series)
    for (std::size_t k = 0; k < s.y.size() && k < s.x.size(); ++k) {
      const double e = k < s.err.size() && std::isfinite(s.err[k]) ? s.err[k] : 0.0;
      if (!std::isfinite(s.x[k]) || !std::isfinite(s.y[k])) continue;
      x0 = std::min(x0, s.x[k]);
      x1 = std::max(x1, s.x[k]);
      y0 = std::min(y0, s.y[k] - e);
      y1 = std::max(y1, s.y[k] + e);
    }
  if (!std::isfinite(x0)) {
    x0 = 0;
    x1 = 1;
    y0 = 0;
    y1 = 1;
  }
  if (std::isfinite(spec.y_include_lo)) y0 = std::min(y0, spec.y_include_lo);
  if (std::isfinite(spec.y_include_hi)) y1 = std::max(y1, spec.y_include_hi);
  if (x1 - x0 < 1e-12) {
    x0 -= 0.5;
    x1 += 0.5;
  }
  if (y1 - y0 < 1e-12 * std::max(1.0, std::fabs(y0))) {
    y0 -= 0.5 * std::max(1e-6, std::fabs(y0) * 0.01);
    y1 += 0.5 * std::max(1e-6, std::fabs(y1) * 0.01);
  }
  const double pad = 0.06 * (y1 - y0);
  y0 -= pad;
  y1 += pad;
  const double xpad = 0.03 * (x1 - x0);
  x0 -= xpad;
  x1 += xpad;

  auto y_ticks = nice_ticks(y0, y1, std::max(3, int(size.y / (fh * 3))));
  auto x_ticks = nice_ticks(x0, x1, std::max(3, int(size.x / (fh * 5))));
  if (spec.integer_x) {
    std::vector<double> ints;
    for (double t : x_ticks)
      if (std::fabs(t - std::round(t)) < 1e-9) ints.push_back(t);
    if (ints.empty())
      for (double t = std::ceil(x0); t <= x1; t += 1) ints.push_back(t);
    x_ticks = ints;
  }
  float label_w = 0;
  const double ystep = y_ticks.size() > 1 ? y_ticks[1] - y_ticks[0] : 1.0;
  const double xstep = x_ticks.size() > 1 ? x_ticks[1] - x_ticks[0] : 1.0;
  for (double t : y_ticks) label_w = std::max(label_w, ImGui::CalcTextSize(tick_text(t, ystep).c_str()).x);

  const float title_h = spec.title.empty() ? 0 : fh * 1.4f;
  const float ylabel_h = spec.y_label.empty() ? 0 : fh * 1.3f;  // the y label sits above the axis, horizontal
  const ImVec2 p0(origin.x + fh * 0.5f + label_w + 8, origin.y + title_h + ylabel_h + fh * 0.5f);
  ImVec2 p1(origin.x + size.x - fh * 0.5f, origin.y + size.y - fh * 2.8f);
  if (p1.x - p0.x < 20 || p1.y - p0.y < 20) {
    ImGui::PopID();
    return;
  }
  auto to_px = [&](double x, double y) {
    return ImVec2(float(p0.x + (x - x0) / (x1 - x0) * (p1.x - p0.x)),
                  float(p1.y - (y - y0) / (y1 - y0) * (p1.y - p0.y)));
  };

  // The legend: in the corner of the plot that covers no data (points, and the lines between them every few
  // pixels), else in a column right of the plot, which gives up that width (issue 48: it hid Eq. 42's curves).
  const bool legend = spec.legend && !series.empty();
  float legend_w = 0;
  for (const auto& s : series) legend_w = std::max(legend_w, ImGui::CalcTextSize(s.label.c_str()).x);
  const ImVec2 box(legend_w + fh * 2.6f, fh * 1.25f * float(series.size()) + 6);
  auto ink_in = [&](ImVec2 c) {
    std::size_t inside = 0;
    auto count = [&](ImVec2 q) {
      inside += q.x >= c.x - 4 && q.x <= c.x + box.x + 4 && q.y >= c.y - 4 && q.y <= c.y + box.y + 4;
    };
    for (const auto& s : series) {
      bool have_prev = false;
      ImVec2 prev;
      for (std::size_t k = 0; k < s.y.size() && k < s.x.size(); ++k) {
        if (!std::isfinite(s.y[k])) {
          have_prev = false;
          continue;
        }
        const ImVec2 q = to_px(s.x[k], s.y[k]);
        count(q);
        if (have_prev) {
          const int steps = std::clamp(int(std::hypot(q.x - prev.x, q.y - prev.y) / 3), 1, 400);
          for (int m = 1; m < steps; ++m) {
            const float t = float(m) / float(steps);
            count(ImVec2(prev.x + t * (q.x - prev.x), prev.y + t * (q.y - prev.y)));
          }
        }
        prev = q;
        have_prev = true;
      }
    }
    return inside;
  };
  ImVec2 l0(p0.x + 8, p0.y + 8);
  if (legend) {
    std::size_t fewest = std::numeric_limits<std::size_t>::max();
    for (const ImVec2 c : {ImVec2(p0.x + 8, p0.y + 8), ImVec2(p1.x - 8 - box.x, p1.y - 8 - box.y),
                           ImVec2(p1.x - 8 - box.x, p0.y + 8), ImVec2(p0.x + 8, p1.y - 8 - box.y)})
      if (const std::size_t inside = ink_in(c); inside < fewest) fewest = inside, l0 = c;
    if (fewest > 0 && p1.x - box.x - fh - p0.x > fh * 12) {
      p1.x -= box.x + fh;
      l0 = ImVec2(p1.x + fh * 0.6f, p0.y);
    }
  }

  if (!spec.title.empty()) {
    const ImVec2 ts = ImGui::CalcTextSize(spec.title.c_str());
    // Over the plot, but never beyond the widget's left edge (a legend column narrows the plot).
    const float tx = std::clamp((p0.x + p1.x - ts.x) * 0.5f, origin.x, std::max(origin.x, origin.x + size.x - ts.x));
    dl->AddText(ImVec2(tx, origin.y), text_col, spec.title.c_str());
  }
  dl->AddRectFilled(p0, p1, ImGui::GetColorU32(ImGuiCol_FrameBg));
  for (double t : y_ticks) {
    const ImVec2 q = to_px(x0, t);
    dl->AddLine(ImVec2(p0.x, q.y), ImVec2(p1.x, q.y), grid_col, 1.0f);
    const std::string s = tick_text(t, ystep);
    const ImVec2 ts = ImGui::CalcTextSize(s.c_str());
    dl->AddText(ImVec2(p0.x - ts.x - 5, q.y - ts.y * 0.5f), text_col, s.c_str());
  }
  for (double t : x_ticks) {
    const ImVec2 q = to_px(t, y0);
    dl->AddLine(ImVec2(q.x, p0.y), ImVec2(q.x, p1.y), grid_col, 1.0f);
    const std::string s = tick_text(t, spec.integer_x ? 1.0 : xstep);
    const ImVec2 ts = ImGui::CalcTextSize(s.c_str());
    dl->AddText(ImVec2(q.x - ts.x * 0.5f, p1.y + 4), text_col, s.c_str());
  }
  dl->AddRect(p0, p1, text_col, 0, 0, 1.0f);
  if (!spec.x_label.empty()) {
    const ImVec2 ts = ImGui::CalcTextSize(spec.x_label.c_str());
    dl->AddText(ImVec2((p0.x + p1.x - ts.x) * 0.5f, p1.y + fh * 1.4f), text_col, spec.x_label.c_str());
  }
  if (!spec.y_label.empty()) dl->AddText(ImVec2(origin.x + 2, p0.y - ylabel_h), text_col, spec.y_label.c_str());

  dl->PushClipRect(p0, p1, true);
  for (const auto& s : series) {
    ImVec2 prev;
    bool have_prev = false;
    for (std::size_t k = 0; k < s.y.size() && k < s.x.size(); ++k) {
      if (!std::isfinite(s.y[k])) {
        have_prev = false;
        continue;
      }
      const ImVec2 q = to_px(s.x[k], s.y[k]);
      if (have_prev) {
        if (s.dashed) dashed_line(dl, prev, q, s.color, s.thickness);
        else dl->AddLine(prev, q, s.color, s.thickness);
      }
      if (k < s.err.size() && std::isfinite(s.err[k]) && s.err[k] > 0) {
        const ImVec2 a = to_px(s.x[k], s.y[k] - s.err[k]), b = to_px(s.x[k], s.y[k] + s.err[k]);
        dl->AddLine(a, b, s.color, 1.2f);
        dl->AddLine(ImVec2(a.x - 3, a.y), ImVec2(a.x + 3, a.y), s.color, 1.2f);
        dl->AddLine(ImVec2(b.x - 3, b.y), ImVec2(b.x + 3, b.y), s.color, 1.2f);
      }
      if (s.markers) dl->AddCircleFilled(q, 2.5f + s.thickness * 0.5f, s.color);
      prev = q;
      have_prev = true;
    }
  }
  dl->PopClipRect();

  if (legend) {
    const ImVec2 l1(l0.x + box.x, l0.y + box.y);
    dl->AddRectFilled(l0, l1, ImGui::GetColorU32(ImGuiCol_PopupBg, 0.9f));
    dl->AddRect(l0, l1, grid_col);
    float yy = l0.y + 4;
    for (const auto& s : series) {
      const float mid = yy + fh * 0.55f;
      if (s.dashed) dashed_line(dl, ImVec2(l0.x + 5, mid), ImVec2(l0.x + fh * 1.8f, mid), s.color, s.thickness);
      else dl->AddLine(ImVec2(l0.x + 5, mid), ImVec2(l0.x + fh * 1.8f, mid), s.color, s.thickness + 0.5f);
      dl->AddText(ImVec2(l0.x + fh * 2.1f, yy), text_col, s.label.c_str());
      yy += fh * 1.25f;
    }
  }

  if (hovered) {
    // Nearest point of any series, in screen distance.
    const ImVec2 m = ImGui::GetIO().MousePos;
    float best = fh * 1.5f;
    const PlotSeries* bs = nullptr;
    std::size_t bk = 0;
    for (const auto& s : series)
      for (std::size_t k = 0; k < s.y.size() && k < s.x.size(); ++k) {
        if (!std::isfinite(s.y[k])) continue;
        const ImVec2 q = to_px(s.x[k], s.y[k]);
        const float dist = std::hypot(q.x - m.x, q.y - m.y);
        if (dist < best) {
          best = dist;
          bs = &s;
          bk = k;
        }
      }
    if (bs) {
      const ImVec2 q = to_px(bs->x[bk], bs->y[bk]);
      dl->AddCircle(q, 6, bs->color, 0, 2);
      if (bk < bs->err.size())
        ImGui::SetTooltip("%s\nx = %g\ny = %s", bs->label.c_str(), bs->x[bk],
                          value_with_se(bs->y[bk], bs->err[bk]).c_str());
      else ImGui::SetTooltip("%s\nx = %g\ny = %.6g", bs->label.c_str(), bs->x[bk], bs->y[bk]);
    }
  }
  ImGui::PopID();
}

}  // namespace maskscope::gui
