// The window's layout and tab routing: controls, the tab bar and its content, the status line, and
// the key presses (the lessons, menus, textures and tensors are in the files beside this one).
#include "window/views/views.hpp"

#include <GLFW/glfw3.h>
#include <imgui.h>

#include "window/figure/figure_tab.hpp"
#include "window/live/live.hpp"
#include "window/sweep/sweep_tab.hpp"
#include "window/views/ui_config.hpp"

namespace maskscope::gui {

Views::Views(Controller& controller, RunOptions run_options)
    : controller_(controller),
      builder_([] { glfwPostEmptyEvent(); }),
      figure_(std::move(run_options)),
      sweep_([] { glfwPostEmptyEvent(); }) {
  present_scale_ = load_presentation_scale(present_scale_);
}

Preset Views::current_preset() const {
  Preset p = figure_.preset(controller_.settings(), view_);
  if (view_.tab == Tab::sweep) p.sweep = sweep_.view();
  return p;
}

bool Views::showing_current_run() const {
  return on_screen_.snap && on_screen_.snap->samples_done > 0 && shown_restart_ == controller_.restarts();
}

bool Views::showing_final_snapshot() const {
  return on_screen_.snap && (on_screen_.snap->finished || on_screen_.snap->cancelled) &&
         shown_restart_ == controller_.restarts();
}

bool Views::tab_settled() const {
  switch (view_.tab) {
    // A model's tensors have no twin; a sweep that cannot run (its plan or a point refused) shows why: settled too.
    case Tab::leakage: return controller_.showing_tensors() || (on_screen_.snap && leakage_.settled(*on_screen_.snap));
    case Tab::probes: return controller_.showing_tensors() || probes_.settled(controller_.settings());
    case Tab::sweep:
      return sweep_.complete() || !sweep_.plan().error.empty() || (sweep_.state() && !sweep_.state()->error.empty());
    default: return true;
  }
}

void Views::draw_tab_content() {
  const LessonPointer* point = lesson_ && lesson_->current().point ? &*lesson_->current().point : nullptr;
  if (on_screen_.snap) switch (view_.tab) {
      case Tab::attention:
      case Tab::diagonal: draw_heatmap_grid(*on_screen_.snap, on_screen_.panels, view_, renderer_, point); break;
      case Tab::h_of_j: draw_h_of_j_tab(*on_screen_.snap, view_); break;
      case Tab::metrics: draw_metrics_tab(*on_screen_.snap); break;
      case Tab::figure: draw_figure_tab(figure_, controller_.settings(), view_); break;
      case Tab::leakage: leakage_.draw(*on_screen_.snap, renderer_, view_, !controller_.showing_tensors()); break;
      case Tab::sweep: draw_sweep_tab(sweep_, controller_, current_preset()); break;
      case Tab::probes:
        if (controller_.showing_tensors()) probes_.draw_tensors(tensor_info_.folder, tensor_info_.prompts);
        else probes_.draw(controller_.settings());
        break;
      case Tab::histograms: draw_histograms_tab(*on_screen_.snap, controller_); break;
      case Tab::training: training_.draw(controller_); break;
    }
  if (view_.tab != Tab::leakage) leakage_.stop();  // its twin run costs CPU only while shown
}

void Views::draw(float ui_scale) {
  controller_.poll();
  training_.tick(controller_);  // Play's steps, the newest checkpoint followed (never waits on a step)
  // A stage's Gram matrix needs Settings::stage_grams: the run restarts with it on rather than showing
  // an empty map (docs/window.md). A stage the family lacks (keys of the parameter-free model) falls
  // back to the scores.
  if (is_stage(view_.quantity) && !controller_.showing_tensors()) {
    const Settings& s = controller_.settings();
    if (!family_has(s, view_.quantity)) view_.quantity = Quantity::score;
    else if (!s.stage_grams && !controller_.edit(settings_showing(s, view_.quantity)).empty())
      view_.quantity = Quantity::score;  // refused (the memory budget): not again every frame
  }
  draw_menu();
  figure_.refresh(false);
  // The sweep runs while its tab is shown (over a model's tensors there is nothing to sweep).
  sweep_.refresh(controller_.settings(), view_.tab == Tab::sweep && !controller_.showing_tensors());
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
        "Each diagonal (offset i - j) minus its mean: relative patterns vanish, absolute position remains (Behind RoPE "
        "Fig. 4).");
    tab("h(j) and norms", Tab::h_of_j,
        "Inverse norms after layer 1 beside the closed form (LN-recency Eq. 42, Behind RoPE Eq. 3).");
    tab("Metrics", Tab::metrics, "Recency probability and adjacency score per layer, with standard errors and ties.");
    tab("Leakage", Tab::leakage,
        "Absolute-position leakage dR^2 (Ruscio et al.): how much the query position explains beyond the relative "
        "offset, causal beside bidirectional, by position bin, and where in the map it lives.");
    tab("Sweep", Tab::sweep,
        "A metric against one or two settings (a phase diagram), every point refined live with common random "
        "numbers; click a point to set the controls to it.");
    tab("Probes", Tab::probes,
        "Position probes (Zuo et al. Fig. 8): Pearson-R and NRMSE per layer from X, Var_X and Sim_X of one fixed "
        "network, computed on demand.");
    tab("Histograms", Tab::histograms,
        "Cosine differences over triples a < b < c (Zuo et al. Fig. 2) and each sample's adjacency (Fig. 13).");
    tab("Training", Tab::training,
        "Train the random-weight network on a task or a token file in the background; loss, accuracy and per-layer "
        "adjacency, RP and sink weight against step; the step scrubber makes a checkpoint the live model of every "
        "tab.");
    tab("Figure", Tab::figure, "Comparison grids of configurations for papers, exported as PNG, SVG and CSV.");
    ImGui::EndTabBar();
    requested_tab_ = false;
  }
  draw_tab_content();
  ImGui::EndChild();
  const std::string training = training_.status_text(on_screen_.snap ? &on_screen_.snap->settings : nullptr);
  draw_status_line(controller_, on_screen_.panels, training.empty() ? message_ : training + "   " + message_,
                   message_error_);
  ImGui::EndGroup();
  draw_help_windows(&show_guide_, &show_keys_);
}

void Views::on_key(int key, int mods) {
  if (key == GLFW_KEY_F1) show_guide_ = !show_guide_;
  if (key == GLFW_KEY_F5) set_presenting(!presenting_);
  if (key == GLFW_KEY_ESCAPE && presenting_) set_presenting(false);
  const bool ctrl = (mods & GLFW_MOD_CONTROL) != 0;
  if (ImGui::GetIO().WantTextInput) return;  // a text field keeps its own keys
  if (lesson_ && !ctrl) {                    // presenter remotes send arrows and Page Up / Down
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

}  // namespace maskscope::gui
