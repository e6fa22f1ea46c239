// The Training tab (issue 50): a task or a token file, the network (the random-weight controls) and the
// optimizer, or an existing run folder; Start / Pause / Resume of a run in the background (TrainingSession);
// loss, accuracy and per-layer readings against step as the run's evaluations arrive; a step scrubber whose
// checkpoint becomes the live model (Settings::checkpoint and step through the Controller, so every tab shows
// that network), and Play, which steps through the checkpoints.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "common/controller.hpp"
#include "common/train/training_session.hpp"

namespace maskscope::gui {

class TrainingTab {
 public:
  // Play's pace: a checkpoint every 0.8 s (the exported GIF's frames too).
  static constexpr int kPlayIntervalMs = 800;
  TrainingTab();
  void draw(Controller& controller);
  // The status line's part: step, loss, tokens/s and ETA while a run trains; otherwise the checkpoint step that
  // `shown` (the settings of the picture on screen) is of this run's ("" when none).
  std::string status_text(const Settings* shown);
  // Opens a run folder (--run DIR): shown, and its last checkpoint the live model.
  bool open_run(Controller& controller, const std::string& folder, std::string& error);
  TrainingSession& session() { return session_; }
  // Starts a run with the form's settings into the form's folder (--train-start in tests).
  bool start(std::string& error);
  // Fills the form with a run's settings (a preset's missing run: Start trains it).
  void prepare(const train::TrainRunConfig& c);
  bool start_into(const std::string& folder, std::string& error);
  // Headless: whether the run still trains, or the live model is not yet its newest checkpoint.
  bool settling();
  // Makes checkpoint `step` of the run the live model. False (error set) when the controller refuses it.
  bool show_step(Controller& controller, std::int64_t step, std::string& error);
  // Called every frame, also when the tab is hidden: Play's steps and the newest checkpoint followed.
  void tick(Controller& controller);
  bool playing() const { return playing_; }
  // Selects checkpoint `index` on the scrubber (the next tick makes it the live model); stops following.
  void select(int index) {
    scrub_ = index;
    follow_ = false;
    playing_ = false;
  }
  std::int64_t shown_step() const { return shown_step_; }

 private:
  void draw_form();
  void draw_plots(float height);
  TrainingSession session_;
  train::TrainRunConfig form_;
  int task_ = 1;  // reversal
  std::string tokens_path_;
  bool use_tokens_ = false;
  char folder_[512] = "maskscope-runs/reversal-d32";
  char open_folder_[512] = "maskscope-runs/reversal-d32";
  std::string message_;
  bool message_error_ = false;
  int scrub_ = 0;                 // index into the checkpoints
  std::int64_t shown_step_ = -2;  // the checkpoint step the live model has (-2: none)
  bool follow_ = true;            // the scrubber follows the newest checkpoint
  bool playing_ = false;
  bool open_requested_ = false;
  std::chrono::steady_clock::time_point last_play_{};
  int metric_ = 0;  // per-layer curves: adjacency, norm adjacency, RP, weight on key 0
};

}  // namespace maskscope::gui
