// Turning merged moments into the published per-layer statistics.
#include "core/stats/snapshot.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "core/model/threading.hpp"
#include "core/stats/metric_table.hpp"
#include "core/stats/metrics.hpp"

namespace maskscope {

namespace {

// Arrays of released snapshots, handed to the next one (pooled_moments, make_snapshot).
class ArrayPool {
 public:
  static constexpr std::size_t kMinBytes = std::size_t(64) << 10;  // smaller arrays: malloc is cheap
  // A snapshot's means and standard errors: the pool never holds more than one snapshot's arrays,
  // so a run holds at most the published snapshot and the one being built (which takes them).
  static constexpr std::size_t kMaxSpares = 2;

  // `size` values (contents unspecified): a kept array if one is large enough, else a fresh one.
  BigVector take(std::size_t size) {
    BigVector v;
    std::vector<BigVector> too_small;  // freed after the lock is let go
    if (size * sizeof(double) >= kMinBytes) {
      std::lock_guard lock(mutex_);
      for (std::size_t k = spare_.size(); k-- > 0;)  // the newest first
        if (spare_[k].capacity() >= size) {
          v = std::move(spare_[k]);
          spare_.erase(spare_.begin() + std::ptrdiff_t(k));  // keeps the others oldest first
          break;
        }
      if (v.capacity() == 0) {
        // None fits: the spares are an earlier run's at a smaller n (a slider move from n 256 to
        // 512), of no use to this run's snapshots. Without this they would stay until this run's
        // first snapshot is released, beside it and the one being built.
        for (std::size_t k = spare_.size(); k-- > 0;)
          if (spare_[k].capacity() < size) {
            too_small.push_back(std::move(spare_[k]));
            spare_.erase(spare_.begin() + std::ptrdiff_t(k));
          }
      }
    }
    v.clear();
    v.resize(size);  // writes nothing (BigAllocator): fresh memory is zero, kept memory keeps its values
    return v;
  }
  std::size_t bytes() {
    std::lock_guard lock(mutex_);
    std::size_t b = 0;
    for (const BigVector& v : spare_) b += v.capacity() * sizeof(double);
    return b;
  }
  void clear() {
    std::vector<BigVector> spare;  // freed after the lock is let go
    std::lock_guard lock(mutex_);
    spare.swap(spare_);
  }
  // Keeps v's memory, letting go of the oldest array kept if there is no room; what is let go is
  // freed here.
  void give(BigVector&& v) {
    if (v.capacity() * sizeof(double) < kMinBytes) return;
    BigVector evicted;
    std::lock_guard lock(mutex_);
    if (spare_.size() == kMaxSpares) {
      evicted = std::move(spare_.front());
      spare_.erase(spare_.begin());
    }
    spare_.push_back(std::move(v));
  }

