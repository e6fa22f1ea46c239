// The GUI's model, with no window: the edited settings, the background run they drive, and undo/redo.
// Every edit that changes the simulation cancels the current run and starts a new one at once;
// cancelled runs are retired and destroyed only once their threads are done, so the UI never waits.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "core/runner.hpp"
#include "core/settings.hpp"

namespace maskscope::gui {

class Controller {
 public:
  explicit Controller(const Settings& initial, RunOptions options = {});
  ~Controller();

  const Settings& settings() const { return current_; }
  // Applies an edit. Valid: restarts the run if anything but nothing-changing fields differ;
  // returns {}. Invalid: keeps the running settings, returns every violation.
  std::vector<SettingError> edit(const Settings& s);
  // Records the current settings as an undo point (call when an interaction ends).
  void commit_undo_point();
  bool undo();
  bool redo();
  bool can_undo() const;
  bool can_redo() const;
  void reset_to_defaults(const Settings& defaults);

  void set_paused(bool paused);
  bool paused() const { return paused_; }
  std::shared_ptr<const Snapshot> snapshot() const;  // newest snapshot of the current run
  int restarts() const { return restarts_; }         // runs started so far
  std::chrono::steady_clock::time_point run_started() const { return run_started_; }
  // Destroys retired runs whose threads have finished; call once per frame.
  void poll();
  std::size_t retired_runs() const { return retired_.size(); }

 private:
  void start(const Settings& s);

  RunOptions options_;
  Settings current_;
  std::unique_ptr<Run> run_;
  std::vector<std::unique_ptr<Run>> retired_;
  std::vector<Settings> history_;
  std::size_t cursor_ = 0;
  bool paused_ = false;
  int restarts_ = 0;
  std::chrono::steady_clock::time_point run_started_;
};

}  // namespace maskscope::gui
