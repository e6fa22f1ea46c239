// The Metrics tab: the order metrics of the metric table (recency probability, adjacency score, norm
// adjacency) per layer with standard errors, and the fraction of tied comparisons behind each
// (docs/model.md section 4).
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/stats/metric_table.hpp"
#include "common/format.hpp"
#include "window/live/live.hpp"
#include "window/plot.hpp"

namespace maskscope::gui {

namespace {

// The order metrics (MetricGroup::order), in the table's order.
std::vector<const MetricInfo*> order_metrics() {
  std::vector<const MetricInfo*> rows;
  for (const MetricInfo& m : metric_table())
    if (m.group == MetricGroup::order) rows.push_back(&m);
  return rows;
}

void tie_share(double t) {
  if (!std::isfinite(t)) return ImGui::TextDisabled("n/a");
  if (t > kTieFlagFraction) ImGui::TextColored(ImVec4(0.95f, 0.55f, 0.15f, 1), "%.1f%%", 100 * t);
  else ImGui::Text("%.2g%%", 100 * t);
}

}  // namespace

void draw_metrics_tab(const Snapshot& snap) {
  if (snap.layers.empty()) return;
  const std::vector<const MetricInfo*> metrics = order_metrics();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  static const ImU32 kColors[] = {IM_COL32(214, 39, 40, 255), IM_COL32(31, 119, 180, 255), IM_COL32(44, 160, 44, 255),
                                  IM_COL32(148, 103, 189, 255), IM_COL32(255, 127, 14, 255)};
  // The random-weight family reports layer 0, the embeddings (cosines and norms only).
  std::vector<const LayerStats*> rows;
  for (const auto& e : snap.embeddings) rows.push_back(&e);
  for (const auto& l : snap.layers) rows.push_back(&l);
  const bool rw = snap.settings.random_weights();
  std::vector<PlotSeries> series;
  PlotSeries& chance = series.emplace_back();
  chance.label = "0.5 (no bias)";
  chance.color = IM_COL32(128, 128, 128, 255);
  chance.dashed = true;
  chance.markers = false;
  for (const LayerStats* l : rows) {
    chance.x.push_back(l->layer);
    chance.y.push_back(0.5);
  }
  for (std::size_t k = 0; k < metrics.size(); ++k) {
    const MetricInfo& m = *metrics[k];
    PlotSeries& s = series.emplace_back();
    s.label = std::string(m.name);
    s.color = kColors[k % std::size(kColors)];
    for (const LayerStats* l : rows)
      if (l->layer > 0 || m.embeddings) {
        s.x.push_back(l->layer);
        s.y.push_back(m.of(*l).mean);
        s.err.push_back(m.of(*l).se);
      }
  }
  PlotSpec spec;
  spec.title =
      rw ? "RP (LN-recency Sec. 3), adjacency and norm adjacency (Zuo et al. Sec. 4.1, 5.4); layer 0 = embeddings"
         : "Recency probability (LN-recency Sec. 3) and adjacency score (Zuo et al. Sec. 4.1)";
  spec.x_label = "layer";
  spec.y_label = "probability";
  spec.integer_x = true;
  // The table: every column as wide as its widest text (no SE digit cut, issue 48), scrolling sideways when the
  // columns are wider than the tab; room for its rows, header and horizontal scroll bar.
  const float table_h = ImGui::GetFrameHeightWithSpacing() * float(rows.size() + 1) + ImGui::GetStyle().ScrollbarSize +
                        ImGui::GetStyle().ItemSpacing.y * 2;
  plot("##metrics", ImVec2(avail.x, std::max(120.0f, avail.y - table_h)), spec, series);
  // Columns: the layer, each metric +- SE and its tie share, the per-head values of those heads have.
  int columns = 1;
  for (const MetricInfo* m : metrics) columns += 1 + (m->ties ? 1 : 0) + (m->head_field ? 1 : 0);
  if (!ImGui::BeginTable(
          "##mtable", columns,
          ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollX,
          ImVec2(0, table_h)))
    return;
  ImGui::TableSetupColumn("layer");
  for (const MetricInfo* m : metrics) {
    ImGui::TableSetupColumn((std::string(m->label) + " \u00b1 SE").c_str());
    if (m->ties) ImGui::TableSetupColumn((std::string(m->label) + " ties").c_str());
  }
  for (const MetricInfo* m : metrics)
    if (m->head_field) ImGui::TableSetupColumn((std::string(m->label) + " per head").c_str());
  ImGui::TableHeadersRow();
  for (const LayerStats* lp : rows) {
    const LayerStats& l = *lp;
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    if (l.layer == 0) ImGui::TextUnformatted("0 (embeddings)");
    else ImGui::Text("%d", l.layer);
    for (const MetricInfo* m : metrics) {
      ImGui::TableNextColumn();
      if (l.layer == 0 && !m->embeddings) ImGui::TextDisabled("no attention");
      else ImGui::TextUnformatted(value_with_se(m->of(l)).c_str());
      explain(with_note(std::string(m->description), m->of(l)).c_str());
      if (!m->ties) continue;
      ImGui::TableNextColumn();
      if (l.layer > 0 || m->embeddings) tie_share(m->of(l).ties);
      explain(
          "Fraction of the comparisons that were exact ties (counted 1/2). Above 1% the representations have "
          "collapsed and the metric is pulled toward 0.5.");
    }
    for (const MetricInfo* m : metrics) {
      if (!m->head_field) continue;
      ImGui::TableNextColumn();
      std::string heads;
      if (l.heads.size() > 1)
        for (const HeadStats& h : l.heads) heads += (heads.empty() ? "" : "  ") + compact_number(m->of(h).mean, 4);
      ImGui::TextUnformatted(heads.c_str());
    }
  }
  ImGui::EndTable();
}

}  // namespace maskscope::gui
