// A sweep (issue 32): one Monte Carlo run per point, refined together in stages and stopped early once
// the chosen metric's standard error reaches a target in every layer. Each stage adds a range of a point's
// segments (sample_grid.hpp) as a Run computes them, exactly (exact_sums.hpp), so a point after k segments
// holds the bits of `maskscope-cli run --samples <k segments' samples>`. Every point uses the same seed, so
// sample s of every point draws from the same stream (random_stream.hpp): common random numbers, which make
// differences between neighbouring points far more precise than each point alone.
#pragma once

#include <atomic>
#include <condition_variable>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/model/settings.hpp"
#include "core/run/sweep_spec.hpp"
#include "core/stats/sample_grid.hpp"
#include "core/stats/snapshot.hpp"

namespace maskscope {

class Run;

// A point may stop early only with at least this many samples: an SE from fewer is itself too uncertain.
constexpr std::int64_t kSweepMinSamplesToStop = 100;

// The samples of a point's preview, its first picture before stage 1: 1/32 of its first segment (at least 1,
// at most the cap). The preview is `run --samples <these>` itself; it is shown, never added to the refinement.
// Points whose first segment is that small already get none.
std::int64_t preview_samples(const Settings& s);

struct SweepPoint {
  Settings settings;                         // as given: samples is the point's cap
  std::shared_ptr<const Snapshot> snapshot;  // the latest (nullptr before its preview or first stage); its
                                             // settings.samples is samples (what `run` needs to repeat it)
  std::int64_t samples = 0;                  // samples done
  bool stopped_early = false;                // reached the target SE before the cap
  bool done = false;                         // reached the target SE or the cap
};

struct SweepState {
  std::vector<SweepPoint> points;  // in the order given
  int stages = 0;                  // stages completed (the preview is not one)
  bool finished = false;           // every point done
  bool cancelled = false;
  double elapsed_s = 0;
  std::string error;  // why the sweep ended before finishing, when not cancelled by the caller
};

struct SweepOptions {
  SweepMetric metric;         // what the stopping rule reads
  double target_se = 0;       // > 0: a point stops once the metric's SE is at most this in every layer; 0: to the cap
  int threads = 0;            // worker threads in all, 0 = all cores (the numbers do not depend on it)
  bool low_priority = false;  // lower the workers' priority (a window's UI stays fluid)
  // Called from a sweep thread with each published state (at most one per 20 ms, and at the end of the
  // preview, of every stage and of the sweep); it must not wait for the sweep.
  std::function<void(const std::shared_ptr<const SweepState>&)> on_publish;
};

class Sweep {
 public:
  // Starts at once. Throws std::invalid_argument when a point does not validate() or there are none.
  Sweep(std::vector<Settings> points, SweepOptions options);
  ~Sweep();  // cancels and joins
  Sweep(const Sweep&) = delete;
  Sweep& operator=(const Sweep&) = delete;

  // Stops every point's run within one sample; done() follows once the workers have stopped.
  void cancel();
  bool done() const { return done_.load(); }
  void wait();
  // The latest state (immutable; readers never wait for the workers).
  std::shared_ptr<const SweepState> snapshot() const;

 private:
  void main_loop();
  // f(point, threads) for every point, `threads` workers in all; stops at the first false or on cancel.
  void for_each_point(const std::vector<std::size_t>& points, const std::function<bool(std::size_t, int)>& f);
  // A Run of `s` over `segments` with `threads` workers, to its end; nullptr if cancelled (cancel() reaches it).
  std::unique_ptr<Run> run_to_end(Settings s, SegmentRange segments, int threads);
  // Point p's preview picture (preview_samples); false if cancelled.
  bool preview(std::size_t p, int threads);
  // Runs segments [from, to) of point p and adds them to its total; false if cancelled.
  bool refine(std::size_t p, std::int64_t from, std::int64_t to, int threads);
  // A new state from points_ (under mutex_); without `force` at most one per 20 ms. nullptr if none.
  std::shared_ptr<const SweepState> publish(bool force);
  // options_.on_publish(state) if both are there (outside mutex_).
  void notify(const std::shared_ptr<const SweepState>& state) const;

  struct Work;  // per point: its exact total and segment count (sweep.cpp)
  SweepOptions options_;
  std::vector<SweepPoint> points_;  // written by the one worker refining a point in a stage, published under mutex_
  std::vector<std::unique_ptr<Work>> work_;
  std::chrono::steady_clock::time_point start_, last_publish_;
  int stages_ = 0;

  mutable std::mutex mutex_;  // runs_, state_, publication
  std::condition_variable done_cv_;
  std::vector<Run*> runs_;  // the runs in progress, for cancel()
  std::shared_ptr<const SweepState> state_;
  std::string error_;  // a failure in a stage (out of memory), which ends the sweep
  std::atomic<bool> cancel_{false};
  std::atomic<bool> done_{false};
  std::thread main_;
};

}  // namespace maskscope
