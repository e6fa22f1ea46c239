// Layout, tab routing, the texture refresh from the newest snapshot, and the menus.
#include "views.hpp"

#include <GLFW/glfw3.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <limits>

#include "core/formats/atomic_file.hpp"

#include "figure_tab.hpp"
#include "core/run/resources.hpp"
#include "core/formats/tensor_analysis.hpp"
#include "live.hpp"

namespace maskscope::gui {

namespace {

// The presentation scale is remembered across sessions in $XDG_CONFIG_HOME/maskscope/ui.json
// (or ~/.config/maskscope/ui.json).
std::filesystem::path ui_config_path() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / "maskscope" / "ui.json";
  if (const char* home = std::getenv("HOME"); home && *home) return std::filesystem::path(home) / ".config" / "maskscope" / "ui.json";
  return {};
}

constexpr float kScaleMin = 1.0f, kScaleMax = 3.0f;
constexpr double kTransitionSeconds = 0.3;

}  // namespace

Views::Views(Controller& controller, RunOptions run_options)
    : controller_(controller), builder_([] { glfwPostEmptyEvent(); }), figure_(std::move(run_options)) {
  const auto path = ui_config_path();
  std::error_code ec;
  if (path.empty() || !std::filesystem::exists(path, ec)) return;
  try {
    std::ifstream in(path);
    const auto j = nlohmann::json::parse(in);
    if (j.contains("presentation_scale") && j.at("presentation_scale").is_number())
      present_scale_ = std::clamp(j.at("presentation_scale").get<float>(), kScaleMin, kScaleMax);
  } catch (const std::exception&) {
    // a damaged settings file is ignored: the default scale applies
  }
}

