// The Attention and Diagonal-normalized tabs: one heatmap per layer (a float texture coloured in
// the shader), its colorbar with labelled ends and clipped-end triangles, the RP / adjacency badge
// (flagged when ties exceed 1%), and a hover read-out with the standard error.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "format.hpp"
#include "live.hpp"

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

// "RP 0.6382 ± 0.0003  adj 0.71 ± 0.01", or why there is none; ties flagged.
void badge(ImVec2 at, const Snapshot& snap, const LayerStats& ls, const PanelData& p, Quantity q, float fh) {
  std::string text;
  const bool cos = q == Quantity::cosine;
  const double v = cos ? ls.adjacency : ls.recency, se = cos ? ls.adjacency_se : ls.recency_se;
  const char* name = cos ? "adj" : "RP";
  if (snap.samples_done == 0) text = std::string(name) + ": waiting for the first samples";
  else if (!std::isfinite(v)) text = std::string(name) + " n/a (needs n >= 3)";
  else text = std::string(name) + " " + value_with_se(v, se);
  ImGui::SetCursorScreenPos(at);
  ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(fh * 0.4f, 0));
  ImGui::TextUnformatted(text.c_str());
  explain(cos ? "Adjacency probability score (Zuo et al. Sec. 4.1, App. A): over rows k >= 2 of the per-sample "
                "cosine matrix of this layer's outputs and pairs i < j < k, the probability that the nearer token "
                "j is more similar to k (C_ki < C_kj), ties 1/2, diagonal left out. 0.5 = no order; 1 = the "
                "nearer, the more similar. ± one standard error over samples."
              : "Recency probability (LN-recency Sec. 3): over triples i > k > j of one query's keys, the "
                "probability that the nearer key k scores higher (S_ik > S_ij), ties 1/2. 0.5 = no bias, "
                "> 0.5 recency, < 0.5 primacy. ± one standard error over samples.");
  if (std::isfinite(p.ties) && p.ties > kTieFlagFraction) {
    ImGui::SameLine();
    char t[48];
    std::snprintf(t, sizeof t, "ties %.0f%%", 100 * p.ties);
    ImGui::TextColored(kWarning, "%s", t);
    explain("Many comparisons are exact ties: the representations have collapsed (deep or bidirectional "
            "stacks). Ties count 1/2 (MODEL.md section 4), so the metric drifts toward 0.5 for that reason, not "
            "because position was lost or gained.");
  }
  ImGui::PopStyleVar();
}

}  // namespace

void draw_heatmap_grid(const Snapshot& snap, const std::vector<PanelData>& panels, const ViewOptions& view,
                       HeatmapRenderer& renderer, bool diverging) {
  if (panels.empty()) {
    ImGui::TextUnformatted("Simulating...");
    return;
  }
  const int n = snap.settings.n;
  const int L = int(panels.size());
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float fh = ImGui::GetFontSize();
  const ColormapId map = diverging ? view.diverging : view.sequential;
  const float label_w = ImGui::CalcTextSize(std::to_string(std::max(0, n - 1)).c_str()).x + fh * 0.5f;
  const float colorbar_w = fh * 5.2f;
  const float header_h = fh * 2.8f;
  const float footer_h = fh * 1.8f;
  // Columns that make the panels largest.
  int best_cols = 1;
  float best_size = 0;
  for (int cols = 1; cols <= L; ++cols) {
    const int rows = (L + cols - 1) / cols;
    const float size = std::min(avail.x / float(cols) - colorbar_w - label_w - fh, avail.y / float(rows) - header_h - footer_h);
    if (size > best_size) { best_size = size; best_cols = cols; }
  }
  const float cell = std::max(40.0f, best_size);
  const float panel_w = avail.x / float(best_cols);
  const ImVec4 masked = view.light_theme ? ImVec4(1, 1, 1, 1) : ImVec4(0.08f, 0.08f, 0.09f, 1);
  const ImVec4 noise = view.light_theme ? ImVec4(0.80f, 0.80f, 0.80f, 1) : ImVec4(0.32f, 0.32f, 0.34f, 1);
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const Colormap& cm = colormap(map);
  const std::string what(symbol(view.quantity));

  for (int k = 0; k < L; ++k) {
    const PanelData& p = panels[std::size_t(k)];
    const LayerStats& ls = snap.layers[std::size_t(k)];
    const int col = k % best_cols, row = k / best_cols;
    const ImVec2 top(origin.x + float(col) * panel_w + label_w, origin.y + float(row) * (cell + header_h + footer_h));
    char title[96];
    std::snprintf(title, sizeof title, "Layer %d  %s%s", p.layer, diverging ? "diag-normalized " : "", what.c_str());
    dl->AddText(top, text, title);
    badge(ImVec2(top.x, top.y + fh * 1.25f), snap, ls, p, view.quantity, fh);
    const ImVec2 p0(top.x, top.y + header_h);
    const ImVec2 p1(p0.x + cell, p0.y + cell);
    renderer.draw(dl, k, p0, p1, p.lo, p.hi, map, masked, noise);
    dl->AddRect(p0, p1, ImGui::GetColorU32(ImGuiCol_Border));
    // Index ticks, 0-based (as the papers' imshow figures).
    const int step = n <= 12 ? 1 : n <= 30 ? 5 : n <= 120 ? 10 : n <= 300 ? 50 : 100;
    for (int t = 0; t < n; t += step) {
      const std::string lab = std::to_string(t);
      const float c = (float(t) + 0.5f) / float(n) * cell;
      const ImVec2 ts = ImGui::CalcTextSize(lab.c_str());
      dl->AddText(ImVec2(p0.x + c - ts.x * 0.5f, p1.y + 2), text, lab.c_str());
      dl->AddText(ImVec2(p0.x - ts.x - 3, p0.y + c - ts.y * 0.5f), text, lab.c_str());
    }
    colorbar(dl, ImVec2(p1.x + fh * 0.6f, p0.y), ImVec2(p1.x + fh * 1.5f, p1.y), cm, p, fh);
    // Hover: (i, j), value and standard error.
    const ImVec2 m = ImGui::GetIO().MousePos;
    if (ImGui::IsWindowHovered() && m.x >= p0.x && m.x < p1.x && m.y >= p0.y && m.y < p1.y) {
      const int j = std::clamp(int((m.x - p0.x) / cell * float(n)), 0, n - 1);
      const int i = std::clamp(int((m.y - p0.y) / cell * float(n)), 0, n - 1);
      const std::size_t e = std::size_t(i) * n + j;
      const double v = p.value[e], se = p.se[e];
      if (std::isnan(v))
        ImGui::SetTooltip("layer %d  query i = %d, key j = %d\nmasked or hidden", p.layer, i, j);
      else
        ImGui::SetTooltip("layer %d  query i = %d, key j = %d\n%s = %s%s", p.layer, i, j, what.c_str(),
                          value_with_se(v, se).c_str(), e < p.noise.size() && p.noise[e] ? "\nwithin 2 SE of 0 (grey)" : "");
    }
  }
  const int rows = (L + best_cols - 1) / best_cols;
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(ImVec2(avail.x, float(rows) * (cell + header_h + footer_h)));
}

}  // namespace maskscope::gui
