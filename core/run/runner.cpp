// Threads, ordered merging and snapshot publication for a Run.
#include "core/run/runner.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/run/resources.hpp"
#include "core/kernel/simulator.hpp"

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace maskscope {

namespace {

std::string describe(const std::vector<SettingError>& errors) {
  std::string text = "invalid settings:";
  for (const auto& e : errors) text += "\n  --" + e.setting + ": " + e.message;
  return text;
}
}  // namespace

Run::Run(const Settings& s, RunOptions options) : settings_(s), options_(std::move(options)) {
  if (auto errors = validate(s); !errors.empty()) throw std::invalid_argument(describe(errors));
  grid_ = sample_grid(s);
  segments_ = options_.segments;
  if (segments_.end < 0) segments_.end = grid_.segments();
  if (segments_.begin < 0 || segments_.begin > segments_.end || segments_.end > grid_.segments())
    throw std::invalid_argument("segments [" + std::to_string(segments_.begin) + ", " + std::to_string(segments_.end) +
                                ") are not within this run's " + std::to_string(grid_.segments()) + " segments");
  begin_block_ = grid_.first_block(segments_.begin);
  end_block_ = grid_.first_block(segments_.end);
  begin_sample_ = grid_.first_sample(segments_.begin);
  end_sample_ = grid_.first_sample(segments_.end);
  next_block_ = merged_blocks_ = begin_block_;
  accum_size_ = accum_layout(s).total();
  // No buffer of accum_size_ is filled here: at n 512 each is 25 MB, and a new run (a slider move in
  // the window) should cost the caller nothing. The open segment takes over the first block merged,
  // the publisher sizes its copy, and exact_'s memory is zero until written (its pages arrive with the
  // first fold).
  exact_ = ExactSums(accum_size_);
  keys_ = key_ranges(s);
  const int threads = threads_ = resolved_threads(s);
  lookahead_ = merge_lookahead(s, threads);  // bounds the blocks waiting for their turn to merge (resources.hpp)
  start_ = std::chrono::steady_clock::now();
  if (options_.start_paused) {
    paused_.store(true);
    paused_since_ = start_;
  }
  // The picture before any sample: the settings and no layers (what a window shows while it waits).
  auto empty = std::make_shared<Snapshot>();
  empty->settings = settings_;
  snapshot_ = std::move(empty);
  if (options_.stepped) {  // step() computes, on its caller's thread
    last_publish_ = start_;
    step_interval_ = options_.publish_interval;
    detail::stepped_runs().push_back(this);
    return;
  }
  workers_running_ = threads;
  for (int t = 0; t < threads; ++t) workers_.emplace_back([this] { worker_main(); });
  publisher_ = std::thread([this] { publisher_main(); });
}

Run::~Run() {
  if (options_.stepped) {  // nobody reads it again: no final snapshot
    std::erase(detail::stepped_runs(), this);
    abandoned_.store(true);
    cancel_.store(true);
    return;
  }
  cancel();
  for (auto& w : workers_)
    if (w.joinable()) w.join();
  if (publisher_.joinable()) publisher_.join();
}

void Run::cancel() {
  cancel_.store(true);
  if (options_.stepped) {
    finish_stepped();
    return;
  }
  std::lock_guard lock(mutex_);
  cv_.notify_all();
  publisher_cv_.notify_all();
}

void Run::abandon() {
  abandoned_.store(true);
  cancel();
}

void Run::set_paused(bool paused) {
  std::lock_guard lock(mutex_);
  if (paused == paused_.load()) return;
  const auto now = std::chrono::steady_clock::now();
  if (paused) paused_since_ = now;
  else paused_total_ += now - paused_since_;
  paused_.store(paused);
  cv_.notify_all();
}

void Run::wait() {
  while (options_.stepped && !done_.load()) {
    if (paused_.load()) throw std::logic_error("Run::wait: a paused stepped run never ends");
    step(std::chrono::hours(1));
  }
  std::unique_lock lock(mutex_);
  done_cv_.wait(lock, [this] { return done_.load(); });
}

std::shared_ptr<const Snapshot> Run::snapshot() const {
  std::lock_guard lock(snapshot_mutex_);
  return snapshot_;
}

void Run::worker_main() {
#if defined(__linux__)
  if (options_.low_priority) setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 10);
#endif
  try {
    worker_loop();
  } catch (const std::exception& e) { fail(e.what()); } catch (...) {
    fail("unknown error");
  }
  std::lock_guard lock(mutex_);
  --workers_running_;
  cv_.notify_all();
  publisher_cv_.notify_all();
}