void Views::set_presentation_scale(float s) {
  present_scale_ = std::clamp(s, kScaleMin, kScaleMax);
  const auto path = ui_config_path();
  if (path.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  std::string error;
  write_file_atomic(path.string(), nlohmann::json{{"presentation_scale", present_scale_}}.dump() + "\n", error);
}

void Views::start_lesson(const Lesson& lesson) {
  lesson_.emplace(lesson);
  apply_step();
  set_status_message("lesson: " + lesson.title + "  (arrows or Page Up / Down: steps; F5: present)");
}

bool Views::load_lesson(const std::string& name_or_path, std::string& error) {
  if (const Lesson* shipped = find_shipped_lesson(name_or_path)) {
    start_lesson(*shipped);
    return true;
  }
  Lesson l;
  if (!load_lesson_file(name_or_path, l, error)) return false;
  start_lesson(l);
  return true;
}

void Views::close_lesson() {
  lesson_.reset();
  set_presenting(false);
}

bool Views::next_step() {
  if (!lesson_ || !lesson_->next()) return false;
  apply_step();
  return true;
}

bool Views::previous_step() {
  if (!lesson_ || !lesson_->previous()) return false;
  apply_step();
  return true;
}

void Views::go_to_step(std::size_t k) {
  if (!lesson_) return;
  lesson_->go(k);
  apply_step();
}

void Views::apply_step() {
  // The maps on screen fade into the new run's over about 300 ms once it has its first samples.
  controller_.set_auto_samples(false);  // the lesson's sample counts rule
  Settings s = lesson_->settings();
  if (lesson_samples_cap_) s.samples = std::min(s.samples, *lesson_samples_cap_);
  transition_from_ = on_screen_.panels;
  transition_pending_ = !on_screen_.panels.empty() && !controller_.settings().same_simulation(s);  // a new run will come
  controller_.edit(s);
  controller_.commit_undo_point();
  const bool light = view_.light_theme;
  view_ = lesson_->view();
  view_.light_theme = light;
  requested_tab_ = true;
  if (view_.tab == Tab::figure) view_.tab = Tab::attention;  // lessons show the live maps
}

void Views::set_presenting(bool on, bool full_screen) {
  presenting_ = on;
  ImGui::GetIO().FontGlobalScale = on ? present_scale_ : 1.0f;
  GLFWwindow* window = glfwGetCurrentContext();
  if (!window || (on && !full_screen)) return;
  // Full screen on the primary monitor (where there is one); back to the window on leaving.
  static int saved[4] = {0, 0, 1280, 800};
  GLFWmonitor* monitor = glfwGetPrimaryMonitor();
  const GLFWvidmode* mode = monitor ? glfwGetVideoMode(monitor) : nullptr;
  if (on && mode && !glfwGetWindowMonitor(window)) {
    glfwGetWindowPos(window, &saved[0], &saved[1]);
    glfwGetWindowSize(window, &saved[2], &saved[3]);
    glfwSetWindowMonitor(window, monitor, 0, 0, mode->width, mode->height, mode->refreshRate);
  } else if (!on && glfwGetWindowMonitor(window)) {
    glfwSetWindowMonitor(window, nullptr, saved[0], saved[1], saved[2], saved[3], 0);
  }
}

bool Views::showing_current_run() const {
  return on_screen_.snap && on_screen_.snap->samples_done > 0 && shown_restart_ == controller_.restarts();
}

bool Views::showing_final_snapshot() const {
  return on_screen_.snap && (on_screen_.snap->finished || on_screen_.snap->cancelled) && shown_restart_ == controller_.restarts();
}

void Views::refresh_textures() {
  auto snap = controller_.snapshot();
  const int restarts = controller_.restarts();
  // Panels built in the background: on screen now unless the view or the run changed since they
  // were asked for. Their texels are ready; only the upload is left for this frame.
  auto is_requested = [this](const std::shared_ptr<const Snapshot>& p) {
    return !requested_.expired() && !requested_.owner_before(p) && !p.owner_before(requested_);
  };
  if (builder_.take(built_) && built_.view == view_ && built_.tag == restarts && is_requested(built_.snap)) {
    std::swap(on_screen_, built_);
    built_.snap.reset();  // the picture before: its memory goes back as soon as nobody else holds it
    for (std::size_t k = 0; k < on_screen_.panels.size(); ++k)
      if (!on_screen_.panels[k].norms) renderer_.upload(int(k), on_screen_.texels[k], on_screen_.panels[k].n);
    now_on_screen();
  }
  if (snap == on_screen_.snap && view_ == on_screen_.view) return;
  const bool new_run = shown_restart_ != restarts;
  if (snap->samples_done == 0 && !new_run) return;
  // From n 128 the panels of a picture with samples are built in the background (a new run's first
  // too): the frame keeps what it shows until they are ready, a few ms later, and stays short. A
  // change of view and a transition are built here, on this frame.
  const bool background = snap->samples_done > 0 && snap->settings.n >= kBackgroundPanelsFrom &&
                          view_ == on_screen_.view && !transition_running();
  if (background) {
    if (!is_requested(snap)) {
      requested_ = snap;
      builder_.request(snap, view_, restarts);
    }
    return;
  }
  requested_.reset();
  on_screen_.snap = snap;
  on_screen_.view = view_;
  build_panels(*snap, view_, on_screen_.panels);
  on_screen_.texels.resize(on_screen_.panels.size());
  for (std::size_t k = 0; k < on_screen_.panels.size(); ++k) {
    const PanelData& p = on_screen_.panels[k];
    if (p.norms) continue;  // bars, no texture
    panel_texels(p, on_screen_.texels[k]);
    renderer_.upload(int(k), on_screen_.texels[k], p.n);
  }
  now_on_screen();
}

void Views::now_on_screen() {
  const bool new_run = shown_restart_ != controller_.restarts();
  if (new_run && on_screen_.snap->samples_done > 0 && transition_pending_) {
    transition_pending_ = false;
    transition_running_ = true;
    transition_start_ = std::chrono::steady_clock::now();
  }
  if (new_run && on_screen_.snap->samples_done > 0) {
    shown_restart_ = controller_.restarts();
    first_heatmap_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - controller_.run_started()).count();
  }
}

