// The GUI's model, with no window: the edited settings, the background run they drive, and undo/redo.
// Every edit that changes the simulation cancels the current run and starts a new one at once;
// cancelled runs are retired and destroyed only once their threads are done, so the UI never waits.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/run/runner.hpp"
#include "core/model/settings.hpp"

namespace maskscope::gui {

// Samples for about five seconds of both cores whatever the size: 100,000 at the default n 10,
// d 64, L 4 (the cost of a sample grows as n d L (n + 4)), never fewer than 500 nor more than
// 100,000; two significant digits.
std::int64_t auto_sample_count(const Settings& s);

// The window's memory budget for runs, and the refusal an edit gets when one run alone exceeds it
// (empty when it fits): "n = 512 with 16 layers needs about 1.6 GB per run; ...".
constexpr std::uint64_t kWindowMemoryBudget = std::uint64_t(768) << 20;
std::string memory_refusal(const Settings& s, std::uint64_t budget);

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

  // Pauses or resumes the live run; `reason` is shown in the status line while paused
  // (e.g. "figure runs have priority").
  void set_paused(bool paused, std::string reason = "paused by the user");
  bool paused() const { return paused_; }
  const std::string& pause_reason() const { return pause_reason_; }

  // Auto sample count: every edit sets samples from the cost of one sample, so that a run at
  // large n converges in seconds (auto_sample_count). Off when the user or a preset sets samples.
  void set_auto_samples(bool on);
  bool auto_samples() const { return auto_samples_; }
  std::shared_ptr<const Snapshot> snapshot() const;  // newest snapshot of the current run (empty while it waits)
  // Memory the window's runs may hold at once (estimate_cost, resources.hpp). An edit whose run
  // alone would exceed it is refused with the estimate; a restart whose run would exceed it
  // together with the cancelled runs still stopping waits (poll) until they are gone.
  void set_memory_budget(std::uint64_t bytes) { memory_budget_ = bytes; }
  std::uint64_t memory_budget() const { return memory_budget_; }
  bool run_waiting() const { return !run_; }  // a restart waits for memory
  int restarts() const { return restarts_; }  // runs started so far
  std::chrono::steady_clock::time_point run_started() const { return run_started_; }
  // A real model's tensors (tensor_analysis.hpp): their snapshot is shown instead of a run, with
  // its settings (n = T, layers, heads), until close_tensors() or any other settings change.
  void show_tensors(std::shared_ptr<const Snapshot> snap, std::string label);
  void close_tensors();  // back to the simulation that was shown before
  bool showing_tensors() const { return tensors_ != nullptr; }
  const std::string& tensors_label() const { return tensors_label_; }
  // What the window spends on each picture of the live run (its panels and the frames drawn for
  // it): the run's publisher counts it with the picture's own cost, so that pictures take at most
  // their share of the workers' time (RunOptions::picture_share). A new run starts with the last one.
  void report_picture_cost(std::chrono::nanoseconds cost);
  // Destroys retired runs whose threads have finished; call once per frame.
  void poll();
  std::size_t retired_runs() const { return retired_.size(); }

 private:
  void start(const Settings& s);
  void launch();
  // A run of `s` and the cancelled runs still stopping fit in the memory budget together.
  bool fits_beside_retired(const Settings& s) const;

  RunOptions options_;
  Settings current_;
  std::unique_ptr<Run> run_;
  std::shared_ptr<const Snapshot> waiting_;  // shown while a restart waits for memory
  std::shared_ptr<const Snapshot> tensors_;  // a real model's tensors, shown instead of a run
  std::string tensors_label_;
  Settings before_tensors_;
  std::uint64_t memory_budget_ = kWindowMemoryBudget;
  std::vector<std::unique_ptr<Run>> retired_;
  std::vector<Settings> history_;
  std::size_t cursor_ = 0;
  bool paused_ = false;
  std::string pause_reason_;
  bool auto_samples_ = false;
  int restarts_ = 0;
  std::chrono::steady_clock::time_point run_started_;
  std::chrono::nanoseconds picture_cost_{0};  // report_picture_cost
};

}  // namespace maskscope::gui