void Run::fail(const char* what) {
  {
    std::lock_guard lock(error_mutex_);
    if (error_.empty()) error_ = std::string(what).empty() ? "unknown error" : what;
  }
  cancel_.store(true);
  std::lock_guard lock(mutex_);
  cv_.notify_all();
  publisher_cv_.notify_all();
}

std::string Run::error() const {
  std::lock_guard lock(error_mutex_);
  return error_;
}

void Run::worker_loop() {
  Simulator sim(settings_, false, options_.kernel);
  for (;;) {
    std::int64_t block;
    // A buffer only for a block to compute: a worker waiting for its turn holds none, so the run
    // has at most lookahead_ block buffers (at n 512, 12.6 MB each), not one more per waiting worker.
    std::unique_ptr<BlockSums> buffer;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [this] {
        const bool may_start = first_picture_out_ || !options_.first_picture_alone || next_block_ == begin_block_;
        return cancel_.load() || (!paused_.load() && may_start && next_block_ < merged_blocks_ + lookahead_);
      });
      if (cancel_.load() || next_block_ >= end_block_) break;
      block = next_block_++;
      if (!free_buffers_.empty()) {
        buffer = std::move(free_buffers_.back());
        free_buffers_.pop_back();
      }
    }
    if (!buffer) buffer = std::make_unique<BlockSums>();  // sized by simulate_block
    if (!compute_block(sim, block, *buffer)) break;
    std::lock_guard lock(mutex_);
    const bool first_merge = merge_block(block, std::move(buffer));
    // Workers waiting for their turn may go on. The publisher and wait() only care about the first
    // merge and the end: a wake-up per block (every millisecond at n 50) cost the workers 2-3%.
    cv_.notify_all();
    if (first_merge) publisher_cv_.notify_all();
  }
}

bool Run::compute_block(Simulator& sim, std::int64_t block, BlockSums& buffer) {
  const std::int64_t first = block * grid_.block_size;
  const std::int64_t count = std::min(grid_.block_size, settings_.samples - first);
  // One-sample blocks store no squares (half the memory and writing), a run's first too: it
  // becomes the open segment with its squares still implied (BlockSums::take), and the first
  // picture needs none (one sample has M2 0).
  Simulator::BlockOptions how;
  how.implied_squares = true;
  // With the first picture first, the other workers wait during the first block: its first
  // sample's pair counts (half its time at n 512) take a second core. From n 256, where they
  // outweigh a thread's start. (Not in a stepped run: no second thread.)
  how.split_first_sample =
      block == begin_block_ && options_.first_picture_alone && settings_.n >= 256 && !options_.stepped;
  return sim.simulate_block(static_cast<std::uint64_t>(first), count, buffer, &cancel_, how);
}

bool Run::merge_block(std::int64_t block, std::unique_ptr<BlockSums> buffer) {
  const bool first_merge = merged_blocks_ == begin_block_;
  pending_[block] = std::move(buffer);
  for (auto it = pending_.find(merged_blocks_); it != pending_.end(); it = pending_.find(merged_blocks_)) {
    BlockSums& b = *it->second;
    if (segment_.count == 0) segment_.take(b);  // a segment's first block is its sum
    else segment_.add(b);
    free_buffers_.push_back(std::move(it->second));
    pending_.erase(it);
    ++merged_blocks_;
    if ((merged_blocks_ - begin_block_) % grid_.segment_blocks == 0 || merged_blocks_ == end_block_) fold_segment();
  }
  samples_done_.store(exact_.count() + segment_.count, std::memory_order_relaxed);
  return first_merge && merged_blocks_ > begin_block_;
}