void Views::blend_textures() {
  if (!transition_running_) return;
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - transition_start_).count() / kTransitionSeconds;
  const bool done = t >= 1.0;
  const float w = done ? 1.0f : float(t * t * (3 - 2 * t));  // smoothstep
  for (std::size_t k = 0; k < on_screen_.panels.size(); ++k) {
    const PanelData& to = on_screen_.panels[k];
    if (to.norms) continue;
    const PanelData* from = k < transition_from_.size() && transition_from_[k].n == to.n && !transition_from_[k].norms
                                ? &transition_from_[k] : nullptr;
    std::vector<float>& texels = blend_texels_;
    texels.resize(to.value.size());
    for (std::size_t e = 0; e < texels.size(); ++e) {
      const bool noise = e < to.noise.size() && to.noise[e];
      const double b = to.value[e];
      const double a = from ? from->value[e] : b;
      texels[e] = noise ? std::numeric_limits<float>::infinity()
                        : static_cast<float>(std::isfinite(a) && std::isfinite(b) ? (1 - w) * a + w * b : b);
    }
    renderer_.upload(int(k), texels, to.n);
  }
  if (done) {
    transition_running_ = false;
    transition_from_.clear();
  }
}

void Views::draw_tab_content() {
  const LessonPointer* point = lesson_ && lesson_->current().point ? &*lesson_->current().point : nullptr;
  if (on_screen_.snap) switch (view_.tab) {
      case Tab::attention: draw_heatmap_grid(*on_screen_.snap, on_screen_.panels, view_, renderer_, false, point); break;
      case Tab::diagonal: draw_heatmap_grid(*on_screen_.snap, on_screen_.panels, view_, renderer_, true, point); break;
      case Tab::h_of_j: draw_h_of_j_tab(*on_screen_.snap, view_); break;
      case Tab::metrics: draw_metrics_tab(*on_screen_.snap); break;
      case Tab::figure: draw_figure_tab(figure_, controller_.settings(), view_); break;
      case Tab::leakage: leakage_.draw(*on_screen_.snap, renderer_, view_, !controller_.showing_tensors()); break;
    }
  if (view_.tab != Tab::leakage) leakage_.stop();  // its twin run costs CPU only while shown
}

void Views::draw(float ui_scale) {
  controller_.poll();
  draw_menu();
  figure_.refresh(false);
  renderer_.begin_frame();
  refresh_textures();
  blend_textures();

  if (presenting_) {
    // Controls hidden: the maps above, the step's text large below, the counter and progress quiet.
    const float text_h = ImGui::GetContentRegionAvail().y * 0.3f;
    ImGui::BeginChild("##present_main", ImVec2(0, -text_h), false);
    draw_tab_content();
    ImGui::EndChild();
    draw_lesson_panel(ui_scale, true);
    return;
  }

  ImGui::BeginChild("##controls", ImVec2(340.0f * ui_scale, 0), true);
  if (controller_.showing_tensors()) {
    switch (draw_tensor_controls(controller_, view_, tensor_info_, ui_scale)) {
      case TensorAction::compare: compare_tensors_with_simulation(); break;
      case TensorAction::close: controller_.close_tensors(); break;
      case TensorAction::none: break;
    }
  } else {
    draw_controls(controller_, view_, edit_errors_, ui_scale);
  }
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginGroup();
  const float status_h = ImGui::GetFrameHeightWithSpacing() + ImGui::GetStyle().WindowPadding.y;
  if (lesson_) draw_lesson_panel(ui_scale, false);
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
  draw_tab_content();
  ImGui::EndChild();
  draw_status_line(controller_, on_screen_.panels, message_, message_error_);
  ImGui::EndGroup();
  draw_help_windows(&show_guide_, &show_keys_);
}