 private:
  std::mutex mutex_;
  std::vector<BigVector> spare_;
};

// Never destroyed: a snapshot may be released while the program exits.
ArrayPool& array_pool() {
  static ArrayPool* pool = new ArrayPool;
  return *pool;
}

// What a snapshot's maps read: the moments, m2 turned into standard errors layer by layer once the
// layer's statistics that need M2 are computed. Its arrays go back to the pool when the last map
// reading them is let go.
struct Store {
  RunMoments m;
  ~Store() {
    ArrayPool& p = array_pool();
    p.give(std::move(m.mean));
    p.give(std::move(m.m2));
  }
};

struct Shapes {
  std::shared_ptr<const MapShape> masked, symmetric;
};

// The map of `shape` whose cells start at array[at] inside the store (all NaN without samples).
Map map_in(const std::shared_ptr<Store>& store, const std::shared_ptr<const MapShape>& shape, const BigVector& array,
           std::size_t at) {
  if (store->m.count == 0) return Map(shape, nullptr);
  return Map(shape, std::shared_ptr<const double>(store, array.data() + at));
}

// Entries [from, from + count) of the store's M2 become standard errors (RunMoments::standard_error's
// expression).
void to_standard_errors(RunMoments& m, std::size_t from, std::size_t count) {
  double* v = m.m2.data() + from;
  if (m.count < 2) {
    std::fill(v, v + count, 0.0);
    return;
  }
  const double c = static_cast<double>(m.count), denominator = c * (c - 1.0);
  for (std::size_t k = 0; k < count; ++k) v[k] = std::sqrt(std::max(0.0, v[k]) / denominator);
}

// The estimate at `at` (its tie share at ties_at, when given): NaN when the metric does not exist here. Its SE
// is 0, with the note saying so, when the per-sample values spread by more than 0 but no more than float
// resolution (docs/model.md section 4.1): they then differ by rounding only, and the mean is exact at that
// resolution. (Samples that all gave the same bits have SE 0 already, and no note.)
Estimate estimate(const RunMoments& m, bool present, std::size_t at, std::size_t ties_at = std::size_t(-1)) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (!present || m.count == 0) return {nan, nan, nan, m.count};
  Estimate e{m.mean[at], m.standard_error(at), ties_at == std::size_t(-1) ? 0.0 : m.mean[ties_at], m.count};
  if (m.count >= 2 && e.se > 0 && std::isfinite(e.mean) &&
      at_float_resolution(e.se * std::sqrt(double(m.count)), e.mean)) {
    e.se = 0.0;
    e.note = EstimateNote::exact_at_float_resolution;
  }
  return e;
}

// The per-sample metrics of the table (metric_table.hpp) of layer l whose `embeddings` flag is `hidden`
// (those of the hidden states; the others need attention): each from its slot of the moments.
void table_estimates(const RunMoments& m, const AccumLayout& L, const KeyRanges& keys, int l, bool hidden,
                     LayerStats& out) {
  for (const MetricInfo& metric : metric_table()) {
    if (!metric.slot || metric.embeddings != hidden) continue;
    const bool present = !metric.exists || metric.exists(keys);
    metric.of(out) = estimate(m, present, (L.*metric.slot)(l), metric.ties_slot ? (L.*metric.ties_slot)(l) : -1);
  }
}

// Cosines, norms, adjacency and norm adjacency of block l's hidden states.
void hidden_stats(const std::shared_ptr<Store>& store, const Shapes& shapes, const AccumLayout& L, int l,
                  const KeyRanges& keys, LayerStats& out) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const RunMoments& m = store->m;
  const int n = L.n;
  out.cosine_mean = map_in(store, shapes.symmetric, m.mean, L.cosine(l));
  out.cosine_se = map_in(store, shapes.symmetric, m.m2, L.cosine(l));
  out.norm_mean.assign(n, nan);
  out.norm_se.assign(n, nan);
  if (m.count > 0)
    for (int i = 0; i < n; ++i) {
      out.norm_mean[i] = m.mean[L.norm(l) + i];
      out.norm_se[i] = m.standard_error(L.norm(l) + i);
    }
  table_estimates(m, L, keys, l, true, out);
  if (L.hist_bins > 0 && m.count > 0) {
    LayerHistograms& h = out.histograms;
    auto bins = [&](std::size_t at) {
      return std::vector<double>(m.mean.begin() + at, m.mean.begin() + at + L.hist_bins);
    };
    h.forward_difference = bins(L.forward_difference_hist(l));
    h.backward_difference = bins(L.backward_difference_hist(l));
    h.adjacency = bins(L.adjacency_hist(l));
    if (l != L.embedding_block() || !L.embeddings)
      if (keys.recency_triples > 0) h.rp = bins(L.rp_hist(l));
    h.forward_above = estimate(m, true, L.forward_difference_above(l));
    h.backward_above = estimate(m, true, L.backward_difference_above(l));
  }
}

