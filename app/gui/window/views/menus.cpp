// The menu bar (Presets, File, Lessons, Help) and its dialogs: loading and saving presets, opening
// a tensor folder or a lesson file.
#include "window/views/views.hpp"

#include <imgui.h>

#include <algorithm>
#include <filesystem>

#include "window/browser.hpp"
#include "window/figure/figure_tab.hpp"  // input_string
#include "window/live/live.hpp"
#include "common/train/run_preset.hpp"

namespace maskscope::gui {

void Views::apply_preset(const Preset& given) {
  Preset p = given;
  // A trained network's preset from the menu: its rows read the preset's run folder; a missing one is offered in
  // the Training tab (Start trains it), with how long it takes, never trained silently.
  const bool unbound = std::any_of(p.figure.rows.begin(), p.figure.rows.end(), [](const FigureRow& r) {
    return !r.state.empty() && r.settings.checkpoint.empty();
  });
  if (unbound) {
    std::string error;
    if (!bind_preset_run(p, preset_run_folder(p, ""), error)) {
      // Missing folders (the preset's own or a row's): how long each takes; the first is offered in the tab.
      const std::vector<PresetRun> missing = missing_preset_runs(p, "");
      set_status_message(missing.empty() ? error : missing_runs_message(p, ""), true);
      try {
        if (!missing.empty()) training_.prepare(preset_training(missing.front(), missing.front().folder));
      } catch (const std::exception&) {}
    }
  }
  controller_.set_auto_samples(false);
  controller_.edit(p.settings);
  controller_.commit_undo_point();
  const bool light = view_.light_theme;
  view_ = p.view;
  view_.light_theme = light;  // the theme is the user's, not the figure's
  requested_tab_ = true;
  figure_.load(p);
  if (p.sweep) {
    sweep_.view() = *p.sweep;
    sweep_.export_options() = p.export_options;
  }
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
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open tensors...")) open_tensors_dialog_ = true;
    explain(
        "A real model's attention logits (and weights, hidden states) exported as NumPy arrays with a "
        "manifest.json (tools/export_attention.py): every tab then shows that model.");
    if (controller_.showing_tensors() && ImGui::MenuItem("Close tensors")) controller_.close_tensors();
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Lessons")) {
    for (const Lesson& l : shipped_lessons()) {
      if (ImGui::MenuItem(l.title.c_str())) start_lesson(l);
      if (!l.description.empty()) explain(l.description.c_str());
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Open lesson file...")) open_lesson_ = true;
    if (ImGui::MenuItem("Presentation mode", "F5", presenting_)) set_presenting(!presenting_);
    explain(
        "Full screen, controls hidden, the step's text large. Arrows or Page Up / Down move between steps, "
        "Ctrl +/- scales the text for a projector (remembered), Esc leaves.");
    if (lesson_ && ImGui::MenuItem("Close lesson")) close_lesson();
    ImGui::EndMenu();
  }
  if (browser::kInBrowser && ImGui::MenuItem("Copy link")) {
    link_ = browser::copy_link(controller_.settings(), view_);
    set_status_message("link copied: " + link_);
  }
  if (browser::kInBrowser)
    explain("A link that opens this view: the settings that differ from the defaults and the tab.");
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
  if (open_tensors_dialog_) ImGui::OpenPopup("Open tensors");
  open_tensors_dialog_ = false;
  if (ImGui::BeginPopupModal("Open tensors", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::TextUnformatted("Tensor folder (manifest.json with logits.npy; see docs/tensors.md):");
    input_string("##tensors", tensors_path_, ImGui::GetFontSize() * 28);
    if (ImGui::Button("Open")) {
      std::string error;
      if (open_tensors(tensors_path_, error)) ImGui::CloseCurrentPopup();
      else set_status_message(error, true);
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
  if (open_lesson_) ImGui::OpenPopup("Open lesson");
  open_lesson_ = false;
  if (ImGui::BeginPopupModal("Open lesson", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::TextUnformatted("Lesson file (JSON, see docs/window.md) or a shipped lesson's name:");
    input_string("##lessonpath", lesson_path_, ImGui::GetFontSize() * 28);
    if (ImGui::Button("Open")) {
      std::string error;
      if (load_lesson(lesson_path_, error)) ImGui::CloseCurrentPopup();
      else set_status_message(error, true);
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
    if (message_error_ && !message_.empty()) ImGui::TextColored(ImVec4(0.9f, 0.3f, 0.25f, 1), "%s", message_.c_str());
    ImGui::EndPopup();
  }
  if (open_load_) ImGui::OpenPopup("Load preset");
  if (open_save_) ImGui::OpenPopup("Save preset");
  open_load_ = open_save_ = false;
  for (const bool save : {false, true}) {
    if (!ImGui::BeginPopupModal(save ? "Save preset" : "Load preset", nullptr, ImGuiWindowFlags_AlwaysAutoResize))
      continue;
    ImGui::TextUnformatted(save ? "Write the settings, view and figure to a JSON preset:"
                                : "Preset file (JSON) or a shipped preset's name:");
    input_string("##path", preset_path_, ImGui::GetFontSize() * 28);
    if (ImGui::Button(save ? "Save" : "Load")) {
      std::string error;
      bool ok;
      if (save) {
        Preset p = current_preset();
        p.name = std::filesystem::path(preset_path_).stem().string();
        ok = save_preset_file(preset_path_, p, error);
        if (ok) figure_.set_preset_name(p.name);
        if (ok) browser::offer_files("", {preset_path_});  // the browser build: as a download
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
