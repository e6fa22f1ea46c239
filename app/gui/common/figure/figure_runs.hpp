// The background runs behind a figure: one per distinct simulation (rows that differ only in what
// they display share one), started when a row appears and cancelled when no row needs it any more. A probes figure
// runs each row's position probes (core/run/position_probes.hpp) on a thread of its own instead.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/run/runner.hpp"
#include "common/figure/figure.hpp"

namespace maskscope::gui {

class FigureRuns {
 public:
  explicit FigureRuns(RunOptions options = {}) : options_(std::move(options)) {}
  ~FigureRuns();
  FigureRuns(const FigureRuns&) = delete;
  FigureRuns& operator=(const FigureRuns&) = delete;

  // Starts the runs `spec` needs that are not running yet; cancels the ones it no longer needs.
  // Invalid cells are skipped (validate(spec) names them).
  void update(const FigureSpec& spec);
  std::shared_ptr<const Snapshot> snapshot(const Settings& s) const;
  // A probes figure's finished probes of the cell `s` (nullptr while they run, or when they failed).
  std::shared_ptr<const ProbeTable> probe_table(const Settings& s) const;
  FigureData build(const FigureSpec& spec) const;
  bool all_done() const;  // every current run finished (or there is none)
  std::size_t run_count() const { return runs_.size(); }
  int started() const { return started_; }  // runs started so far (tests: sharing)
  void set_paused(bool paused);
  void poll();  // destroys cancelled runs whose threads have ended
  // Finished results (--from-results): a simulation found here is shown from them, never run.
  void set_stored(std::vector<std::pair<Settings, std::shared_ptr<const Snapshot>>> stored) {
    stored_ = std::move(stored);
  }

 private:
  RunOptions options_;
  std::vector<std::unique_ptr<Run>> runs_, retired_;
  std::vector<std::pair<Settings, std::shared_ptr<const Snapshot>>> stored_;
  const Snapshot* stored(const Settings& s) const;
  bool paused_ = false;
  int started_ = 0;
  // One cell's probes on a thread of its own; `done` set (release) once `table` or `error` is written.
  struct ProbeJob {
    Settings settings;
    std::shared_ptr<const ProbeTable> table;
    std::string error;
    std::atomic<bool> cancel{false}, done{false};
    std::thread thread;
  };
  std::vector<std::unique_ptr<ProbeJob>> probes_, retired_probes_;
  void start_probes(const Settings& s);
};

}  // namespace maskscope::gui
