// The sweep engine (sweep.hpp): stages of Runs over segment ranges, exact totals per point, early stopping.
#include "core/run/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/model/threading.hpp"
#include "core/run/runner.hpp"
#include "core/stats/exact_sums.hpp"
#include "core/stats/sample_grid.hpp"

namespace maskscope {

struct Sweep::Work {
  ExactSums total;            // the exact sums of segments [0, segments)
  std::int64_t segments = 0;  // done
  std::int64_t grid_segments = 0;
  double elapsed_s = 0;  // compute time of its runs
};

namespace {

// The largest ratio SE / target over the layers (infinite when an SE is not a number).
double se_ratio(const Snapshot& snap, const SweepMetric& metric, double target) {
  double worst = 0;
  for (const LayerStats& l : snap.layers) {
    const double se = metric_value(l, metric).se;
    worst = std::isfinite(se) ? std::max(worst, se / target) : INFINITY;
  }
  return snap.layers.empty() ? INFINITY : worst;
}

}  // namespace

std::int64_t preview_samples(const Settings& s) {
  const SampleGrid g = sample_grid(s);
  return std::min(s.samples, std::max<std::int64_t>(1, g.first_sample(1) / 32));
}

Sweep::Sweep(std::vector<Settings> points, SweepOptions options) : options_(std::move(options)) {
  if (points.empty()) throw std::invalid_argument("a sweep needs at least one point");
  if (!kThreadsAvailable) throw std::invalid_argument(kNeedsThreads);  // its stages wait for their runs
  for (const Settings& s : points) {
    if (const auto errors = validate(s); !errors.empty())
      throw std::invalid_argument("invalid point: " + errors.front().setting + ": " + errors.front().message);
    SweepPoint p;
    p.settings = s;
    points_.push_back(std::move(p));
    auto w = std::make_unique<Work>();
    w->grid_segments = sample_grid(s).segments();
    work_.push_back(std::move(w));
  }
  start_ = last_publish_ = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mutex_);
    publish(true);
  }
  main_ = std::thread([this] { main_loop(); });
}

Sweep::~Sweep() {
  cancel();
  if (main_.joinable()) main_.join();
}

void Sweep::cancel() {
  cancel_.store(true);
  std::lock_guard lock(mutex_);
  for (Run* r : runs_) r->cancel();
}

void Sweep::wait() {
  std::unique_lock lock(mutex_);
  done_cv_.wait(lock, [this] { return done_.load(); });
}

std::shared_ptr<const SweepState> Sweep::snapshot() const {
  std::lock_guard lock(mutex_);
  return state_;
}

std::shared_ptr<const SweepState> Sweep::publish(bool force) {  // under mutex_
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_publish_ < std::chrono::milliseconds(20)) return nullptr;
  last_publish_ = now;
  auto state = std::make_shared<SweepState>();
  state->points = points_;
  state->stages = stages_;
  state->cancelled = cancel_.load();
  state->finished = std::all_of(points_.begin(), points_.end(), [](const SweepPoint& p) { return p.done; });
  state->elapsed_s = std::chrono::duration<double>(now - start_).count();
  state->error = error_;
  state_ = std::move(state);
  return state_;
}

void Sweep::notify(const std::shared_ptr<const SweepState>& state) const {
  if (state && options_.on_publish) options_.on_publish(state);
}

std::unique_ptr<Run> Sweep::run_to_end(Settings s, SegmentRange segments, int threads) {
  s.threads = threads;
  RunOptions o;
  o.segments = segments;
  o.low_priority = options_.low_priority;
  o.publish_interval = std::chrono::hours(1);  // a picture at the first block and at the end only
  auto run = std::make_unique<Run>(s, o);
  {
    std::lock_guard lock(mutex_);
    if (cancel_.load()) run->cancel();
    runs_.push_back(run.get());
  }
  run->wait();
  {
    std::lock_guard lock(mutex_);
    runs_.erase(std::find(runs_.begin(), runs_.end(), run.get()));
  }
  if (cancel_.load() || run->exact().count() != run->samples_in_range()) return nullptr;
  return run;
}

bool Sweep::preview(std::size_t p, int threads) {
  Settings s = points_[p].settings;
  s.samples = preview_samples(s);
  const auto run = run_to_end(s, {0, -1}, threads);
  if (!run) return false;
  std::shared_ptr<const SweepState> published;
  {
    std::lock_guard lock(mutex_);
    SweepPoint& point = points_[p];
    point.snapshot = run->snapshot();  // `run --samples <preview>` itself
    point.samples = point.snapshot->samples_done;
    published = publish(false);
  }
  notify(published);
  return true;
}

