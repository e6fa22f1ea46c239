// The Figure tab: rows (configurations), columns (layers), difference mode, range options,
// export, and a live preview that is the exported figure's own layout (scene_draw.hpp).
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/formats/result_json.hpp"
#include "window/figure/figure_tab.hpp"
#include "window/browser.hpp"
#include "window/live/live.hpp"
#include "window/figure/scene_draw.hpp"
#include "window/widgets.hpp"

namespace maskscope::gui {

namespace {}  // namespace

void draw_png_size(ExportOptions& options, float scene_width) {
  const float fh = ImGui::GetFontSize();
  int size_mode = options.width > 0 ? 3 : options.scale >= 3.5 ? 2 : options.scale >= 1.5 ? 1 : 0;
  ImGui::SetNextItemWidth(fh * 6.5f);
  if (ImGui::Combo("PNG size", &size_mode, "1x\0002x\0004x\0width px\0")) {
    if (size_mode < 3) options = {size_mode == 0 ? 1.0 : size_mode == 1 ? 2.0 : 4.0, 0};
    else options.width = std::max(options.width, int(std::lround(scene_width * 2)));
  }
  if (size_mode == 3) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(fh * 5);
    ImGui::InputInt("##width", &options.width, 100, 500);
    options.width = std::clamp(options.width, ExportLimits::width_min, ExportLimits::width_max);
  }
}

bool input_string(const char* label, std::string& s, float width) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s", s.c_str());
  ImGui::SetNextItemWidth(width);
  if (ImGui::InputText(label, buf, sizeof buf)) {
    s = buf;
    return true;
  }
  return false;
}

