// Layout, tab routing, the texture refresh from the newest snapshot, and the menus.
#include "views.hpp"

#include <GLFW/glfw3.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "figure_tab.hpp"
#include "live.hpp"

namespace maskscope::gui {

Views::Views(Controller& controller, RunOptions run_options) : controller_(controller), figure_(std::move(run_options)) {}

bool Views::showing_final_snapshot() const {
  return shown_ && (shown_->finished || shown_->cancelled) && shown_restart_ == controller_.restarts();
}

void Views::refresh_textures() {
  auto snap = controller_.snapshot();
  if (snap == shown_ && view_ == uploaded_view_) return;
  const bool new_run = shown_restart_ != controller_.restarts();
  shown_ = snap;
  uploaded_view_ = view_;
  if (snap->samples_done == 0 && !new_run) return;
  panels_ = build_panels(*snap, view_);
  const int n = snap->settings.n;
  std::vector<float> texels(std::size_t(n) * n);
  for (std::size_t k = 0; k < panels_.size(); ++k) {
    const PanelData& p = panels_[k];
    if (p.norms) continue;  // bars, no texture
    for (std::size_t e = 0; e < texels.size(); ++e)  // +inf marks noise cells for the shader
      texels[e] = e < p.noise.size() && p.noise[e] ? std::numeric_limits<float>::infinity() : static_cast<float>(p.value[e]);
    renderer_.upload(int(k), texels, n);
  }
  if (new_run && snap->samples_done > 0) {
    shown_restart_ = controller_.restarts();
    first_heatmap_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - controller_.run_started()).count();
  }
}

void Views::draw(float ui_scale) {
  controller_.poll();
  draw_menu();
  figure_.refresh(false);
  renderer_.begin_frame();
  refresh_textures();

  ImGui::BeginChild("##controls", ImVec2(340.0f * ui_scale, 0), true);
  draw_controls(controller_, view_, edit_errors_, ui_scale);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginGroup();
  const float status_h = ImGui::GetFrameHeightWithSpacing() + ImGui::GetStyle().WindowPadding.y;
  ImGui::BeginChild("##main", ImVec2(0, -status_h), false);
  if (ImGui::BeginTabBar("##tabs")) {
    // The tab asked for (command line, preset) is selected once; afterwards the user's clicks rule.
    const bool request = requested_tab_;
    const Tab wanted = view_.tab;
    auto tab = [&](const char* label, Tab t, const char* tip) {
      const ImGuiTabItemFlags flags = (request && wanted == t) ? ImGuiTabItemFlags_SetSelected : 0;
      const bool open = ImGui::BeginTabItem(label, nullptr, flags);
      explain(tip);
      if (open) {
        if (!request) view_.tab = t;
        ImGui::EndTabItem();
      }
    };
    tab("Attention", Tab::attention, "Per-layer maps of scores S, weights A or output cosines, averaged over samples.");
    tab("Diagonal-normalized", Tab::diagonal,
        "Each diagonal (offset i - j) minus its mean: relative patterns vanish, absolute position remains (Behind RoPE Fig. 4).");
    tab("h(j) and norms", Tab::h_of_j, "Inverse norms after layer 1 beside the closed form (LN-recency Eq. 42, Behind RoPE Eq. 3).");
    tab("Metrics", Tab::metrics, "Recency probability and adjacency score per layer, with standard errors and ties.");
    tab("Leakage", Tab::leakage,
        "Absolute-position leakage dR^2 (Ruscio et al.): how much the query position explains beyond the relative "
        "offset, causal beside bidirectional, by position bin, and where in the map it lives.");
    tab("Figure", Tab::figure, "Comparison grids of configurations for papers, exported as PNG, SVG and CSV.");
    ImGui::EndTabBar();
    requested_tab_ = false;
  }
  if (shown_) switch (view_.tab) {
      case Tab::attention: draw_heatmap_grid(*shown_, panels_, view_, renderer_, false); break;
      case Tab::diagonal: draw_heatmap_grid(*shown_, panels_, view_, renderer_, true); break;
      case Tab::h_of_j: draw_h_of_j_tab(*shown_, view_); break;
      case Tab::metrics: draw_metrics_tab(*shown_); break;
      case Tab::figure: draw_figure_tab(figure_, controller_.settings(), view_); break;
      case Tab::leakage: leakage_.draw(*shown_, renderer_, view_); break;
    }
  if (view_.tab != Tab::leakage) leakage_.stop();  // its twin run costs CPU only while shown
  ImGui::EndChild();
  draw_status_line(controller_, panels_, message_, message_error_);
  ImGui::EndGroup();
  draw_help_windows(&show_guide_, &show_keys_);
}

