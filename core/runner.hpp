// A background Monte Carlo run: worker threads simulate blocks of samples, blocks are merged in
// block order (so results are bit-identical for any thread count), and an immutable Snapshot is
// published at a fixed interval. Cancel stops within one sample; memory does not grow with samples.
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

#include "accumulator.hpp"
#include "settings.hpp"
#include "simulator.hpp"
#include "snapshot.hpp"

namespace maskscope {

struct RunOptions {
  std::chrono::milliseconds publish_interval{25};
  bool low_priority = false;           // lower the workers' scheduling priority (keeps a UI fluid)
  bool start_paused = false;           // workers start waiting for set_paused(false)
  std::function<void()> on_publish;    // called from the publisher thread after each snapshot
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
  void wait();                                 // until done()
  std::shared_ptr<const Snapshot> snapshot() const;
  std::int64_t samples_done() const { return samples_done_.load(std::memory_order_relaxed); }

 private:
  void worker_main();
  void publisher_main();
  // Copies the merged moments under the workers' lock; the snapshot is built from the copy.
  std::shared_ptr<Snapshot> build_snapshot(const RunMoments& moments) const;

  Settings settings_;
  RunOptions options_;
  std::int64_t block_size_ = 1;
  std::int64_t block_count_ = 0;
  std::size_t accum_size_ = 0;
  KeyRanges keys_;

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::int64_t next_block_ = 0;
  std::int64_t merged_blocks_ = 0;
  std::int64_t lookahead_ = 0;
  int workers_running_ = 0;
  std::map<std::int64_t, std::unique_ptr<BlockSums>> pending_;
  std::vector<std::unique_ptr<BlockSums>> free_buffers_;
  RunMoments moments_;
  RunMoments publish_copy_;  // the publisher's copy of moments_, built into snapshots outside the lock

  std::atomic<bool> cancel_{false};
  std::atomic<bool> abandoned_{false};
  std::atomic<bool> paused_{false};
  std::atomic<bool> done_{false};
  std::atomic<std::int64_t> samples_done_{0};

  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::duration paused_total_{};
  std::chrono::steady_clock::time_point paused_since_;

  mutable std::mutex snapshot_mutex_;
  std::shared_ptr<const Snapshot> snapshot_;

  std::vector<std::thread> workers_;
  std::thread publisher_;
};

// Runs to completion on the calling thread's behalf and returns the final snapshot.
std::shared_ptr<const Snapshot> run_to_completion(const Settings& s);

}  // namespace maskscope
