// The window's layout and tab routing: controls on the left, the tabs in the middle, the status
// line at the bottom, the Presets and Help menus. Each tab is drawn by its own file (window/live/,
// window/figure/); Views owns only what they share: the controller, the heatmap textures, the view
// options, the panels on screen and the figure workbench. Its methods live in this folder by
// concern: views.cpp (layout, tabs, keys), textures.cpp, lesson_steps.cpp, menus.cpp, tensors.cpp.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/controller.hpp"
#include "common/figure/figure_workbench.hpp"
#include "common/sweep/sweep_workbench.hpp"
#include "window/heatmap.hpp"
#include "common/lesson/lesson.hpp"
#include "window/live/live.hpp"
#include "window/train/training_tab.hpp"
#include "common/panel_builder.hpp"
#include "common/panels.hpp"

namespace maskscope::gui {

class Views {
 public:
  explicit Views(Controller& controller, RunOptions run_options = {});
  // Draws everything into the current full-window ImGui window.
  void draw(float ui_scale);
  ViewOptions& options() { return view_; }
  // Time from the last restart to the first heatmap of the new run on screen (seconds; < 0 if none yet).
  double last_time_to_first_heatmap() const { return first_heatmap_s_; }
  bool showing_final_snapshot() const;
  // Whether the tab shown has finished what it computes itself from the live model: the Leakage tab's
  // bidirectional twin, the probes, the sweep (the other tabs draw the live run's snapshot).
  bool tab_settled() const;
  // Whether the heatmaps on screen come from the current run (not from the one before a restart).
  bool showing_current_run() const;
  const std::vector<PanelData>& panels() const { return on_screen_.panels; }
  const Snapshot* shown() const { return on_screen_.snap.get(); }

  // Presets: the settings go to the controller (auto samples off: the preset's count rules),
  // the view to the window, the figure to the workbench. A failed load changes nothing.
  void apply_preset(const Preset& p);
  bool load_preset(const std::string& path, std::string& error);
  // The live settings and view, the figure, and the sweep when the Sweep tab is shown.
  Preset current_preset() const;
  FigureWorkbench& figure() { return figure_; }
  SweepWorkbench& sweep() { return sweep_; }
  TrainingTab& training() { return training_; }
  // --run DIR: the run folder that presets' and lessons' trained-network steps read instead of their own.
  void set_run_override(std::string folder) { run_override_ = std::move(folder); }
  // A real model's tensor folder (tensor_analysis.hpp): analysed and shown in every tab instead of
  // the simulation. A folder that fails to open changes nothing; `error` says why.
  bool open_tensors(const std::string& folder, std::string& error);
  // The Figure tab with the model's maps beside the parameter-free prediction at the same n.
  void compare_tensors_with_simulation();
  // A queued key press (shortcuts.hpp): F1 help, Ctrl+Z undo, Ctrl+Shift+Z / Ctrl+Y redo; with a
  // lesson: arrows and Page Up / Down move between steps, F5 presents, Esc leaves, Ctrl +/- scale.
  void on_key(int key, int mods);

  // Lessons (lesson.hpp): start one at its first step; each step applies its settings and view.
  void start_lesson(const Lesson& lesson);
  bool load_lesson(const std::string& name_or_path, std::string& error);
  void close_lesson();
  LessonPlayer* lesson() { return lesson_ ? &*lesson_ : nullptr; }
  bool next_step();
  bool previous_step();
  void go_to_step(std::size_t k);
  // Presentation mode: controls hidden, the step text large, full screen when a monitor allows.
  void set_presenting(bool on, bool full_screen = true);
  // Caps every lesson step's sample count (--samples with --lesson: a quick draft).
  void set_lesson_samples_cap(std::optional<std::int64_t> cap) { lesson_samples_cap_ = cap; }
  bool transition_running() const { return transition_running_ || transition_pending_; }
  // A frame was drawn in `cost` (from waking to the swap): counted, with the panels' build, as what a
  // picture of the live run costs the window (Controller::report_picture_cost).
  void frame_drawn(std::chrono::nanoseconds cost) {
    frames_cost_ += cost;
    ++frames_;
  }
  bool presenting() const { return presenting_; }
  float presentation_scale() const { return present_scale_; }
  void set_presentation_scale(float s);
  void set_status_message(std::string m, bool error = false) {
    message_ = std::move(m);
    message_error_ = error;
  }

 private:
  void refresh_textures();
  // A picture of the live run went on screen after `build` of panels and texels: reports its cost with
  // the frames drawn since the last one.
  void picture_shown(std::chrono::nanoseconds build);
  // on_screen_ has just changed: a new run's first heatmap (its time, a lesson's transition).
  void now_on_screen();
  void apply_step();
  void draw_lesson_panel(float ui_scale, bool large);
  void draw_tab_content();
  // Heatmap transition between a step's previous maps and the new run's (about 300 ms).
  void blend_textures();
  void draw_menu();
  void draw_preset_dialogs();

  Controller& controller_;
  HeatmapRenderer renderer_;
  ViewOptions view_;
  // What is on screen: the snapshot (every tab draws it), the view its panels were built for, the
  // panels and their texels, rebuilt in place (their arrays keep their memory: fresh ones would cost
  // the UI thread page faults at every snapshot).
  PanelBuilder::Result on_screen_;
  // From this n a refinement's panels are built on the builder's thread (n 128: 0.5 ms here).
  static constexpr int kBackgroundPanelsFrom = 128;
  PanelBuilder builder_;                     // wakes the window's loop when a result is ready
  PanelBuilder::Result built_;               // what builder_.take gives, before it goes on screen
  std::weak_ptr<const Snapshot> requested_;  // the snapshot builder_ was last asked for (not kept alive)
  std::vector<float> blend_texels_;          // a transition's staging
  std::chrono::nanoseconds frames_cost_{0};  // the frames drawn since the last picture (frame_drawn)
  int frames_ = 0;
  std::vector<SettingError> edit_errors_;
  bool requested_tab_ = true;  // view_.tab was set from outside: select it on the next frame
  int shown_restart_ = -1;
  double first_heatmap_s_ = -1;
  FigureWorkbench figure_;
  SweepWorkbench sweep_;  // wakes the window's loop when a sweep has a new state
  LeakageTab leakage_;
  ProbesTab probes_;
  TrainingTab training_;
  std::string run_override_;
  std::optional<LessonPlayer> lesson_;
  bool presenting_ = false;
  float present_scale_ = 1.6f;
  std::vector<PanelData> transition_from_;
  std::chrono::steady_clock::time_point transition_start_{};
  bool transition_pending_ = false, transition_running_ = false;
  std::string lesson_path_ = "lesson.json";
  bool open_lesson_ = false;
  std::optional<std::int64_t> lesson_samples_cap_;
  std::string preset_path_ = "preset.json";
  std::string message_;
  bool message_error_ = false;
  std::string link_;  // the browser build's last "Copy link"
  bool open_load_ = false, open_save_ = false;
  bool open_tensors_dialog_ = false;
  std::string tensors_path_ = "tensors";
  TensorInfo tensor_info_;
  bool show_guide_ = false, show_keys_ = false;
};

}  // namespace maskscope::gui
