// The Attention and Diagonal-normalized tabs: one heatmap per layer (a float texture coloured in
// the shader), its colorbar with labelled ends and clipped-end triangles, the RP / adjacency badge
// (flagged when ties exceed 1%), and a hover read-out with the standard error.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "common/format.hpp"
#include "window/live/live.hpp"

namespace maskscope::gui {

namespace {

ImU32 to_u32(const std::array<float, 3>& c) { return ImGui::ColorConvertFloat4ToU32(ImVec4(c[0], c[1], c[2], 1.0f)); }

const ImVec4 kWarning(0.95f, 0.55f, 0.15f, 1.0f);

void colorbar(ImDrawList* dl, ImVec2 c0, ImVec2 c1, const Colormap& cm, const PanelData& p, float fh) {
  const int strips = 64;
  for (int s = 0; s < strips; ++s) {
    const float y0 = c1.y - (c1.y - c0.y) * float(s + 1) / strips, y1 = c1.y - (c1.y - c0.y) * float(s) / strips;
    dl->AddRectFilled(ImVec2(c0.x, y0), ImVec2(c1.x, y1 + 1), to_u32(cm.at((float(s) + 0.5f) / strips)));
  }
  dl->AddRect(c0, c1, ImGui::GetColorU32(ImGuiCol_Border));
  const float tri = (c1.x - c0.x) * 0.9f, mid = (c0.x + c1.x) / 2;
  const ImU32 border = ImGui::GetColorU32(ImGuiCol_Border);
  if (p.above) {
    const ImVec2 a(c0.x, c0.y - 2), b(c1.x, c0.y - 2), c(mid, c0.y - 2 - tri);
    dl->AddTriangleFilled(a, b, c, to_u32(cm.at(1)));
    dl->AddTriangle(a, b, c, border);
  }
  if (p.below) {
    const ImVec2 a(c0.x, c1.y + 2), b(mid, c1.y + 2 + tri), c(c1.x, c1.y + 2);
    dl->AddTriangleFilled(a, b, c, to_u32(cm.at(0)));
    dl->AddTriangle(a, b, c, border);
  }
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  for (const ColorbarTick& t : colorbar_ticks(p.lo, p.hi)) {
    const float y = c1.y - float((t.value - p.lo) / double(p.hi - p.lo)) * (c1.y - c0.y);
    dl->AddLine(ImVec2(c1.x - 4, y), ImVec2(c1.x, y), IM_COL32(128, 128, 128, 255));
    dl->AddText(ImGui::GetFont(), fh * 0.85f, ImVec2(c1.x + 4, y - fh * 0.45f), text, t.text.c_str());
  }
}

// "RP 0.6382 ± 0.0003", or why there is none; ties flagged.
void badge(ImVec2 at, const Snapshot& snap, const PanelData& p, const QuantityInfo& q, float fh) {
  const std::string tooltip(q.tooltip);
  if (!q.metric) {  // no metric (a stage's Gram matrix): say what the cells are
    ImGui::SetCursorScreenPos(at);
    ImGui::TextDisabled("%.*s", int(q.cells.size()), q.cells.data());
    explain(tooltip.c_str());
    return;
  }
  std::string text;
  const std::string name = p.metric_name;
  if (snap.samples_done == 0) text = name + ": waiting for the first samples";
  else if (!std::isfinite(p.metric)) text = name + " n/a (needs n >= 3)";
  else text = name + " " + value_with_se(p.metric, p.metric_se, snap.samples_done);
  ImGui::SetCursorScreenPos(at);
  ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(fh * 0.4f, 0));
  ImGui::TextUnformatted(text.c_str());
  explain(tooltip.c_str());
  if (p.noise_only && snap.samples_done > 0) {
    ImGui::SameLine();
    ImGui::TextDisabled("noise only");
    explain(
        "The cells of this map differ by no more than their standard errors explain (docs/window.md, noise-only "
        "maps): it is drawn over a fixed range of +-4 SE about its mean instead of being stretched, so noise does not "
        "look like structure.");
  }
  if (std::isfinite(p.ties) && p.ties > kTieFlagFraction) {
    ImGui::SameLine();
    char t[48];
    std::snprintf(t, sizeof t, "ties %.0f%%", 100 * p.ties);
    ImGui::TextColored(kWarning, "%s", t);
    explain(
        "Many comparisons are exact ties: the representations have collapsed (deep or bidirectional "
        "stacks). Ties count 1/2 (docs/model.md section 4), so the metric drifts toward 0.5 for that reason, not "
        "because position was lost or gained.");
  }
  ImGui::PopStyleVar();
}

// The norms ||x_i|| of one layer as bars with +-1 SE whiskers, position i across.
void norm_bars(ImDrawList* dl, ImVec2 p0, ImVec2 p1, const PanelData& p, const Colormap& cm) {
  const int n = p.n;
  const float w = (p1.x - p0.x) / float(std::max(1, n));
  auto y_of = [&](double v) { return p1.y - float(v / double(p.hi)) * (p1.y - p0.y); };
  const ImU32 bar = to_u32(cm.at(0.55f));
  const ImU32 whisker = ImGui::GetColorU32(ImGuiCol_Text);
  for (int i = 0; i < n; ++i) {
    const double v = p.value[std::size_t(i)];
    if (!std::isfinite(v)) continue;
    const float x0 = p0.x + float(i) * w, x1 = x0 + w;
    dl->AddRectFilled(ImVec2(x0 + w * 0.12f, y_of(v)), ImVec2(x1 - w * 0.12f, p1.y), bar);
    const double se = p.se[std::size_t(i)];
    if (std::isfinite(se) && se > 0)
      dl->AddLine(ImVec2((x0 + x1) / 2, y_of(v - se)), ImVec2((x0 + x1) / 2, y_of(v + se)), whisker);
  }
}

}  // namespace

