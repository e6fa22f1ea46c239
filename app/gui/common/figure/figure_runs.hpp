// The background runs behind a figure: one per distinct simulation (rows that differ only in what
// they display share one), started when a row appears and cancelled when no row needs it any more.
#pragma once

#include <memory>
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
};

}  // namespace maskscope::gui