namespace {

void draw_figure_rows(FigureWorkbench& wb, const Settings& live, const ViewOptions& view) {
  FigureSpec& spec = wb.spec();
  const float fh = ImGui::GetFontSize();
  if (ImGui::Button("Add current settings as a row")) {
    spec.rows.push_back({"", live, view.quantity, transform_of(view.tab)});
  }
  ImGui::SameLine();
  ImGui::SetNextItemWidth(fh * 5);
  if (input_string("layers", wb.layers_text(), fh * 5)) parse_layers(wb.layers_text(), spec.layers);
  explain(
      "Columns: layers separated by commas, e.g. 1,2 or 1,2,3,4 (1 to 48; 0 = the embeddings of the "
      "random-weight network).");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(fh * 9);
  if (enum_combo("kind", spec.kind, kFigureKindNames,
                 {"heatmaps", "h(j) curves", "table", "metric vs layer", "norms vs position", "dR^2 vs query bin"}) &&
      is_line_kind(spec.kind))
    spec.difference = false;  // lines show every row as its own line
  explain(
      "heatmaps: one map per row and layer. h(j) curves: LN-recency Eq. 42 beside the simulation. table: each "
      "row's metric per layer with its SE, as Zuo et al.'s Tables 4-6 (RP for S and A, adjacency for cos, norm "
      "adjacency for ||x||), exported as CSV too.\n"
      "metric vs layer: the same metric as a line per row against the layer, +-1 SE bars and the 0.5 no-order "
      "line (Zuo et al. Fig. 3 with cos rows, Fig. 7 with ||x|| rows).\n"
      "norms vs position: the output norms ||x_i|| against the position i, one line per chosen layer, one chart "
      "per row (Zuo et al. Fig. 11).\n"
      "dR^2 vs query bin: the absolute-position leakage within Ruscio et al.'s query-position bins on a log axis "
      "(their Fig. 1): one line per layer for one row; one chart per layer with a line per row for several.\n"
      "The line kinds export lines.csv (one line per point) beside the PNG and SVG.");
  if (spec.kind == FigureKind::table || spec.kind == FigureKind::layer_lines) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(fh * 9);
    enum_combo(spec.kind == FigureKind::table ? "cells" : "metric", spec.table_metric, kTableMetricNames,
               {"row's metric", "dR^2 of S", "dR^2 of A"});
    explain(
        "What the cells or points hold: each row's own metric (by what it shows), or the absolute-position "
        "leakage dR^2 of the logits S or of the weights A (Ruscio et al. Eq. 4), as in Ruscio et al.'s Table 6.");
  } else if (spec.kind == FigureKind::leakage_bins) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(fh * 7);
    int of_weights = spec.table_metric == TableMetric::weight_delta_r2 ? 1 : 0;
    if (ImGui::Combo("dR^2 of", &of_weights, "logits S\0weights A\0"))
      spec.table_metric = of_weights ? TableMetric::weight_delta_r2 : TableMetric::delta_r2;
    explain("Which map's leakage per query bin: the logits S or the attention weights A (Ruscio et al. Eq. 3-4).");
  }
  ImGui::SameLine();
  ImGui::BeginDisabled(spec.rows.size() < 2 || spec.kind != FigureKind::heatmaps);
  ImGui::Checkbox("difference B - A", &spec.difference);
  explain(
      "Rows 2.. minus row 1 on a symmetric diverging scale; with the same seed both rows use the same random "
      "draws, so the difference is free of independent noise.");
  ImGui::EndDisabled();
  // The map options below shape heatmaps only: the other kinds draw no colour maps.
  ImGui::BeginDisabled(spec.kind != FigureKind::heatmaps);
  ImGui::SameLine();
  ImGui::Checkbox("one range", &spec.shared_range);
  explain("One colour range for all panels of the same kind (raw maps together, centred maps together).");
  ImGui::SameLine();
  ImGui::Checkbox("hide diagonal", &spec.hide_diagonal);
  explain("Mask the diagonal except row 0 (LN-recency Fig. 1); cosines: the whole diagonal.");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(fh * 6);
  enum_combo("range", spec.range, kRangeModeNames);
  explain(
      "Colour range per panel: all cells, the visible cells (hidden diagonal left out), or robust (1%-99% quantiles).");
  ImGui::SameLine();
  ImGui::Checkbox("grey noise", &spec.grey_noise);
  explain("Centred maps: grey where |value| is within 2 standard errors of 0.");
  ImGui::SameLine();
  ImGui::Checkbox("metric", &spec.show_metric);
  explain("RP (scores, weights) or adjacency (cosines) with its standard error in each panel's title.");
  ImGui::EndDisabled();

  if (spec.rows.empty()) {
    ImGui::TextDisabled(
        "No rows yet: set up a configuration and press \"Add current settings as a row\", or pick a preset.");
    return;
  }
  const float table_h =
      std::min(float(spec.rows.size() + 1) * ImGui::GetFrameHeightWithSpacing() + fh * 0.5f, fh * 9.5f);
  if (!ImGui::BeginTable("##rows", 6, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY,
                         ImVec2(0, table_h)))
    return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("#", ImGuiTableColumnFlags_WidthFixed, fh * 1.5f);
  ImGui::TableSetupColumn("label", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("settings", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("show", ImGuiTableColumnFlags_WidthFixed, fh * 6);
  ImGui::TableSetupColumn("map", ImGuiTableColumnFlags_WidthFixed, fh * 8);
  ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed, fh * 6.5f);
  ImGui::TableHeadersRow();
  int move_from = -1, move_to = -1, remove = -1;
  for (std::size_t r = 0; r < spec.rows.size(); ++r) {
    FigureRow& row = spec.rows[r];
    ImGui::PushID(int(r));
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::Text("%s", spec.difference ? (r == 0 ? "A" : "B") : std::to_string(r + 1).c_str());
    ImGui::TableNextColumn();
    std::string label = row.label.empty() ? short_label(row.settings) : row.label;
    if (input_string("##label", label, -1)) row.label = label == short_label(row.settings) ? "" : label;
    ImGui::TableNextColumn();
    ImGui::Text("n=%d d=%d %s", row.settings.n, row.settings.d, short_label(row.settings).c_str());
    explain(settings_to_json(row.settings).dump().c_str());
    ImGui::TableNextColumn();
    ImGui::SetNextItemWidth(-1);
    // Norm and dR^2-bin figures show the same numbers whatever a row shows; a line per row shows its metric.
    ImGui::BeginDisabled(spec.kind == FigureKind::norms || spec.kind == FigureKind::leakage_bins);
    static constexpr EnumTable<Quantity, 4> kRowQuantities{
        {{Quantity::score, "S"}, {Quantity::weight, "A"}, {Quantity::cosine, "cos"}, {Quantity::norm, "||x||"}}};
    enum_combo("##show", row.quantity, kRowQuantities);
    ImGui::EndDisabled();
    ImGui::TableNextColumn();
    ImGui::SetNextItemWidth(-1);
    ImGui::BeginDisabled(spec.kind != FigureKind::heatmaps);
    static constexpr EnumTable<Transform, 2> kRowTransforms{
        {{Transform::raw, "raw"}, {Transform::diagonal_normalized, "diag.-normalized"}}};
    enum_combo("##map", row.transform, kRowTransforms);
    ImGui::EndDisabled();
    ImGui::TableNextColumn();
    if (ImGui::ArrowButton("##up", ImGuiDir_Up) && r > 0) move_from = int(r), move_to = int(r) - 1;
    ImGui::SameLine(0, 2);
    if (ImGui::ArrowButton("##down", ImGuiDir_Down) && r + 1 < spec.rows.size())
      move_from = int(r), move_to = int(r) + 1;
    ImGui::SameLine(0, 2);
    if (ImGui::SmallButton("x")) remove = int(r);
    explain("Delete this row");
    ImGui::PopID();
  }
  ImGui::EndTable();
  if (move_from >= 0) std::swap(spec.rows[std::size_t(move_from)], spec.rows[std::size_t(move_to)]);
  if (remove >= 0) spec.rows.erase(spec.rows.begin() + remove);
  if (spec.rows.size() < 2) spec.difference = false;
}

}  // namespace