void Views::on_key(int key, int mods) {
  if (key == GLFW_KEY_F1) show_guide_ = !show_guide_;
  if (key == GLFW_KEY_F5) set_presenting(!presenting_);
  if (key == GLFW_KEY_ESCAPE && presenting_) set_presenting(false);
  const bool ctrl = (mods & GLFW_MOD_CONTROL) != 0;
  if (ImGui::GetIO().WantTextInput) return;  // a text field keeps its own keys
  if (lesson_ && !ctrl) {  // presenter remotes send arrows and Page Up / Down
    if (key == GLFW_KEY_RIGHT || key == GLFW_KEY_PAGE_DOWN || key == GLFW_KEY_SPACE) next_step();
    if (key == GLFW_KEY_LEFT || key == GLFW_KEY_PAGE_UP || key == GLFW_KEY_BACKSPACE) previous_step();
  }
  if (ctrl && presenting_) {
    if (key == GLFW_KEY_EQUAL || key == GLFW_KEY_KP_ADD) set_presentation_scale(present_scale_ + 0.1f);
    if (key == GLFW_KEY_MINUS || key == GLFW_KEY_KP_SUBTRACT) set_presentation_scale(present_scale_ - 0.1f);
    ImGui::GetIO().FontGlobalScale = present_scale_;
  }
  if (!ctrl) return;
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

bool Views::open_tensors(const std::string& folder, std::string& error) {
  try {
    const TensorSet t = maskscope::open_tensors(folder);
    if (std::uint64_t need = tensor_analysis_bytes(t); need > kWindowMemoryBudget) {
      error = folder + ": " + std::to_string(t.L) + " layers x " + std::to_string(t.H) + " heads at T = " + std::to_string(t.T) +
              " need about " + bytes_text(need) + "; the window allows " + bytes_text(kWindowMemoryBudget) +
              " (maskscope-cli analyze has no such limit)";
      return false;
    }
    auto snap = std::make_shared<Snapshot>(analyze_tensors(t));
    tensor_info_ = {folder, t.model, mask_to_string(tensor_settings(t)), t.P, t.L, t.H, t.T, t.d, t.weights != nullptr};
    const std::string label = (t.model.empty() ? folder : t.model) + " (" + std::to_string(t.L) + " layers x " +
                              std::to_string(t.H) + " heads, T " + std::to_string(t.T) + ")";
    controller_.show_tensors(std::move(snap), label);
    set_status_message("opened " + folder);
    return true;
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
}

void Views::compare_tensors_with_simulation() {
  auto snap = controller_.snapshot();
  if (!controller_.showing_tensors() || !snap) return;
  const Settings model = snap->settings;
  Settings sim;  // the parameter-free decoder (LN-recency's setting) at the model's n
  sim.n = model.n;
  sim.layers = std::min(model.layers, Limits::layers_max);
  sim.samples = auto_sample_count(sim);
  FigureSpec spec;
  spec.title = tensor_info_.model.empty() ? "Model vs simulation" : tensor_info_.model + " vs the parameter-free decoder";
  spec.kind = FigureKind::heatmaps;
  spec.layers.clear();
  for (int l = 1; l <= std::min(model.layers, 4); ++l) spec.layers.push_back(l);
  FigureRow m;
  // Row titles are drawn beside the panels: a long model name would run over them.
  m.label = tensor_info_.model.empty() || tensor_info_.model.size() > 24 ? "model" : tensor_info_.model;
  m.settings = model;
  m.quantity = view_.quantity;
  const Transform transform = view_.tab == Tab::diagonal ? Transform::diagonal_normalized : Transform::raw;
  m.transform = transform;
  FigureRow p;
  p.label = "parameter-free";
  p.settings = sim;
  p.quantity = view_.quantity;
  if (tensor_info_.d == 0 && (p.quantity == Quantity::cosine || p.quantity == Quantity::norm))
    m.quantity = p.quantity = Quantity::score;  // no hidden states: no cosines or norms to compare
  p.transform = transform;
  spec.rows = {m, p};
  figure_.runs().set_stored({{model, snap}});
  figure_.spec() = spec;
  figure_.layers_text() = layers_to_text(spec.layers);
  figure_.refresh(true);
  view_.tab = Tab::figure;
  requested_tab_ = true;
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
    explain("A real model's attention logits (and weights, hidden states) exported as NumPy arrays with a "
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
    explain("Full screen, controls hidden, the step's text large. Arrows or Page Up / Down move between steps, "
            "Ctrl +/- scales the text for a projector (remembered), Esc leaves.");
    if (lesson_ && ImGui::MenuItem("Close lesson")) close_lesson();
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