void Views::on_key(int key, int mods) {
  if (key == GLFW_KEY_F1) show_guide_ = !show_guide_;
  const bool ctrl = (mods & GLFW_MOD_CONTROL) != 0;
  if (!ctrl || ImGui::GetIO().WantTextInput) return;  // a text field keeps its own Ctrl+Z
  if (key == GLFW_KEY_Z) (mods & GLFW_MOD_SHIFT) ? controller_.redo() : controller_.undo();
  if (key == GLFW_KEY_Y) controller_.redo();
}

void Views::apply_preset(const Preset& p) {
  controller_.set_auto_samples(false);
  controller_.edit(p.settings);
  controller_.commit_undo_point();
  const bool light = view_.light_theme;
  view_ = p.view;
  view_.light_theme = light;  // the theme is the user's, not the figure's
  requested_tab_ = true;
  figure_.load(p);
}

bool Views::load_preset(const std::string& path, std::string& error) {
  Preset p;
  if (const Preset* shipped = find_shipped_preset(path)) p = *shipped;
  else if (!load_preset_file(path, p, error)) return false;
  apply_preset(p);
  return true;
}

void Views::draw_menu() {
  if (!ImGui::BeginMenuBar()) return;
  if (ImGui::BeginMenu("Presets")) {
    for (const Preset& p : shipped_presets()) {
      if (ImGui::MenuItem(p.name.c_str())) apply_preset(p);
      if (!p.description.empty()) explain(p.description.c_str());
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Load preset file...")) open_load_ = true;
    if (ImGui::MenuItem("Save preset as...")) open_save_ = true;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    if (ImGui::MenuItem("What am I looking at?", "F1")) show_guide_ = true;
    if (ImGui::MenuItem("Keyboard shortcuts")) show_keys_ = true;
    ImGui::EndMenu();
  }
  ImGui::TextDisabled("  %s", figure_.preset_name().c_str());
  ImGui::EndMenuBar();
  draw_preset_dialogs();
}

void Views::draw_preset_dialogs() {
  if (open_load_) ImGui::OpenPopup("Load preset");
  if (open_save_) ImGui::OpenPopup("Save preset");
  open_load_ = open_save_ = false;
  for (const bool save : {false, true}) {
    if (!ImGui::BeginPopupModal(save ? "Save preset" : "Load preset", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) continue;
    ImGui::TextUnformatted(save ? "Write the settings, view and figure to a JSON preset:" : "Preset file (JSON) or a shipped preset's name:");
    input_string("##path", preset_path_, ImGui::GetFontSize() * 28);
    if (ImGui::Button(save ? "Save" : "Load")) {
      std::string error;
      bool ok;
      if (save) {
        Preset p = current_preset();
        p.name = std::filesystem::path(preset_path_).stem().string();
        ok = save_preset_file(preset_path_, p, error);
        if (ok) figure_.set_preset_name(p.name);
      } else {
        ok = load_preset(preset_path_, error);
      }
      set_status_message(ok ? (save ? "saved " : "loaded ") + preset_path_ : error, !ok);
      if (ok) ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
    if (message_error_ && !message_.empty()) ImGui::TextColored(ImVec4(0.9f, 0.3f, 0.25f, 1), "%s", message_.c_str());
    ImGui::EndPopup();
  }
}

}  // namespace maskscope::gui