void draw_figure_tab(FigureWorkbench& wb, const Settings& live, const ViewOptions& view) {
  FigureSpec& spec = wb.spec();
  ExportOptions& options = wb.export_options();
  const float fh = ImGui::GetFontSize();
  draw_figure_rows(wb, live, view);
  for (const auto& e : validate(spec))
    ImGui::TextColored(ImVec4(0.9f, 0.3f, 0.25f, 1), "%s: %s", e.setting.c_str(), e.message.c_str());

  // Export line: folder, size, button, last result.
  input_string("folder", wb.export_folder(), fh * 14);
  explain("Folder the export and F12 screenshots go to (created if needed).");
  ImGui::SameLine();
  draw_png_size(options, wb.scene().width);
  ImGui::SameLine();
  ImGui::BeginDisabled(spec.rows.empty());
  if (ImGui::Button("Export figure")) {
    const ExportResult r = wb.export_now(wb.export_folder(), wb.preset(live, view));
    browser::offer_files(wb.export_folder(), r.files);  // the browser build: as downloads
  }
  ImGui::EndDisabled();
  explain(
      "figure.png, figure.svg, one CSV per panel with its SEs (tables: table.csv; line kinds: lines.csv, one line "
      "per point), figure.json and preset.json. F12: window screenshot.");
  if (!wb.message.empty()) {
    ImGui::SameLine();
    ImGui::TextColored(wb.message_error ? ImVec4(0.9f, 0.3f, 0.25f, 1) : ImVec4(0.5f, 0.8f, 0.5f, 1), "%s",
                       wb.message.c_str());
  }
  if (wb.data().samples_target > 0) {
    ImGui::SameLine();
    ImGui::TextDisabled("  %zu runs, %.0f%%", wb.runs().run_count(),
                        100.0 * double(wb.data().samples_done) / double(wb.data().samples_target));
  }

  // Preview: the export's own layout on a white page, fitted into the remaining space.
  if (spec.rows.empty() || wb.scene().width <= 0) return;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float s = std::min(avail.x / wb.scene().width, avail.y / wb.scene().height);
  if (s <= 0) return;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  draw_scene(ImGui::GetWindowDrawList(), wb.scene(), origin, s);
  ImGui::Dummy(ImVec2(wb.scene().width * s, wb.scene().height * s));
}

}  // namespace maskscope::gui
