// A background Monte Carlo run: worker threads simulate blocks of samples, blocks are summed in
// block order into their segment, and each finished segment is added exactly into the run's total
// (exact_sums.hpp), so results are bit-identical for any thread count and for any split of the
// segments over processes (MPI ranks, shard files). An immutable Snapshot is published at a fixed
// interval (longer when a picture is expensive). Cancel stops within one sample; memory does not grow with samples.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <shared_mutex>

#include "core/stats/accumulator.hpp"
#include "core/stats/exact_sums.hpp"
#include "core/stats/sample_grid.hpp"
#include "core/model/settings.hpp"
#include "core/model/threading.hpp"
#include "core/run/publish_pace.hpp"
#include "core/kernel/simulator.hpp"
#include "core/stats/snapshot.hpp"

namespace maskscope {

struct RunOptions {
  // The shortest wait between pictures; a picture that costs more waits longer, so that pictures
  // take at most picture_share of the workers' time (publish_wait, publish_pace.hpp).
  std::chrono::milliseconds publish_interval{25};
  double picture_share = kDefaultPictureShare;
  bool low_priority = false;  // lower the workers' scheduling priority (keeps a UI fluid)
  bool start_paused = false;  // workers start waiting for set_paused(false)
  // Until the first picture with samples is out, one worker computes the first block and the
  // others wait. A new run's first picture (a slider move in the window) then comes sooner: at
  // n 512 one sample is a block, and a second worker's sample would take memory bandwidth from it
  // and a core from the picture's build. The waiting costs the run about one block's time, once.
  bool first_picture_alone = false;
  std::function<void()> on_publish;  // called from the publisher thread after each snapshot
  // The segments to compute (sample_grid.hpp); end < 0 means to the last. A run over part of the
  // segments is one shard or MPI rank of a larger run: its snapshots cover its own samples only,
  // and exact() is what gets merged.
  SegmentRange segments{0, -1};
  // Simulator::Kernel::per_sample keeps the per-sample kernel where the lane kernel applies
  // (lane_kernel.hpp): what `run --save-tensors` uses, so that `analyze` of the saved tensors repeats
  // the run's sums bit for bit.
  Simulator::Kernel kernel = Simulator::Kernel::automatic;
  // No threads: the run computes only when its owner calls step() (or step_runs()), on the caller's
  // thread, and publishes from there; the same blocks in the same order, so the same bits. The
  // default in the browser's one-thread page (threading.hpp), whose frame loop steps it.
  bool stepped = !kThreadsAvailable;
};

class Run {
 public:
  // Starts at once. Throws std::invalid_argument listing every violation if `s` is invalid.
  explicit Run(const Settings& s, RunOptions options = {});
  ~Run();  // cancels and joins
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  const Settings& settings() const { return settings_; }
  void cancel();
  // Cancels without publishing a final snapshot: for a run nobody will read again (a restart),
  // so its memory goes as soon as its workers stop (within one layer of one sample).
  void abandon();
  void set_paused(bool paused);
  bool paused() const { return paused_.load(); }
  bool done() const { return done_.load(); }  // finished or cancelled, final snapshot published
  void wait();                                // until done()
  std::shared_ptr<const Snapshot> snapshot() const;
  std::int64_t samples_done() const { return samples_done_.load(std::memory_order_relaxed); }
  // What a reader (a window's panels and frame) spends on each picture: counted with the picture's own
  // cost in the wait before the next one (RunOptions::picture_share). Any thread.
  void set_reader_cost(std::chrono::nanoseconds cost) {
    reader_cost_ns_.store(cost.count(), std::memory_order_relaxed);
  }
  const SampleGrid& grid() const { return grid_; }
  bool stepped() const { return options_.stepped; }
  // A stepped run (RunOptions::stepped): computes until `budget` has passed (at least one part of a
  // block, unless paused, cancelled or done), merges each block when it is complete, and publishes a
  // snapshot when the publish interval has passed, at its first samples and at its end. A block is
  // computed in parts of a multiple of kBlockPartSamples sized to about half the budget (the same bits:
  // SimulateBlockOptions::append; random weights: whole blocks). Returns done(). A threaded run:
  // std::logic_error.
  bool step(std::chrono::steady_clock::duration budget);
  SegmentRange segments() const { return segments_; }
  std::int64_t samples_in_range() const { return end_sample_ - begin_sample_; }
  // The exact sums of the segments computed; complete once done() and not cancelled.
  const ExactSums& exact() const { return exact_; }
  // What stopped a worker or the publisher (std::bad_alloc, ...): "" if nothing. Such a failure is caught
  // in its thread (never std::terminate), cancels the run and ends it as done(); run_to_completion throws it.
  std::string error() const;

