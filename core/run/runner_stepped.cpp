// A stepped Run (RunOptions::stepped): its blocks computed in parts on the caller's thread, from
// step(budget) or step_runs(budget), for the one-thread page (docs/web.md) and tests.
#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "core/kernel/simulator.hpp"
#include "core/run/runner.hpp"

namespace maskscope {

namespace detail {
// The stepped runs alive, for step_runs (their owners' thread only: a stepped run is the
// one-thread page's, or a test's).
std::vector<Run*>& stepped_runs() {
  static std::vector<Run*> runs;
  return runs;
}
}  // namespace detail

using detail::stepped_runs;

bool Run::step(std::chrono::steady_clock::duration budget) {
  if (!options_.stepped) throw std::logic_error("Run::step: this run computes on threads of its own");
  if (done_.load()) return true;
  const auto begin = std::chrono::steady_clock::now();
  if (!stepper_) stepper_ = std::make_unique<Simulator>(settings_, false, options_.kernel);
  bool merged = false, first_merge = false;
  const bool in_parts = !settings_.random_weights();
  while (!cancel_.load() && !paused_.load() && (open_ || next_block_ < end_block_)) {
    if (!open_) {
      open_block_ = next_block_++;
      open_done_ = 0;
      if (!free_buffers_.empty()) {
        open_ = std::move(free_buffers_.back());
        free_buffers_.pop_back();
      } else {
        open_ = std::make_unique<BlockSums>();
      }
    }
    const std::int64_t first = open_block_ * grid_.block_size;
    const std::int64_t size = std::min(grid_.block_size, settings_.samples - first);
    const std::int64_t part = in_parts ? std::min(part_, size - open_done_) : size;
    const auto part_begin = std::chrono::steady_clock::now();
    bool complete = true;
    if (part == size) {
      complete = compute_block(*stepper_, open_block_, *open_);
    } else {
      Simulator::BlockOptions how;
      how.append = open_done_ > 0;
      complete = stepper_->simulate_block(std::uint64_t(first + open_done_), part, *open_, &cancel_, how);
    }
    if (!complete) break;  // cancelled
    open_done_ += part;
    const auto now = std::chrono::steady_clock::now();
    if (in_parts) {  // the next part: about half the budget at this part's pace, whole batches
      const double per_sample = std::chrono::duration<double>(now - part_begin).count() / double(part);
      const double want = 0.5 * std::chrono::duration<double>(budget).count() / std::max(per_sample, 1e-9);
      part_ = std::max<std::int64_t>(kBlockPartSamples,
                                     std::int64_t(std::min(want, 1e9)) / kBlockPartSamples * kBlockPartSamples);
    }
    if (open_done_ == size) {
      std::lock_guard lock(mutex_);
      first_merge = merge_block(open_block_, std::move(open_)) || first_merge;
      merged = true;
    }
    if (now - begin >= budget) break;
  }
  if (cancel_.load()) return done_.load();  // cancel() ends the run
  const bool last = merged_blocks_ == end_block_;
  const auto now = std::chrono::steady_clock::now();
  if (last || first_merge || (merged && now - last_publish_ >= step_interval_)) publish_stepped(last);
  return done_.load();
}

void Run::publish_stepped(bool last) {
  const auto begin = std::chrono::steady_clock::now();
  RunMoments copy = pooled_moments(accum_size_);
  double active_s = 0;
  {
    std::lock_guard lock(mutex_);
    copy_open_segment(copy);
    active_s = active_seconds(begin);
  }
  exact_.moments(copy, segment_.count);
  Snapshot snap = make_snapshot(settings_, std::move(copy), keys_);
  stamp(snap, begin, active_s, last);
  std::shared_ptr<const Snapshot> shared = share_snapshot(std::move(snap));
  {
    std::lock_guard lock(snapshot_mutex_);
    std::swap(snapshot_, shared);
  }
  shared.reset();
  last_publish_ = std::chrono::steady_clock::now();
  // Pictures take at most a third of the time (the rest computes samples), not picture_share: the
  // browser's page draws at most every 50 ms and its one thread has nothing else to give the time to.
  step_interval_ = publish_wait(options_.publish_interval, last_publish_ - begin, 1, 1.0 / 3);
  if (options_.on_publish) options_.on_publish();
  if (last) {
    std::erase(stepped_runs(), this);
    std::lock_guard lock(mutex_);
    done_.store(true);
    done_cv_.notify_all();
  }
}

void Run::finish_stepped() {
  if (done_.load()) return;
  std::erase(stepped_runs(), this);
  open_.reset();
  if (abandoned_.load()) release_buffers();
  else publish_stepped(true);  // cancelled: what was merged
  std::lock_guard lock(mutex_);
  done_.store(true);
  done_cv_.notify_all();
}

void step_runs(std::chrono::steady_clock::duration budget) {
  std::vector<Run*> active;
  for (Run* r : stepped_runs())
    if (!r->paused() && !r->done()) active.push_back(r);
  // (A run's step may end it, which takes it out of stepped_runs: hence the copy.)
  for (Run* r : active) r->step(budget / std::int64_t(active.size()));
}

}  // namespace maskscope