void draw_heatmap_grid(const Snapshot& snap, const std::vector<PanelData>& panels, const ViewOptions& view,
                       HeatmapRenderer& renderer, const LessonPointer* point) {
  if (panels.empty()) {
    ImGui::TextUnformatted("Simulating...");
    return;
  }
  const int n = snap.settings.n;
  const int L = int(panels.size());
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float fh = ImGui::GetFontSize();
  const QuantityInfo& quantity = quantity_info(view.quantity);
  const bool centred = diverging_map(view.quantity, transform_of(view.tab));
  const ColormapId map = centred ? view.diverging : view.sequential;
  const float label_w = ImGui::CalcTextSize(std::to_string(std::max(0, n - 1)).c_str()).x + fh * 0.5f;
  const float colorbar_w = fh * 5.2f;
  const float header_h = fh * 2.8f;
  const float footer_h = fh * 1.8f;
  // Columns that make the panels largest, each wide enough for its header ("RP 0.49884 +- 0.00060 ties 6%").
  const float min_panel_w = std::max(fh * 14.0f, 40.0f + colorbar_w + label_w + fh);
  const int max_cols = std::clamp(int(avail.x / min_panel_w), 1, std::max(1, L));
  int best_cols = 1;
  float best_size = 0;
  for (int cols = 1; cols <= max_cols; ++cols) {
    const int rows = (L + cols - 1) / cols;
    const float size =
        std::min(avail.x / float(cols) - colorbar_w - label_w - fh, avail.y / float(rows) - header_h - footer_h);
    if (size > best_size) {
      best_size = size;
      best_cols = cols;
    }
  }
  // Too many layers to fit on screen (48 at most): the widest columns that still fit side by side, and
  // the grid scrolls.
  if (best_size < fh * 4.0f) {
    best_cols = max_cols;
    best_size = avail.x / float(best_cols) - colorbar_w - label_w - fh;
  }
  const float cell = std::max(40.0f, best_size);
  const float panel_w = avail.x / float(best_cols);
  const ImVec4 masked = view.light_theme ? ImVec4(1, 1, 1, 1) : ImVec4(0.08f, 0.08f, 0.09f, 1);
  const ImVec4 noise = view.light_theme ? ImVec4(0.80f, 0.80f, 0.80f, 1) : ImVec4(0.32f, 0.32f, 0.34f, 1);
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const Colormap& cm = colormap(map);
  const std::string what(quantity.symbol);

  for (int k = 0; k < L; ++k) {
    const PanelData& p = panels[std::size_t(k)];
    const int col = k % best_cols, row = k / best_cols;
    const ImVec2 top(origin.x + float(col) * panel_w + label_w, origin.y + float(row) * (cell + header_h + footer_h));
    char title[96];
    const bool norms = p.norms;
    const std::string head = view.head >= 0 && quantity.per_head ? "  head " + std::to_string(view.head + 1) : "";
    if (p.layer == 0) std::snprintf(title, sizeof title, "Embeddings (layer 0)  %s", what.c_str());
    else
      std::snprintf(title, sizeof title, "Layer %d  %s%s%s", p.layer, centred ? "diag-normalized " : "", what.c_str(),
                    head.c_str());
    dl->AddText(top, text, title);
    badge(ImVec2(top.x, top.y + fh * 1.25f), snap, p, quantity, fh);
    const ImVec2 p0(top.x, top.y + header_h);
    const ImVec2 p1(p0.x + cell, p0.y + cell);
    if (norms) norm_bars(dl, p0, p1, p, cm);
    else renderer.draw(dl, int(k), p0, p1, p.lo, p.hi, map, masked, noise);
    dl->AddRect(p0, p1, ImGui::GetColorU32(ImGuiCol_Border));
    // Index ticks, 0-based (as the papers' imshow figures).
    const int step = n <= 12 ? 1 : n <= 30 ? 5 : n <= 120 ? 10 : n <= 300 ? 50 : 100;
    for (int t = 0; t < n; t += step) {
      const std::string lab = std::to_string(t);
      const float c = (float(t) + 0.5f) / float(n) * cell;
      const ImVec2 ts = ImGui::CalcTextSize(lab.c_str());
      dl->AddText(ImVec2(p0.x + c - ts.x * 0.5f, p1.y + 2), text, lab.c_str());
      if (!norms) dl->AddText(ImVec2(p0.x - ts.x - 3, p0.y + c - ts.y * 0.5f), text, lab.c_str());
    }
    if (norms) {  // the value axis: 0, the middle and the top
      for (double v : {0.0, double(p.hi) / 2, double(p.hi)}) {
        const std::string lab = tick_text(v, double(p.hi) / 2);
        const float y = p1.y - float(v / double(p.hi)) * cell;
        dl->AddText(ImVec2(p1.x + fh * 0.4f, y - fh * 0.5f), text, lab.c_str());
      }
    } else {
      colorbar(dl, ImVec2(p1.x + fh * 0.6f, p0.y), ImVec2(p1.x + fh * 1.5f, p1.y), cm, p, fh);
    }
    // A lesson's pointer: an outline around the panel or the cell range, with its label.
    if (point && point->layer == p.layer) {
      const ImU32 mark = IM_COL32(255, 160, 20, 255);
      ImVec2 a = p0, b = p1;
      if (point->row0 >= 0 || point->col0 >= 0) {
        const float cs = cell / float(n);
        const int r0 = point->row0 >= 0 ? std::min(point->row0, n - 1) : 0,
                  r1 = point->row0 >= 0 ? std::min(point->row1, n - 1) : n - 1;
        const int c0 = point->col0 >= 0 ? std::min(point->col0, n - 1) : 0,
                  c1 = point->col0 >= 0 ? std::min(point->col1, n - 1) : n - 1;
        a = ImVec2(p0.x + cs * float(c0), p0.y + cs * float(r0));
        b = ImVec2(p0.x + cs * float(c1 + 1), p0.y + cs * float(r1 + 1));
      }
      // Inside the map's edges: the outline covers no index label and no colour bar (issue 48, presentation mode).
      dl->AddRect(ImVec2(a.x + 1.5f, a.y + 1.5f), ImVec2(b.x - 1.5f, b.y - 1.5f), mark, 3.0f, 0, 3.0f);
      if (!point->label.empty()) {
        // In the panel's title line when it fits beside the title, else inside the map at the outline's top left:
        // never on the colour bar or the index labels.
        const ImVec2 ts = ImGui::CalcTextSize(point->label.c_str());
        const float title_end = top.x + ImGui::CalcTextSize(title).x + fh;
        const bool beside_title = title_end + ts.x + 6 <= p1.x + colorbar_w * 0.5f;
        const ImVec2 at = beside_title ? ImVec2(title_end, top.y)
                                       : ImVec2(std::min(a.x + 6, p1.x - ts.x - 6), std::max(p0.y + 6, a.y + 6));
        dl->AddRectFilled(ImVec2(at.x - 3, at.y - 2), ImVec2(at.x + ts.x + 3, at.y + ts.y + 2),
                          IM_COL32(20, 20, 20, 200), 3.0f);
        dl->AddText(at, mark, point->label.c_str());
      }
    }
    // Hover: (i, j), value and standard error.
    const ImVec2 m = ImGui::GetIO().MousePos;
    if (norms && ImGui::IsWindowHovered() && m.x >= p0.x && m.x < p1.x && m.y >= p0.y && m.y < p1.y) {
      const int i = std::clamp(int((m.x - p0.x) / cell * float(n)), 0, n - 1);
      ImGui::SetTooltip("layer %d  position i = %d\n||x_i|| = %s", p.layer, i,
                        value_with_se(p.value[std::size_t(i)], p.se[std::size_t(i)], snap.samples_done).c_str());
    } else if (ImGui::IsWindowHovered() && m.x >= p0.x && m.x < p1.x && m.y >= p0.y && m.y < p1.y) {
      const int j = std::clamp(int((m.x - p0.x) / cell * float(n)), 0, n - 1);
      const int i = std::clamp(int((m.y - p0.y) / cell * float(n)), 0, n - 1);
      const std::size_t e = std::size_t(i) * n + j;
      const double v = p.value[e], se = p.se[e];
      if (std::isnan(v)) ImGui::SetTooltip("layer %d  query i = %d, key j = %d\nmasked or hidden", p.layer, i, j);
      else
        ImGui::SetTooltip("layer %d  query i = %d, key j = %d\n%s = %s%s", p.layer, i, j, what.c_str(),
                          value_with_se(v, se, snap.samples_done).c_str(),
                          e < p.noise.size() && p.noise[e] ? "\nwithin 2 SE of 0 (grey)" : "");
    }
  }
  const int rows = (L + best_cols - 1) / best_cols;
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(ImVec2(avail.x, float(rows) * (cell + header_h + footer_h)));
}

}  // namespace maskscope::gui
