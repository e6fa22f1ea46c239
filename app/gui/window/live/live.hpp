// The live window's tabs and side panels as free functions: each draws one concern from the
// newest snapshot and never waits on a worker. Views (views.hpp) lays them out and routes tabs.
#pragma once

#include <imgui.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/stats/position_probe.hpp"
#include "common/controller.hpp"
#include "window/heatmap.hpp"
#include "common/lesson/lesson.hpp"
#include "common/panels.hpp"

namespace maskscope::gui {

// A help marker's text on hover: every control says what it is, where it comes from, its range.
void explain(const char* text);

// Left column: model, Monte Carlo and view controls (each with its tooltip); edits go to the
// controller, which restarts the run. Returns the settings errors of the last edit.
void draw_controls(Controller& controller, ViewOptions& view, std::vector<SettingError>& edit_errors, float ui_scale);

// The controls panel while a real model's tensors are shown: what they are, the view, and the
// two ways out.
struct TensorInfo {
  std::string folder, model, mask;
  int prompts = 0, layers = 0, heads = 0, tokens = 0, d = 0;
  bool weights_given = false;
};
enum class TensorAction { none, compare, close };
TensorAction draw_tensor_controls(const Controller& controller, ViewOptions& view, const TensorInfo& info,
                                  float ui_scale);

// Per-layer heatmaps of the current tab (raw or diagonal-normalized: transform_of(view.tab)), each with
// its colorbar, metric badge and hover read-out.
// `point` (a lesson step's pointer) outlines a layer panel or a cell range in it, with its label.
void draw_heatmap_grid(const Snapshot& snap, const std::vector<PanelData>& panels, const ViewOptions& view,
                       HeatmapRenderer& renderer, const LessonPointer* point = nullptr);

// h(j): the closed form that applies to the settings beside the simulation (h_of_j.hpp).
void draw_h_of_j_tab(const Snapshot& snap, const ViewOptions& view);

// Absolute-position leakage (Ruscio et al.; docs/model.md section 8): dR^2 per layer for the live run
// and a bidirectional twin run with the same settings and seed, the causal-mask share, the
// position-bin profile, and the relative / absolute split of one layer's logits.
class LeakageTab {
 public:
  // twin: run the bidirectional twin (not for a real model's tensors, which have no simulation behind them).
  void draw(const Snapshot& live, HeatmapRenderer& renderer, const ViewOptions& view, bool twin = true);
  void stop();  // ends the twin run (the tab is not shown)
  // Whether the bidirectional twin of `live` has run to its end (always, for a bidirectional run): what is on
  // the tab is final.
  bool settled(const Snapshot& live) const;

 private:
  std::unique_ptr<Run> twin_;
  int layer_ = 2;
};

// Zuo et al.'s position probes (Fig. 8): Pearson-R and NRMSE per layer and feature, computed on a
// background thread on demand and cancelled when the settings change.
class ProbesTab {
 public:
  ~ProbesTab();
  void draw(const Settings& s);
  // A real model's tensor folder with hidden states: the first half of its prompts train, the rest test.
  void draw_tensors(const std::string& folder, int prompts);
  void stop();
  // Whether the probes for `s` are computed (or refused, with the reason shown): what is on the tab is final.
  bool settled(const Settings& s) const { return !running_ && for_settings_ && for_settings_->same_simulation(s); }

 private:
  void start(const Settings& s);
  void plots();
  std::string folder_;  // the tensor folder the result is for (empty: the simulation's)
  std::thread worker_;
  std::atomic<bool> cancel_{false}, running_{false};
  std::atomic<std::int64_t> collected_{0};
  std::mutex mutex_;
  std::optional<ProbeTable> result_;
  std::optional<Settings> for_settings_;
  std::string message_;
  std::string note_;  // the sequence counts fitted to a token file
  int train_ = 1600, test_ = 1600;
  bool mlp_ = false;
  char export_dir_[256] = "probes-export";
  std::string export_message_;
};

// Zuo et al.'s Fig. 2 and Fig. 13 histograms per layer (a button turns them on).
void draw_histograms_tab(const Snapshot& snap, Controller& controller);

// RP and adjacency per layer with standard errors and tie fractions.
void draw_metrics_tab(const Snapshot& snap);

// Bottom line: samples, rate, ETA, largest SE on screen, why the run waits, auto sample count.
void draw_status_line(const Controller& controller, const std::vector<PanelData>& panels, const std::string& message,
                      bool message_error);

// Help > "What am I looking at" and "Keyboard shortcuts".
void draw_help_windows(bool* show_guide, bool* show_keys);

}  // namespace maskscope::gui