 private:
  void worker_main();
  void worker_loop();
  void publisher_loop();
  void fail(const char* what);  // records the first failure and cancels
  // Computes `block` into `buffer` with `sim`; false if cancelled.
  bool compute_block(Simulator& sim, std::int64_t block, BlockSums& buffer);
  // Hands the computed `block` over and merges every block whose turn has come (under mutex_);
  // true if this was the run's first merge.
  bool merge_block(std::int64_t block, std::unique_ptr<BlockSums> buffer);
  // The open segment's sums into `copy` (its squares formed where they are implied; zeros when it is
  // empty), under mutex_.
  void copy_open_segment(RunMoments& copy) const;
  // Seconds computed since the start, pauses left out (under mutex_).
  double active_seconds(std::chrono::steady_clock::time_point now) const;
  // The timing and end fields of a snapshot taken at `now`.
  void stamp(Snapshot& snap, std::chrono::steady_clock::time_point now, double active_s, bool last) const;
  // A stepped run's snapshot of everything merged (the publisher's work, on the caller's thread).
  void publish_stepped(bool last);
  // A stepped run's end on cancel: its final snapshot, or (abandoned) its buffers freed; then done.
  void finish_stepped();
  void publisher_main();
  // Adds the finished segment into exact_ (under mutex_).
  void fold_segment();
  // Frees every buffer of an abandoned run once its workers have stopped (publisher thread).
  void release_buffers();

  Settings settings_;
  RunOptions options_;
  SampleGrid grid_;
  SegmentRange segments_;
  std::int64_t begin_block_ = 0, end_block_ = 0;    // the blocks of segments_
  std::int64_t begin_sample_ = 0, end_sample_ = 0;  // and their samples
  std::size_t accum_size_ = 0;
  KeyRanges keys_;

  mutable std::mutex mutex_;
  std::condition_variable cv_;            // the workers wait on it (their turn, pause, the first picture)
  std::condition_variable publisher_cv_;  // the publisher: the first block merged, a worker's end, cancel
  std::condition_variable done_cv_;       // wait(): done_
  std::int64_t next_block_ = 0;           // the next block a worker takes
  std::int64_t merged_blocks_ = 0;        // blocks [begin_block_, merged_blocks_) are summed
  std::int64_t lookahead_ = 0;
  int workers_running_ = 0;
  std::map<std::int64_t, std::unique_ptr<BlockSums>> pending_;
  std::vector<std::unique_ptr<BlockSums>> free_buffers_;
  BlockSums segment_;                      // the current segment's blocks, summed in block order
  ExactSums exact_;                        // every finished segment; written under mutex_ and exact_mutex_
  mutable std::shared_mutex exact_mutex_;  // the publisher reads exact_ under a shared lock, outside mutex_
  std::int64_t folds_ = 0;                 // segments added to exact_ (changes under both locks)

  bool first_picture_out_ = false;  // under mutex_: a picture with samples is published
  std::atomic<bool> cancel_{false};
  std::atomic<bool> abandoned_{false};
  std::atomic<bool> paused_{false};
  std::atomic<bool> done_{false};
  std::atomic<std::int64_t> samples_done_{0};
  std::atomic<std::int64_t> reader_cost_ns_{0};  // set_reader_cost
  int threads_ = 1;                              // the workers (resolved_threads)

  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::duration paused_total_{};
  std::chrono::steady_clock::time_point paused_since_;

  mutable std::mutex snapshot_mutex_;
  std::shared_ptr<const Snapshot> snapshot_;

  mutable std::mutex error_mutex_;
  std::string error_;

  // A stepped run's simulator, its block in progress and publication (the caller's thread only).
  std::unique_ptr<Simulator> stepper_;
  std::unique_ptr<BlockSums> open_;  // block open_block_'s first open_done_ samples
  std::int64_t open_block_ = 0, open_done_ = 0;
  std::int64_t part_ = kBlockPartSamples;  // the samples of the next part
  std::chrono::steady_clock::time_point last_publish_;
  std::chrono::steady_clock::duration step_interval_{};

  std::vector<std::thread> workers_;
  std::thread publisher_;
};

// Steps every stepped run alive (Run::step), sharing `budget` among those that are not paused or done:
// what the browser's one-thread page calls once per frame.
void step_runs(std::chrono::steady_clock::duration budget);

// Runs to completion on the calling thread's behalf and returns the final snapshot.
std::shared_ptr<const Snapshot> run_to_completion(const Settings& s);

namespace detail {
// The stepped runs alive (runner_stepped.cpp), which Run's constructor and destructor enter and leave.
std::vector<Run*>& stepped_runs();
}  // namespace detail

}  // namespace maskscope
