// The Sweep tab's model, with no window (issue 32): the view being edited, the sweep it and the live settings
// give (core/run/sweep.hpp), its picture, the point under a click, and the export. A change of the live
// settings or of the view that changes the points cancels the running sweep at once and starts the new one;
// cancelled sweeps are kept until their threads are done, so the UI never waits for one.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/run/sweep.hpp"
#include "common/figure/figure.hpp"
#include "common/sweep/sweep_chart.hpp"
#include "common/sweep/sweep_view.hpp"

namespace maskscope::gui {

class SweepWorkbench {
 public:
  // `wake` is called from a sweep thread when a new state is ready (the window posts an empty event).
  explicit SweepWorkbench(std::function<void()> wake = {}) : wake_(std::move(wake)) {}
  ~SweepWorkbench();
  SweepWorkbench(const SweepWorkbench&) = delete;
  SweepWorkbench& operator=(const SweepWorkbench&) = delete;

  SweepView& view() { return view_; }
  const SweepView& view() const { return view_; }

  // Once a frame. `active`: the tab is shown (a hidden tab's sweep is cancelled: it would only take the live
  // run's cores). Re-plans when the view or the live settings changed, restarts when the points changed, and
  // rebuilds the picture when a new state came.
  void refresh(const Settings& live, bool active);
  const SweepPlan& plan() const { return plan_; }
  std::shared_ptr<const SweepState> state() const { return state_; }
  const SweepPicture& picture() const { return picture_; }
  bool running() const { return sweep_ && !sweep_->done(); }
  bool complete() const { return state_ && state_->finished && !plan_.points.empty(); }
  int restarts() const { return restarts_; }
  std::size_t retired() const { return retired_.size(); }

  // The settings of the point a hit shows, for the live controls: the live settings with the point's swept
  // values (samples and threads stay the live ones). nullopt for an unknown id.
  std::optional<Settings> live_settings_at(int id, const Settings& live) const;
  std::string point_text(int id) const { return state_ ? sweep_point_text(plan_, *state_, id) : ""; }

  // One row per point and layer (core/run/sweep_output.hpp, as `maskscope-cli sweep --out x.csv`).
  std::string csv() const;
  // sweep.png (export_options' size), sweep.svg, sweep.csv and preset.json into `dir`.
  ExportResult export_now(const std::string& dir, const Preset& preset);
  ExportOptions& export_options() { return export_; }
  std::string& export_folder() { return export_dir_; }
  std::string message;
  bool message_error = false;

 private:
  void start();
  void retire();

  std::function<void()> wake_;
  SweepView view_;
  SweepView planned_view_;
  Settings planned_live_;
  bool planned_ = false;
  SweepPlan plan_;
  std::unique_ptr<Sweep> sweep_;
  std::vector<std::unique_ptr<Sweep>> retired_;  // cancelled, still stopping
  std::shared_ptr<const SweepState> state_;
  SweepPicture picture_;
  bool picture_stale_ = true;
  int restarts_ = 0;
  ExportOptions export_;
  std::string export_dir_ = "maskscope-figures";
};

}  // namespace maskscope::gui