bool Sweep::refine(std::size_t p, std::int64_t from, std::int64_t to, int threads) {
  auto run = run_to_end(points_[p].settings, {from, to}, threads);  // settings: constant, no lock needed
  if (!run) return false;

  Work& w = *work_[p];
  if (w.total.size() == 0) w.total = ExactSums(run->exact().size());
  w.total.add(run->exact());
  w.segments = to;
  w.elapsed_s += run->snapshot()->elapsed_s;
  run.reset();
  // The picture of segments [0, to): what `run --samples <their samples>` publishes at its end.
  Settings shown = points_[p].settings;
  shown.samples = w.total.count();
  RunMoments m(w.total.size());
  w.total.moments(m, 0);
  Snapshot snap = make_snapshot(shown, std::move(m), key_ranges(shown));
  snap.elapsed_s = w.elapsed_s;
  snap.samples_per_s = w.elapsed_s > 0 ? double(snap.samples_done) / w.elapsed_s : 0.0;
  snap.finished = true;
  const bool at_cap = to >= w.grid_segments;
  const bool reached = options_.target_se > 0 && snap.samples_done >= kSweepMinSamplesToStop &&
                       se_ratio(snap, options_.metric, options_.target_se) <= 1.0;
  auto shared = share_snapshot(std::move(snap));
  if (at_cap || reached) w.total = ExactSums();  // no more stages: its memory goes
  std::shared_ptr<const SweepState> published;
  {
    std::lock_guard lock(mutex_);
    SweepPoint& point = points_[p];
    point.snapshot = std::move(shared);
    point.samples = point.snapshot->samples_done;
    point.done = at_cap || reached;
    point.stopped_early = reached && !at_cap;
    published = publish(false);
  }
  notify(published);
  return true;
}

void Sweep::for_each_point(const std::vector<std::size_t>& points, const std::function<bool(std::size_t, int)>& f) {
  const int total_threads = resolved_threads([&] {
    Settings t;
    t.threads = options_.threads;
    return t;
  }());
  // Points side by side, one run each; the threads left over go to each run (the last points of a stage).
  const int workers = std::max(1, std::min<int>(total_threads, int(points.size())));
  const int per_run = std::max(1, total_threads / workers);
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < points.size() && !cancel_.load(); i = next++) {
      try {
        if (!f(points[i], per_run)) return;
      } catch (const std::exception& e) {
        {
          std::lock_guard lock(mutex_);
          error_ = e.what();
        }
        cancel();
        return;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < workers; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
}

void Sweep::main_loop() {
  // The preview: every point's first picture from a few samples, far fewer than a segment (a 441-point
  // diagram's first segments take seconds). Not part of the refinement: stage 1 starts from sample 0.
  std::vector<std::size_t> all(points_.size());
  for (std::size_t p = 0; p < all.size(); ++p) all[p] = p;
  std::vector<std::size_t> previewed;
  for (std::size_t p : all)
    if (preview_samples(points_[p].settings) < sample_grid(points_[p].settings).first_sample(1)) previewed.push_back(p);
  for_each_point(previewed, [this](std::size_t p, int threads) { return preview(p, threads); });
  if (!previewed.empty() && !cancel_.load()) {
    std::shared_ptr<const SweepState> state;
    {
      std::lock_guard lock(mutex_);
      state = publish(true);  // the whole preview
    }
    notify(state);
  }
  while (!cancel_.load()) {
    std::vector<std::size_t> active;
    for (std::size_t p = 0; p < points_.size(); ++p)
      if (!points_[p].done) active.push_back(p);
    if (active.empty()) break;
    // One stage: every active point gets its next range of segments. The first stage is one segment;
    // then up to twice the segments so far, or fewer when the SE so far says fewer will reach the target
    // (needed samples scale as (SE / target)^2).
    for_each_point(active, [this](std::size_t p, int threads) {
      const Work& w = *work_[p];
      const std::int64_t k = w.segments;
      std::int64_t to = k == 0 ? 1 : 2 * k;
      if (k > 0 && options_.target_se > 0) {
        std::shared_ptr<const Snapshot> snap;
        {
          std::lock_guard lock(mutex_);
          snap = points_[p].snapshot;
        }
        const double r = se_ratio(*snap, options_.metric, options_.target_se);
        if (std::isfinite(r)) to = std::max(k + 1, std::int64_t(std::min(double(2 * k), std::ceil(double(k) * r * r))));
      }
      return refine(p, k, std::min(to, w.grid_segments), threads);
    });
    if (cancel_.load()) break;
    std::shared_ptr<const SweepState> state;
    {
      std::lock_guard lock(mutex_);
      ++stages_;
      state = publish(true);
    }
    notify(state);
  }
  std::shared_ptr<const SweepState> state;
  {
    std::lock_guard lock(mutex_);
    state = publish(true);
    done_.store(true);
    done_cv_.notify_all();
  }
  notify(state);
}

}  // namespace maskscope
