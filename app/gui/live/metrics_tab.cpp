// The Metrics tab: recency probability and adjacency score per layer with standard errors, and
// the fraction of tied comparisons behind each (MODEL.md section 4).
#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "format.hpp"
#include "live.hpp"
#include "plot.hpp"

namespace maskscope::gui {

void draw_metrics_tab(const Snapshot& snap) {
  if (snap.layers.empty()) return;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  PlotSeries rp, adj, half;
  rp.label = "recency probability (RP)";
  adj.label = "adjacency score";
  half.label = "0.5 (no bias)";
  rp.color = IM_COL32(214, 39, 40, 255);
  adj.color = IM_COL32(31, 119, 180, 255);
  half.color = IM_COL32(128, 128, 128, 255);
  half.dashed = true;
  half.markers = false;
  for (const auto& l : snap.layers) {
    rp.x.push_back(l.layer);
    rp.y.push_back(l.recency);
    rp.err.push_back(l.recency_se);
    adj.x.push_back(l.layer);
    adj.y.push_back(l.adjacency);
    adj.err.push_back(l.adjacency_se);
    half.x.push_back(l.layer);
    half.y.push_back(0.5);
  }
  PlotSpec spec;
  spec.title = "Recency probability (LN-recency Sec. 3) and adjacency score (Zuo et al. Sec. 4.1)";
  spec.x_label = "layer";
  spec.y_label = "probability";
  spec.integer_x = true;
  const float table_h = ImGui::GetTextLineHeightWithSpacing() * float(snap.layers.size() + 2);
  plot("##metrics", ImVec2(avail.x, std::max(120.0f, avail.y - table_h)), spec, {half, rp, adj});
  if (!ImGui::BeginTable("##mtable", 5, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg)) return;
  ImGui::TableSetupColumn("layer");
  ImGui::TableSetupColumn("RP \u00b1 SE");
  ImGui::TableSetupColumn("RP ties");
  ImGui::TableSetupColumn("adjacency \u00b1 SE");
  ImGui::TableSetupColumn("adjacency ties");
  ImGui::TableHeadersRow();
  auto ties = [](double t) {
    if (!std::isfinite(t)) return ImGui::TextDisabled("n/a");
    if (t > kTieFlagFraction) ImGui::TextColored(ImVec4(0.95f, 0.55f, 0.15f, 1), "%.1f%%", 100 * t);
    else ImGui::Text("%.2g%%", 100 * t);
  };
  for (const auto& l : snap.layers) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::Text("%d", l.layer);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(value_with_se(l.recency, l.recency_se).c_str());
    ImGui::TableNextColumn();
    ties(l.recency_ties);
    explain("Fraction of RP's comparisons that were exact ties (counted 1/2). Above 1% the representations have "
            "collapsed and RP is pulled toward 0.5.");
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(value_with_se(l.adjacency, l.adjacency_se).c_str());
    ImGui::TableNextColumn();
    ties(l.adjacency_ties);
  }
  ImGui::EndTable();
}

}  // namespace maskscope::gui