bool stopped(const std::atomic<bool>* stop) { return stop && stop->load(std::memory_order_relaxed); }

// The diagonal-normalized scores (a view of the score map, map.hpp) and their display quantiles.
void diag_normalize(const Map& score, LayerStats& out) {
  out.score_diag_normalized = diagonal_normalized(score);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  out.score_diag_q01 = out.score_diag_q99 = nan;
  if (!score.cells()) return;
  std::vector<double> finite;
  finite.reserve(score.shape()->cells());
  out.score_diag_normalized.each_cell([&finite](int, int, double v) {
    if (std::isfinite(v)) finite.push_back(v);
  });
  const auto q = quantiles_of_finite(finite, 0.01, 0.99);
  out.score_diag_q01 = q[0];
  out.score_diag_q99 = q[1];
}

// Block l's statistics; then its M2 become standard errors.
void block_stats(const Settings& s, const AccumLayout& L, const std::shared_ptr<Store>& store, const Shapes& shapes,
                 const KeyRanges& keys, int l, LayerStats& out) {
  RunMoments& m = store->m;
  out.layer = l + 1;
  out.score_mean = map_in(store, shapes.masked, m.mean, L.score(l));
  out.score_se = map_in(store, shapes.masked, m.m2, L.score(l));
  out.weight_mean = map_in(store, shapes.masked, m.mean, L.weight(l));
  out.weight_se = map_in(store, shapes.masked, m.m2, L.weight(l));
  hidden_stats(store, shapes, L, l, keys, out);
  table_estimates(m, L, keys, l, false, out);
  out.leakage = leakage_of(L, keys, m, L.score(l), L.score_slope(l));
  out.weight_leakage = leakage_of(L, keys, m, L.weight(l), L.weight_slope(l));

  if (s.random_weights()) {
    out.heads.resize(s.heads);
    for (int h = 0; h < s.heads; ++h) {
      HeadStats& hs = out.heads[h];
      if (s.heads == 1) {
        hs.score_mean = out.score_mean;
        hs.score_se = out.score_se;
        hs.weight_mean = out.weight_mean;
        hs.weight_se = out.weight_se;
      } else {
        hs.score_mean = map_in(store, shapes.masked, m.mean, L.head_score(l, h));
        hs.score_se = map_in(store, shapes.masked, m.m2, L.head_score(l, h));
        hs.weight_mean = map_in(store, shapes.masked, m.mean, L.head_weight(l, h));
        hs.weight_se = map_in(store, shapes.masked, m.m2, L.head_weight(l, h));
      }
      for (const MetricInfo& metric : metric_table())
        if (metric.head_slot)
          metric.head_field(hs) = estimate(m, !metric.exists || metric.exists(keys), (L.*metric.head_slot)(l, h),
                                           metric.head_ties_slot ? (L.*metric.head_ties_slot)(l, h) : -1);
      hs.leakage = s.heads == 1 ? out.leakage : leakage_of(L, keys, m, L.head_score(l, h), L.head_score_slope(l, h));
    }
  }
  for (int st = 0; st < kStageCount; ++st)
    if (L.has_stage(st)) {
      StageGram& g = out.stages[std::size_t(st)];
      g.gram_mean = map_in(store, shapes.symmetric, m.mean, L.stage_gram(l, st));
      g.gram_se = map_in(store, shapes.symmetric, m.m2, L.stage_gram(l, st));
      g.cosine_mean = map_in(store, shapes.symmetric, m.mean, L.stage_cosine(l, st));
      g.cosine_se = map_in(store, shapes.symmetric, m.m2, L.stage_cosine(l, st));
    }
  diag_normalize(out.score_mean, out);
  if (m.count > 0) to_standard_errors(m, L.base(l), L.per_layer);
}

}  // namespace

RunMoments pooled_moments(std::size_t size) {
  RunMoments m;
  m.mean = array_pool().take(size);
  m.m2 = array_pool().take(size);
  return m;
}

