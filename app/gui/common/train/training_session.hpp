// The Training tab's model, with no window (issue 50): a training run (core/train/train_run.hpp) in a background
// thread at low priority beside the live run, started, paused (the run's stop flag: a checkpoint at the next step
// boundary) and resumed (run_training with resume), and what the run folder holds, read as it grows: log.jsonl's
// evaluations and the checkpoints' steps. The UI polls it every frame and never waits on a step.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/train/train_run.hpp"

namespace maskscope::gui {

// One evaluation line of log.jsonl (docs/model.md, "Training").
struct TrainLayerReading {
  double adjacency = 0, adjacency_se = 0, norm_adjacency = 0, norm_adjacency_se = 0, rp = 0, rp_se = 0, sink_weight = 0,
         sink_weight_se = 0;
  // r_l, the residual-stream share of the leakage, and its SE (docs/model.md section 10): NaN where the log has none
  // (no fixed first token) or null (the causal dR^2 not significant: `residual_share_note` says why).
  double residual_share = std::numeric_limits<double>::quiet_NaN(), residual_share_se = residual_share;
  std::string residual_share_note;
};
struct TrainEvaluation {
  std::int64_t step = 0;
  double train_loss = -1;  // -1: none (step 0)
  double test_loss = 0, test_accuracy = 0, tokens_per_s = 0;
  std::vector<TrainLayerReading> layers;  // layers 1..L
};
// Parses log.jsonl's text; lines that do not parse (a line being written) are skipped.
std::vector<TrainEvaluation> parse_train_log(const std::string& text);

// Seconds a run takes: its tokens (steps x batch x n) over a rate in tokens/s, plus its evaluations at the same rate.
double estimated_training_seconds(const train::TrainRunConfig& c, int n, double tokens_per_s);

class TrainingSession {
 public:
  enum class State { idle, running, stopping, paused, finished, failed };
  TrainingSession() = default;
  ~TrainingSession();  // stops at a step boundary with a checkpoint, and joins
  TrainingSession(const TrainingSession&) = delete;
  TrainingSession& operator=(const TrainingSession&) = delete;

  // Starts a new run into c.out (a new or empty folder). False with `error` when it cannot start (a folder holding
  // something, an invalid model, a batch that does not fit); nothing is written then.
  bool start(const train::TrainRunConfig& c, std::string& error);
  // Opens an existing run folder (its config.json's "training"): shown, and resumable when it stopped early.
  bool open(const std::string& folder, std::string& error);
  // Sets the stop flag: the run writes a checkpoint at the next step boundary and its thread ends.
  void pause();
  // Continues a paused or opened run (run_training with resume) in the background.
  bool resume(std::string& error);
  // Blocks until the thread has ended (tests; the window never calls it while drawing).
  void join();

  State state();
  std::string error();
  const train::TrainRunConfig& config() const { return config_; }
  const std::string& folder() const { return config_.out; }
  bool has_run() const { return !config_.out.empty(); }
  // The last progress report (step, loss, tokens/s) and the ETA in seconds (-1: unknown).
  train::TrainProgress progress();
  double eta_seconds();
  // When the run last started or resumed (steady clock); the epoch before any.
  std::chrono::steady_clock::time_point started();
  // Re-reads log.jsonl and the checkpoints' steps when the folder changed (cheap; at most every 0.2 s).
  // True when they changed.
  bool refresh();
  const std::vector<TrainEvaluation>& evaluations() const { return evaluations_; }
  const std::vector<std::int64_t>& checkpoints() const { return checkpoints_; }

 private:
  void launch(bool resume);
  train::TrainRunConfig config_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;  // guards state_, error_, progress_, eta
  State state_ = State::idle;
  std::string error_;
  train::TrainProgress progress_;
  std::chrono::steady_clock::time_point started_{};
  std::int64_t started_step_ = 0;
  std::vector<TrainEvaluation> evaluations_;
  std::vector<std::int64_t> checkpoints_;
  std::chrono::steady_clock::time_point last_refresh_{};
  std::string log_stamp_;
};

}  // namespace maskscope::gui
