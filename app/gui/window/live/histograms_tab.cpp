// The Histograms tab (Zuo et al. `003` Fig. 2 and Fig. 13; docs/model.md section 9): per layer, the
// distributions of sim(a, b) - sim(a, c) and sim(c, b) - sim(c, a) over triples a < b < c with 0 marked and
// the mass above 0 beside each, and the distribution over samples of each sample's adjacency score.
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "common/figure/analysis_charts.hpp"
#include "window/live/live.hpp"

namespace maskscope::gui {

namespace {

// One histogram of `bins` shares over [lo, hi] as bars, a vertical line at `mark`.
void bars(ImDrawList* dl, ImVec2 p0, ImVec2 p1, const std::vector<double>& v, double lo, double hi, double mark,
          ImU32 color, double top) {
  const std::size_t B = v.size();
  if (B == 0 || !(top > 0)) return;
  const float w = (p1.x - p0.x) / float(B);
  for (std::size_t b = 0; b < B; ++b) {
    const float h = float(v[b] / top) * (p1.y - p0.y);
    dl->AddRectFilled(ImVec2(p0.x + w * float(b), p1.y - h), ImVec2(p0.x + w * float(b + 1), p1.y), color);
  }
  const float xm = p0.x + float((mark - lo) / (hi - lo)) * (p1.x - p0.x);
  dl->AddLine(ImVec2(xm, p0.y), ImVec2(xm, p1.y), IM_COL32(200, 40, 40, 255), 1.5f);
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  dl->AddLine(ImVec2(p0.x, p1.y), ImVec2(p1.x, p1.y), text);
  // Tick labels under the axis at both ends and at the mark, so a bar's position can be read.
  const double ticks[3] = {lo, mark, hi};
  for (double t : ticks) {
    char label[16];
    std::snprintf(label, sizeof label, "%g", t);
    const float x = p0.x + float((t - lo) / (hi - lo)) * (p1.x - p0.x);
    const float tw = ImGui::CalcTextSize(label).x;
    const float left = std::clamp(x - tw / 2, p0.x, p1.x - tw);
    dl->AddLine(ImVec2(x, p1.y), ImVec2(x, p1.y + 3), text);
    dl->AddText(ImVec2(left, p1.y + 3), text, label);
  }
}

}  // namespace

void draw_histograms_tab(const Snapshot& snap, Controller& controller) {
  std::vector<const LayerStats*> rows;
  for (const auto& e : snap.embeddings) rows.push_back(&e);
  for (const auto& l : snap.layers) rows.push_back(&l);
  if (snap.settings.histograms == 0 || rows.empty() || rows.front()->histograms.forward_difference.empty()) {
    ImGui::TextWrapped(
        "Zuo et al.'s Fig. 2: histograms of the cosine differences over triples a < b < c of positions, and Fig. 13: "
        "each sample's adjacency score. The random-weight model computes them while it runs when histograms are on.");
    if (snap.settings.random_weights() && ImGui::Button("Turn on histograms (100 bins)")) {
      Settings s = controller.settings();
      s.histograms = 100;
      controller.edit(s);
    }
    return;
  }
  static char dir[256] = "histograms-export";
  static std::string said;
  ImGui::SetNextItemWidth(220);
  ImGui::InputText("##hist_dir", dir, sizeof dir);
  ImGui::SameLine();
  if (ImGui::Button("Export PNG, SVG, CSV")) {
    const ExportResult res = export_charts(
        dir, "histograms",
        charts_page("Cosine differences over triples a < b < c (Zuo et al. Fig. 2)", histogram_charts(snap), 4),
        histograms_csv(snap), ExportOptions{});
    said = res.ok ? "wrote histograms.png, .svg, .csv to " + std::string(dir) : res.error;
  }
  ImGui::SameLine();
  ImGui::TextUnformatted(said.c_str());
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float fh = ImGui::GetFontSize();
  const int cols = int(rows.size());
  const float cw = avail.x / float(cols), row_h = (avail.y - fh * 3) / 3.0f;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  const char* titles[3] = {"s(a,b)-s(a,c)", "s(c,b)-s(c,a)", "adjacency"};
  for (int c = 0; c < cols; ++c) {
    const LayerHistograms& h = rows[std::size_t(c)]->histograms;
    const std::vector<double>* v[3] = {&h.forward_difference, &h.backward_difference, &h.adjacency};
    const double above[3] = {h.forward_above.mean, h.backward_above.mean, rows[std::size_t(c)]->adjacency.mean};
    for (int r = 0; r < 3; ++r) {
      const ImVec2 p0(o.x + cw * float(c) + 4, o.y + row_h * float(r) + fh * 2.4f);
      const ImVec2 p1(o.x + cw * float(c + 1) - 4, o.y + row_h * float(r + 1) - fh * 1.3f);
      const double top = *std::max_element(v[r]->begin(), v[r]->end());
      bars(dl, p0, p1, *v[r], r < 2 ? -1.0 : 0.0, 1.0, r < 2 ? 0.0 : 0.5, IM_COL32(31, 119, 180, 220), top);
      char label[96];
      dl->PushClipRect(ImVec2(p0.x, p0.y - fh * 2.4f), ImVec2(p1.x, p1.y), true);
      std::snprintf(label, sizeof label, "L%d %s", rows[std::size_t(c)]->layer, titles[r]);
      dl->AddText(ImVec2(p0.x, p0.y - fh * 2.2f), text, label);
      std::snprintf(label, sizeof label, r < 2 ? "> 0: %.3f" : "mean %.3f", above[r]);
      dl->AddText(ImVec2(p0.x, p0.y - fh * 1.1f), text, label);
      dl->PopClipRect();
    }
  }
  ImGui::Dummy(ImVec2(avail.x, row_h * 3));
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextWrapped(
      "s = cosine; over triples a < b < c, bins over [-1, 1], red at 0, '> 0': the mass above 0 (ties 1/2). Bottom: "
      "each sample's adjacency score, bins over [0, 1], red at 0.5. L0 = the embeddings.");
  ImGui::PopStyleColor();
}

}  // namespace maskscope::gui