Snapshot make_snapshot(const Settings& s, const RunMoments& m, const KeyRanges& keys, const std::atomic<bool>* stop) {
  if (m.m2.size() != m.mean.size())
    throw std::invalid_argument("make_snapshot: " + std::to_string(m.mean.size()) + " means but " +
                                std::to_string(m.m2.size()) + " M2");
  RunMoments copy = pooled_moments(m.mean.size());
  copy.count = m.count;
  std::copy(m.mean.begin(), m.mean.end(), copy.mean.begin());
  std::copy(m.m2.begin(), m.m2.end(), copy.m2.begin());
  return make_snapshot(s, std::move(copy), keys, stop);
}

Snapshot make_snapshot(const Settings& s, RunMoments&& m, const KeyRanges& keys, const std::atomic<bool>* stop) {
  const AccumLayout L = accum_layout(s);
  if (m.count > 0 && (m.mean.size() != L.total() || m.m2.size() != L.total()))
    throw std::invalid_argument("make_snapshot: moments of " + std::to_string(m.mean.size()) +
                                " values for a layout of " + std::to_string(L.total()));
  auto store = std::make_shared<Store>();
  store->m = std::move(m);
  const Shapes shapes{masked_shape(keys), symmetric_shape(s.n)};
  Snapshot snap;
  snap.settings = s;
  snap.samples_done = store->m.count;
  snap.layers.resize(s.layers);
  // Layers are independent. From 100,000 values (n 150 at 4 layers) a second thread takes the later
  // half: at n 512 a snapshot is milliseconds of work, and a new run's first picture waits for it.
  // (Not in the browser's one-thread page, threading.hpp.)
  const int split = kThreadsAvailable && L.total() >= 100'000 && s.layers >= 2 ? s.layers / 2 : s.layers;
  std::thread helper;
  if (split < s.layers)
    helper = std::thread([&] {
      for (int l = split; l < s.layers && !stopped(stop); ++l)
        block_stats(s, L, store, shapes, keys, l, snap.layers[l]);
    });
  for (int l = 0; l < split && !stopped(stop); ++l) block_stats(s, L, store, shapes, keys, l, snap.layers[l]);
  if (helper.joinable()) helper.join();
  if (stopped(stop)) return snap;  // incomplete: its caller throws it away
  if (L.embeddings) {
    snap.embeddings.resize(1);
    LayerStats& e = snap.embeddings[0];
    e.layer = 0;
    hidden_stats(store, shapes, L, L.embedding_block(), keys, e);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    e.rp = {nan, nan, nan, e.adjacency.samples};
    if (store->m.count > 0) to_standard_errors(store->m, L.base(L.embedding_block()), L.per_layer);
  }
  return snap;
}

std::size_t pooled_map_bytes() { return array_pool().bytes(); }

void release_pooled_maps() { array_pool().clear(); }

std::shared_ptr<const Snapshot> share_snapshot(Snapshot&& snap) {
  return std::make_shared<const Snapshot>(std::move(snap));
}

const LayerStats* layer_stats(const Snapshot& snap, int layer) {
  if (layer == 0) return snap.embeddings.empty() ? nullptr : &snap.embeddings.front();
  if (layer < 1 || layer > int(snap.layers.size())) return nullptr;
  return &snap.layers[std::size_t(layer - 1)];
}

LayerStats head_view(const LayerStats& l, int head) {
  LayerStats v = l;
  if (head < 0 || head >= int(l.heads.size())) return v;
  const HeadStats& h = l.heads[std::size_t(head)];
  v.score_mean = h.score_mean;
  v.score_se = h.score_se;
  v.weight_mean = h.weight_mean;
  v.weight_se = h.weight_se;
  v.rp = h.rp;
  v.leakage = h.leakage;
  diag_normalize(h.score_mean, v);
  return v;
}

}  // namespace maskscope
