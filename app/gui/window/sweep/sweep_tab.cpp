// The Sweep tab: what to sweep (metric, one or two settings and their values, layer, target SE, contours), the
// chart as it refines (the export's own layout, scene_draw.hpp), hover for a point's numbers, click to set the
// live controls to a point, and export (PNG of any size, SVG, CSV, preset).
#include "window/sweep/sweep_tab.hpp"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/stats/metric_table.hpp"
#include "common/sweep/sweep_progress.hpp"
#include "window/browser.hpp"
#include "window/figure/figure_tab.hpp"
#include "window/figure/scene_draw.hpp"
#include "window/live/live.hpp"

namespace maskscope::gui {

namespace {

const ImVec4 kError(0.9f, 0.3f, 0.25f, 1);

// The metric's name without its cell ("score:9,0" -> "score") and the cell.
struct MetricChoice {
  std::string base;
  int i = 0, j = 0;
};
MetricChoice split_metric(const std::string& m) {
  MetricChoice c{m};
  const std::size_t colon = m.find(':');
  if (colon == std::string::npos) return c;
  c.base = m.substr(0, colon);
  std::sscanf(m.c_str() + colon + 1, "%d,%d", &c.i, &c.j);
  return c;
}

// The metric menu: the metric table's sweepable rows, then one cell of the score or weight map.
struct MetricMenu {
  std::vector<std::string> keys, names;
  std::string help;
};
const MetricMenu& metric_menu() {
  static const MetricMenu menu = [] {
    MetricMenu m;
    for (const MetricInfo& row : metric_table())
      if (row.sweepable) {
        m.keys.emplace_back(row.key);
        m.names.emplace_back(row.name);
        m.help += std::string(row.label) + ": " + std::string(row.description) + ". ";
      }
    m.keys.insert(m.keys.end(), {"score", "weight"});
    m.names.insert(m.names.end(), {"score S[i,j]", "weight A[i,j]"});
    m.help += "A cell: one entry of the mean map (0-based query i, key j).";
    return m;
  }();
  return menu;
}

void draw_metric(SweepView& v, const Settings& live) {
  const MetricMenu& menu = metric_menu();
  const float fh = ImGui::GetFontSize();
  MetricChoice c = split_metric(v.metric);
  std::size_t k = 0;
  for (std::size_t m = 0; m < menu.keys.size(); ++m)
    if (c.base == menu.keys[m]) k = m;
  ImGui::SetNextItemWidth(fh * 12);
  if (ImGui::BeginCombo("metric", menu.names[k].c_str())) {
    for (std::size_t m = 0; m < menu.keys.size(); ++m)
      if (ImGui::Selectable(menu.names[m].c_str(), m == k)) {
        c.base = menu.keys[m];
        if ((c.base == "score" || c.base == "weight") && c.i == 0 && c.j == 0) c.i = live.n - 1;
      }
    ImGui::EndCombo();
  }
  explain(menu.help.c_str());
  if (c.base == "score" || c.base == "weight") {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(fh * 5);
    ImGui::InputInt("i", &c.i);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(fh * 5);
    ImGui::InputInt("j", &c.j);
    c.i = std::max(0, c.i);
    c.j = std::max(0, c.j);
    v.metric = c.base + ":" + std::to_string(c.i) + "," + std::to_string(c.j);
  } else {
    v.metric = c.base;
  }
}

// One axis: the setting and its values. `optional`: the second axis, which may be "(none)".
void draw_axis(SweepView& v, std::size_t k) {
  const float fh = ImGui::GetFontSize();
  const auto& keys = sweepable_keys();
  const bool present = k < v.axes.size();
  std::string current = present ? v.axes[k].key : "(none)";
  ImGui::PushID(int(k));
  ImGui::SetNextItemWidth(fh * 7);
  if (ImGui::BeginCombo(k == 0 ? "sweep" : "and", current.c_str())) {
    if (k == 1 && ImGui::Selectable("(none)", !present)) v.axes.resize(1);
    for (const std::string& key : keys) {
      if (k == 1 && key == v.axes[0].key) continue;
      if (ImGui::Selectable(key.c_str(), key == current)) {
        if (present) v.axes[k] = {key, default_axis_values(key)};
        else v.axes.push_back({key, default_axis_values(key)});
      }
    }
    ImGui::EndCombo();
  }
  explain(k == 0 ? "The setting on the x axis; every other setting comes from the live controls."
                 : "A second setting: two numeric settings with 5 or more values each give a heat map (phase "
                   "diagram) of one layer; otherwise one line per value of one of them.");
  if (k < v.axes.size()) {
    ImGui::SameLine();
    std::string values = v.axes[k].values;
    if (input_string("values", values, fh * 9)) v.axes[k].values = values;
    explain("a,b,c or START:STOP:COUNT (linear) or START:STOP:COUNTlog, as maskscope-cli sweep --vary.");
  }
  ImGui::PopID();
}

void draw_settings(SweepWorkbench& wb, const Settings& live) {
  SweepView& v = wb.view();
  const float fh = ImGui::GetFontSize();
  // Row 1: what is measured and how precisely.
  draw_metric(v, live);
  int max_layers = 1;
  for (const Settings& p : wb.plan().points) max_layers = std::max(max_layers, p.layers);
  if (wb.plan().points.empty()) max_layers = live.layers;
  const bool one_layer = v.axes.size() == 2;
  ImGui::SameLine();
  ImGui::SetNextItemWidth(fh * 4);
  const std::string layer_text = v.layer == 0 ? (one_layer ? "last" : "all") : std::to_string(v.layer);
  if (ImGui::BeginCombo("layer", layer_text.c_str())) {
    if (ImGui::Selectable(one_layer ? "last" : "all", v.layer == 0)) v.layer = 0;
    for (int l = 1; l <= max_layers; ++l)
      if (ImGui::Selectable(std::to_string(l).c_str(), v.layer == l)) v.layer = l;
    ImGui::EndCombo();
  }
  explain("One line per layer (all), or one layer. Two swept settings show one layer (last: each point's last).");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(fh * 5);
  double se = v.target_se;
  if (ImGui::InputDouble("target SE", &se, 0, 0, "%.4g")) v.target_se = std::clamp(se, 0.0, SweepViewLimits::se_max);
  explain(
      "A point stops once the metric's standard error is at most this in every layer (0: every point to its cap). "
      "Points refine together: each first gets a few samples, then all get more.");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(fh * 6);
  long long cap = v.samples;
  if (ImGui::InputScalar("cap", ImGuiDataType_S64, &cap))
    v.samples = std::clamp<long long>(cap, 1, SweepViewLimits::samples_max);
  explain("Samples per point at most.");
  // Row 2: what is swept.
  draw_axis(v, 0);
  ImGui::SameLine(0, fh);
  draw_axis(v, 1);
  if (wb.picture().heat_map) {
    ImGui::SameLine(0, fh);
    input_string("contours", v.contours, fh * 6);
    explain("Contour levels, comma separated (RP: 0.5 = no bias, 0.6).");
  }
}

}  // namespace

void draw_sweep_tab(SweepWorkbench& wb, Controller& controller, const Preset& preset) {
  const float fh = ImGui::GetFontSize();
  draw_settings(wb, controller.settings());
  const SweepPlan& plan = wb.plan();
  if (!plan.error.empty()) ImGui::TextColored(kError, "%s", plan.error.c_str());
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  ImGui::TextWrapped(
      "Common random numbers: every point draws the same inputs for sample s (same seed), so differences between "
      "neighbouring points are far more precise than each point's \u00b11 SE and the curve is smooth.");
  ImGui::PopStyleColor();

  // Export line: folder, PNG size, button, last result.
  ExportOptions& options = wb.export_options();
  input_string("folder", wb.export_folder(), fh * 12);
  explain("Folder the export goes to (created if needed).");
  ImGui::SameLine();
  draw_png_size(options, wb.picture().scene.width);
  ImGui::SameLine();
  ImGui::BeginDisabled(!wb.state());
  if (ImGui::Button("Export sweep")) {
    const ExportResult r = wb.export_now(wb.export_folder(), preset);
    browser::offer_files(wb.export_folder(), r.files);  // the browser build: as downloads
  }
  ImGui::EndDisabled();
  explain(
      "sweep.png, sweep.svg, sweep.csv (one row per point and layer: swept values, metric, SE, samples, ties) "
      "and preset.json.");
  if (!wb.message.empty()) {
    ImGui::SameLine();
    ImGui::TextColored(wb.message_error ? kError : ImVec4(0.5f, 0.8f, 0.5f, 1), "%s", wb.message.c_str());
  }
  if (auto st = wb.state()) {  // on a line of its own: beside the export line it ran off the window
    const SweepProgress progress = sweep_progress(*st, wb.plan().metric, wb.view().target_se);
    ImGui::TextDisabled("stage %d, %.1f s: %s", st->stages, st->elapsed_s, sweep_progress_text(progress).c_str());
  }

  // The chart: the export's own layout, fitted into the remaining space; hover and click on points.
  const Scene& scene = wb.picture().scene;
  if (scene.width <= 0) return;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float s = std::min(avail.x / scene.width, avail.y / scene.height);
  if (s <= 0) return;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  draw_scene(ImGui::GetWindowDrawList(), scene, origin, s);
  ImGui::InvisibleButton("##sweep_chart", ImVec2(scene.width * s, scene.height * s));
  if (!ImGui::IsItemHovered()) return;
  const ImVec2 m = ImGui::GetIO().MousePos;
  const int id = chart_hit(wb.picture().hits, (m.x - origin.x) / s, (m.y - origin.y) / s, 6.0f / s);
  if (id < 0) return;
  const std::string text = wb.point_text(id);
  if (!text.empty()) ImGui::SetTooltip("%s", text.c_str());
  if (ImGui::IsItemClicked(ImGuiMouseButton_Left)) {
    if (auto target = wb.live_settings_at(id, controller.settings())) {
      controller.commit_undo_point();
      controller.edit(*target);
      controller.commit_undo_point();
    }
  }
}

}  // namespace maskscope::gui
