// The Metrics tab: recency probability and adjacency score per layer with standard errors, and
// the fraction of tied comparisons behind each (docs/model.md section 4).
#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "model/format.hpp"
#include "window/live/live.hpp"
#include "window/plot.hpp"

namespace maskscope::gui {

void draw_metrics_tab(const Snapshot& snap) {
  if (snap.layers.empty()) return;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  PlotSeries rp, adj, nadj, half;
  rp.label = "recency probability (RP)";
  adj.label = "adjacency score";
  nadj.label = "norm adjacency";
  half.label = "0.5 (no bias)";
  rp.color = IM_COL32(214, 39, 40, 255);
  adj.color = IM_COL32(31, 119, 180, 255);
  nadj.color = IM_COL32(44, 160, 44, 255);
  half.color = IM_COL32(128, 128, 128, 255);
  half.dashed = true;
  half.markers = false;
  // The random-weight family reports layer 0, the embeddings (cosines and norms only).
  std::vector<const LayerStats*> rows;
  for (const auto& e : snap.embeddings) rows.push_back(&e);
  for (const auto& l : snap.layers) rows.push_back(&l);
  const bool rw = snap.settings.random_weights();
  for (const LayerStats* l : rows) {
    if (l->layer > 0) {
      rp.x.push_back(l->layer);
      rp.y.push_back(l->recency);
      rp.err.push_back(l->recency_se);
    }
    adj.x.push_back(l->layer);
    adj.y.push_back(l->adjacency);
    adj.err.push_back(l->adjacency_se);
    nadj.x.push_back(l->layer);
    nadj.y.push_back(l->norm_adjacency);
    nadj.err.push_back(l->norm_adjacency_se);
    half.x.push_back(l->layer);
    half.y.push_back(0.5);
  }
  PlotSpec spec;
  spec.title =
      rw ? "RP (LN-recency Sec. 3), adjacency and norm adjacency (Zuo et al. Sec. 4.1, 5.4); layer 0 = embeddings"
         : "Recency probability (LN-recency Sec. 3) and adjacency score (Zuo et al. Sec. 4.1)";
  spec.x_label = "layer";
  spec.y_label = "probability";
  spec.integer_x = true;
  const float table_h = ImGui::GetTextLineHeightWithSpacing() * float(rows.size() + 2);
  plot("##metrics", ImVec2(avail.x, std::max(120.0f, avail.y - table_h)), spec, {half, rp, adj, nadj});
  if (!ImGui::BeginTable("##mtable", 7, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg)) return;
  ImGui::TableSetupColumn("layer");
  ImGui::TableSetupColumn("RP \u00b1 SE");
  ImGui::TableSetupColumn("RP ties");
  ImGui::TableSetupColumn("adjacency \u00b1 SE");
  ImGui::TableSetupColumn("adjacency ties");
  ImGui::TableSetupColumn("norm adjacency \u00b1 SE");
  ImGui::TableSetupColumn("RP per head");
  ImGui::TableHeadersRow();
  auto ties = [](double t) {
    if (!std::isfinite(t)) return ImGui::TextDisabled("n/a");
    if (t > kTieFlagFraction) ImGui::TextColored(ImVec4(0.95f, 0.55f, 0.15f, 1), "%.1f%%", 100 * t);
    else ImGui::Text("%.2g%%", 100 * t);
  };
  for (const LayerStats* lp : rows) {
    const LayerStats& l = *lp;
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    if (l.layer == 0) ImGui::TextUnformatted("0 (embeddings)");
    else ImGui::Text("%d", l.layer);
    ImGui::TableNextColumn();
    if (l.layer == 0) ImGui::TextDisabled("no attention");
    else ImGui::TextUnformatted(value_with_se(l.recency, l.recency_se).c_str());
    ImGui::TableNextColumn();
    ties(l.recency_ties);
    explain(
        "Fraction of RP's comparisons that were exact ties (counted 1/2). Above 1% the representations have "
        "collapsed and RP is pulled toward 0.5.");
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(value_with_se(l.adjacency, l.adjacency_se).c_str());
    ImGui::TableNextColumn();
    ties(l.adjacency_ties);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(value_with_se(l.norm_adjacency, l.norm_adjacency_se).c_str());
    explain(
        "Norm adjacency (Zuo et al. Sec. 5.4, Table 6): the adjacency score of the output norms, the fraction of "
        "pairs i < j < k with ||x_i|| < ||x_j||. 0.5 = the norms carry no order.");
    ImGui::TableNextColumn();
    std::string heads;
    if (l.heads.size() > 1)
      for (const HeadStats& h : l.heads) heads += (heads.empty() ? "" : "  ") + compact_number(h.recency, 4);
    ImGui::TextUnformatted(heads.c_str());
  }
  ImGui::EndTable();
}

}  // namespace maskscope::gui