void Run::fold_segment() {
  std::unique_lock exclusive(exact_mutex_);
  exact_.add(segment_);
  ++folds_;
  exclusive.unlock();
  segment_.count = 0;  // its stale sums stay until the next block is swapped in; nobody reads them at count 0
}

void Run::release_buffers() {
  // An abandoned run's sums go here, on its own thread, so that destroying it later (on a window's
  // UI thread) frees nothing large. The workers have stopped; readers get the settings-only picture.
  {
    std::lock_guard lock(mutex_);
    segment_ = BlockSums();
    pending_.clear();
    free_buffers_.clear();
  }
  {
    std::unique_lock exclusive(exact_mutex_);
    exact_ = ExactSums();
  }
  auto empty = std::make_shared<Snapshot>();
  empty->settings = settings_;
  std::lock_guard lock(snapshot_mutex_);
  snapshot_ = std::move(empty);
}

void Run::publisher_main() {
  try {
    publisher_loop();
  } catch (const std::exception& e) { fail(e.what()); } catch (...) {
    fail("unknown error");
  }
  std::unique_lock lock(mutex_);
  publisher_cv_.wait(lock, [this] { return workers_running_ == 0; });  // cancelled on failure: they stop
  done_.store(true);
  done_cv_.notify_all();
}

void Run::publisher_loop() {
  bool published_data = false;
  std::int64_t published_samples = 0;  // the initial picture has none
  // The wait between pictures: the publish interval, or longer when the last picture cost more (its
  // moments and snapshot, and what its readers reported), so that pictures take at most
  // picture_share of the workers' time (publish_pace.hpp). At n 512 a picture costs 15-45 ms: one
  // every 25 ms would take a core from the samples.
  std::chrono::steady_clock::duration interval = options_.publish_interval;
  for (;;) {
    bool last = false;
    // The next snapshot's arrays (pooled_moments): the open segment is copied into them under the
    // lock, exact_'s sums are added in place, and make_snapshot keeps them.
    RunMoments copy;
    double active_s = 0;
    auto now = std::chrono::steady_clock::now();
    bool retry = false;
    // A new run's first picture of one sample (n >= 300 at d 64, L 4), while the other workers wait
    // for it: nothing changes the open segment until first_picture_out_, so its array of values is
    // swapped into the picture as its means (one sample: sum = mean, M2 0), and the segment gets a
    // copy of them back once the picture is out. At n 512 the copy is 12.6 MB: after the picture,
    // not before it.
    const double* borrowed = nullptr;  // the picture's means, which the segment lends
    auto give_back = [&] {             // before any worker may merge again
      if (!borrowed) return;
      std::lock_guard lock(mutex_);
      std::copy(borrowed, borrowed + accum_size_, segment_.sum.begin());
      borrowed = nullptr;
    };
    for (;;) {  // until the copy of the segment and exact_ agree (a fold in between: copy again)
      // Not for an abandoned run, whose publisher only waits for its workers: the pool's arrays are
      // for the next run's first picture. (abandoned_ never goes back to false, so past the check
      // below that breaks on it, the arrays were taken.)
      if (!abandoned_.load() && copy.mean.size() != accum_size_) copy = pooled_moments(accum_size_);
      std::int64_t folds = 0, pending = 0;
      {
        std::unique_lock lock(mutex_);
        // The first snapshot goes out as soon as the first block is merged, so a restarted view
        // shows data at once; later ones at the publish interval.
        if (!retry)
          publisher_cv_.wait_for(lock, interval, [&] {
            return workers_running_ == 0 || (!published_data && merged_blocks_ > begin_block_);
          });
        published_data = published_data || merged_blocks_ > begin_block_;
        last = workers_running_ == 0;
        if (abandoned_.load()) break;
        // Nothing new since the last picture (no block merged yet, or paused): no snapshot to
        // build. At n 512 an empty one costs milliseconds of a core the first sample needs.
        if (!last && exact_.count() + segment_.count == published_samples) {
          retry = false;
          continue;
        }
        // The workers wait only for this copy of the open segment, not for the snapshot.
        pending = segment_.count;
        if (pending == 1 && exact_.count() == 0 && !last && options_.first_picture_alone && !first_picture_out_ &&
            segment_.squares_implied()) {
          copy.count = 1;
          copy.mean.swap(segment_.sum);  // the segment holds the copy's array (same size) until give_back
          borrowed = copy.mean.data();   // stays where it is when the snapshot takes the array
        } else {
          copy_open_segment(copy);
        }
        folds = folds_;
        now = std::chrono::steady_clock::now();
        active_s = active_seconds(now);
      }
      if (borrowed) break;
      std::shared_lock shared(exact_mutex_);
      retry = folds != folds_;
      if (retry) continue;
      exact_.moments(copy, pending);  // the segment's sums become the moments of everything so far
      break;
    }
    if (abandoned_.load()) {
      give_back();
      if (!last) continue;  // wait for the workers, then end without a final snapshot
      release_buffers();
      break;
    }
    published_samples = copy.count;
    Snapshot snap = make_snapshot(settings_, std::move(copy), keys_, &abandoned_);
    if (abandoned_.load()) {  // nobody reads it: its arrays go back to the pool; then wait for the workers
      give_back();
      snap = Snapshot();
      continue;
    }
    stamp(snap, now, active_s, last);
    std::shared_ptr<const Snapshot> shared = share_snapshot(std::move(snap));
    const std::shared_ptr<const Snapshot> published = shared;  // holds the borrowed values until give_back
    {
      std::lock_guard lock(snapshot_mutex_);
      std::swap(snapshot_, shared);
    }
    shared.reset();  // the previous picture (its arrays to the pool) unless a reader still holds it
    give_back();
    const std::chrono::nanoseconds cost = std::chrono::steady_clock::now() - now;
    interval = publish_wait(options_.publish_interval, cost + std::chrono::nanoseconds(reader_cost_ns_.load()),
                            threads_, options_.picture_share);
    if (!first_picture_out_ && published_samples > 0) {
      std::lock_guard lock(mutex_);
      first_picture_out_ = true;  // the waiting workers start
      cv_.notify_all();
    }
    if (options_.on_publish) options_.on_publish();
    if (last) break;
  }
}

