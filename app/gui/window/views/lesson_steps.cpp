// Lessons in the window: starting one, moving between its steps (each applies its settings and
// view), and presentation mode (full screen, the text scale remembered in ui_config.hpp).
#include "window/views/views.hpp"

#include <GLFW/glfw3.h>
#include <imgui.h>

#include <algorithm>
#include <filesystem>

#include "window/browser.hpp"
#include "window/views/ui_config.hpp"
#include "common/train/run_preset.hpp"

namespace maskscope::gui {

void Views::set_presentation_scale(float s) {
  present_scale_ = std::clamp(s, kPresentationScaleMin, kPresentationScaleMax);
  save_presentation_scale(present_scale_);
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
  // A step with a state shows the lesson's run folder (--run DIR overrides it) at step 0 or its last step.
  const Lesson& lesson = lesson_->lesson();
  const std::string& state = lesson_->current().state;
  if (!state.empty()) {
    const std::string folder = run_override_.empty() ? lesson.run_folder : run_override_;
    Preset p;
    p.name = "lesson '" + lesson.title + "'";
    p.settings = s;
    p.run = PresetRun{folder, lesson.run_train};
    FigureRow row;
    row.settings = s;
    row.state = state;
    p.figure.rows = {row};
    std::string error;
    if (bind_preset_run(p, folder, error)) {
      s = p.figure.rows[0].settings;
      s.samples = std::min(s.samples, lesson_->settings().samples);
    } else {
      set_status_message(std::filesystem::exists(folder) ? error : missing_run_message(p, folder), true);
      try {
        training_.prepare(preset_training(*p.run, folder));
      } catch (const std::exception&) {}
    }
  }
  transition_from_ = on_screen_.panels;
  transition_pending_ =
      !on_screen_.panels.empty() && !controller_.settings().same_simulation(s);  // a new run will come
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
  if (browser::kInBrowser) {  // the page asks the browser (which allows it right after a key press)
    browser::full_screen(on && full_screen);
    return;
  }
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

}  // namespace maskscope::gui