void Run::copy_open_segment(RunMoments& copy) const {
  if (segment_.count > 0) {
    copy.mean.assign(segment_.sum.begin(), segment_.sum.end());
    if (segment_.squares_implied())  // one sample: its squares as take() or add() would form them
      squares_of(segment_.sum, copy.m2);
    else copy.m2.assign(segment_.sumsq.begin(), segment_.sumsq.end());
  } else {
    copy.mean.assign(accum_size_, 0.0);
    copy.m2.assign(accum_size_, 0.0);
  }
}

double Run::active_seconds(std::chrono::steady_clock::time_point now) const {
  auto active = now - start_ - paused_total_;
  if (paused_.load()) active -= now - paused_since_;
  return std::chrono::duration<double>(active).count();
}

void Run::stamp(Snapshot& snap, std::chrono::steady_clock::time_point now, double active_s, bool last) const {
  snap.elapsed_s = std::chrono::duration<double>(now - start_).count();
  snap.samples_per_s = active_s > 0 ? static_cast<double>(snap.samples_done) / active_s : 0.0;
  snap.finished = snap.samples_done >= end_sample_ - begin_sample_;
  snap.cancelled = last && !snap.finished;
}

std::shared_ptr<const Snapshot> run_to_completion(const Settings& s) {
  Run run(s);
  run.wait();
  if (std::string why = run.error(); !why.empty()) throw std::runtime_error(why);
  return run.snapshot();
}

}  // namespace maskscope
