// Turning merged moments into the published per-layer statistics.
#include "snapshot.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <iterator>
#include <mutex>
#include <thread>
#include <utility>

#include "metrics.hpp"

namespace maskscope {

namespace {

// Map memory of released snapshots (share_snapshot), handed to the next make_snapshot.
class MapPool {
 public:
  static constexpr std::size_t kMinBytes = std::size_t(64) << 10;   // smaller maps: malloc is cheap
  static constexpr std::size_t kMaxBytes = std::size_t(64) << 20;   // held at most (one n 512 snapshot)

  // An empty vector with capacity for `size` doubles if the pool has one, else an empty vector.
  std::vector<double> take(std::size_t size) {
    std::vector<double> v;
    if (size * sizeof(double) < kMinBytes) return v;
    std::vector<std::vector<double>> too_small;  // freed after the lock is let go
    {
      std::lock_guard lock(mutex_);
      for (std::size_t k = spare_.size(); k-- > 0;)  // the newest first
        if (spare_[k].capacity() >= size) {
          v = std::move(spare_[k]);
          spare_.erase(spare_.begin() + std::ptrdiff_t(k));  // keeps the others oldest first
          bytes_ -= v.capacity() * sizeof(double);
          break;
        }
      if (v.capacity() == 0) {
        // No map fits: the spares are an earlier run's at a smaller n (a slider move from n 256 to
        // 512), of no use to this run's snapshots. Without this they would stay until this run's
        // first snapshot is released, beside it and the one being built.
        for (std::size_t k = spare_.size(); k-- > 0;)
          if (spare_[k].capacity() < size) {
            bytes_ -= spare_[k].capacity() * sizeof(double);
            too_small.push_back(std::move(spare_[k]));
            spare_.erase(spare_.begin() + std::ptrdiff_t(k));
          }
      }
    }
    v.clear();
    return v;
  }
  std::size_t bytes() {
    std::lock_guard lock(mutex_);
    return bytes_;
  }
  void clear() {
    std::vector<std::vector<double>> spare;  // freed after the lock is let go
    std::lock_guard lock(mutex_);
    spare.swap(spare_);
    bytes_ = 0;
  }
  // Keeps v's memory, letting go of the oldest maps kept if there is no room (a run at another n
  // left them); what is let go is freed here.
  void give(std::vector<double>&& v) {
    const std::size_t b = v.capacity() * sizeof(double);
    if (b < kMinBytes || b > kMaxBytes) return;
    std::vector<std::vector<double>> evicted;
    {
      std::lock_guard lock(mutex_);
      std::size_t drop = 0;
      while (bytes_ + b > kMaxBytes) bytes_ -= spare_[drop++].capacity() * sizeof(double);
      evicted.assign(std::make_move_iterator(spare_.begin()), std::make_move_iterator(spare_.begin() + std::ptrdiff_t(drop)));
      spare_.erase(spare_.begin(), spare_.begin() + std::ptrdiff_t(drop));
      bytes_ += b;
      spare_.push_back(std::move(v));
    }
  }

 private:
  std::mutex mutex_;
  std::vector<std::vector<double>> spare_;
  std::size_t bytes_ = 0;
};

// Never destroyed: a snapshot may be released while the program exits.
MapPool& map_pool() {
  static MapPool* pool = new MapPool;
  return *pool;
}

void give_maps(LayerStats& l) {
  MapPool& p = map_pool();
  for (auto* v : {&l.score_mean, &l.score_se, &l.weight_mean, &l.weight_se, &l.cosine_mean, &l.cosine_se,
                  &l.score_diag_normalized})
    p.give(std::move(*v));
  for (HeadStats& h : l.heads)
    for (auto* v : {&h.score_mean, &h.score_se, &h.weight_mean, &h.weight_se}) p.give(std::move(*v));
}

// `v`, with room for `size` doubles: pooled memory where there is some (its contents are for the
// caller to assign).
std::vector<double>& pooled(std::vector<double>& v, std::size_t size) {
  if (v.capacity() < size) v = map_pool().take(size);
  return v;
}

// Mean and standard error of an n x n map's unmasked entries (NaN elsewhere).
// (The packed map at `at` of layout L, unpacked.)
void masked_map(const RunMoments& m, const AccumLayout& L, std::size_t at, const KeyRanges& keys,
                std::vector<double>& mean, std::vector<double>& se) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const int n = L.n;
  pooled(mean, std::size_t(n) * n).assign(std::size_t(n) * n, nan);
  pooled(se, std::size_t(n) * n).assign(std::size_t(n) * n, nan);
  if (m.count == 0) return;
  for (int i = 0; i < n; ++i) {
    const std::size_t row = at + L.map_row(i);
    for (int j = keys.lo[i]; j <= keys.hi[i]; ++j) {
      const std::size_t e = std::size_t(i) * n + j, k = row + std::size_t(j - keys.lo[i]);
      mean[e] = m.mean[k];
      se[e] = m.standard_error(k);
    }
  }
}

struct Metric {
  double mean, se, ties;
};
Metric metric(const RunMoments& m, bool present, std::size_t at, std::size_t ties_at) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (!present || m.count == 0) return {nan, nan, nan};
  return {m.mean[at], m.standard_error(at), m.mean[ties_at]};
}

// Cosines, norms, adjacency and norm adjacency of block l's hidden states.
void hidden_stats(const RunMoments& m, const AccumLayout& L, int l, const KeyRanges& keys, LayerStats& out) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const int n = L.n;
  const std::size_t nn = std::size_t(n) * n;
  pooled(out.cosine_mean, nn).assign(nn, nan);
  pooled(out.cosine_se, nn).assign(nn, nan);
  out.norm_mean.assign(n, nan);
  out.norm_se.assign(n, nan);
  if (m.count > 0) {
    for (int i = 0; i < n; ++i) {
      const std::size_t row = L.cosine(l) + L.cosine_row(i);
      for (int j = 0; j <= i; ++j) {
        const std::size_t e = std::size_t(i) * n + j;
        out.cosine_mean[e] = m.mean[row + j];
        out.cosine_se[e] = m.standard_error(row + j);
      }
      out.norm_mean[i] = m.mean[L.norm(l) + i];
      out.norm_se[i] = m.standard_error(L.norm(l) + i);
    }
    // The upper triangle mirrors the lower, in tiles (a column at a time strides n doubles).
    constexpr int kTile = 32;
    for (int i0 = 0; i0 < n; i0 += kTile)
      for (int j0 = 0; j0 <= i0; j0 += kTile)
        for (int i = i0; i < std::min(n, i0 + kTile); ++i)
          for (int j = j0; j < std::min(i, j0 + kTile); ++j) {
            const std::size_t e = std::size_t(i) * n + j, t = std::size_t(j) * n + i;
            out.cosine_mean[t] = out.cosine_mean[e];
            out.cosine_se[t] = out.cosine_se[e];
          }
  }
  const bool has_adj = keys.adjacency_rows > 0;
  const Metric adj = metric(m, has_adj, L.adjacency(l), L.adjacency_ties(l));
  out.adjacency = adj.mean;
  out.adjacency_se = adj.se;
  out.adjacency_ties = adj.ties;
  const Metric nadj = metric(m, has_adj, L.norm_adjacency(l), L.norm_adjacency_ties(l));
  out.norm_adjacency = nadj.mean;
  out.norm_adjacency_se = nadj.se;
  out.norm_adjacency_ties = nadj.ties;
}

bool stopped(const std::atomic<bool>* stop) { return stop && stop->load(std::memory_order_relaxed); }

// Block l's statistics.
void block_stats(const Settings& s, const AccumLayout& L, const RunMoments& m, const KeyRanges& keys, int l,
                 LayerStats& out) {
  const int n = s.n;
  const bool has_rp = keys.recency_triples > 0;
  out.layer = l + 1;
  masked_map(m, L, L.score(l), keys, out.score_mean, out.score_se);
  masked_map(m, L, L.weight(l), keys, out.weight_mean, out.weight_se);
  hidden_stats(m, L, l, keys, out);
  const Metric rp = metric(m, has_rp, L.recency(l), L.recency_ties(l));
  out.recency = rp.mean;
  out.recency_se = rp.se;
  out.recency_ties = rp.ties;
  out.leakage = leakage_of(L, keys, m, L.score(l), L.score_slope(l));
  out.weight_leakage = leakage_of(L, keys, m, L.weight(l), L.weight_slope(l));
  if (s.random_weights()) {
    out.heads.resize(s.heads);
    for (int h = 0; h < s.heads; ++h) {
      HeadStats& hs = out.heads[h];
      if (s.heads == 1) {
        for (auto [to, from] : {std::pair{&hs.score_mean, &out.score_mean}, {&hs.score_se, &out.score_se},
                                {&hs.weight_mean, &out.weight_mean}, {&hs.weight_se, &out.weight_se}})
          pooled(*to, from->size()).assign(from->begin(), from->end());
      } else {
        masked_map(m, L, L.head_score(l, h), keys, hs.score_mean, hs.score_se);
        masked_map(m, L, L.head_weight(l, h), keys, hs.weight_mean, hs.weight_se);
      }
      const Metric hrp = metric(m, has_rp, L.head_recency(l, h), L.head_recency_ties(l, h));
      hs.recency = hrp.mean;
      hs.recency_se = hrp.se;
      hs.recency_ties = hrp.ties;
      hs.leakage = s.heads == 1 ? out.leakage : leakage_of(L, keys, m, L.head_score(l, h), L.head_score_slope(l, h));
    }
  }
  diagonal_normalized(out.score_mean, n, pooled(out.score_diag_normalized, out.score_mean.size()));
  std::vector<double> scratch = map_pool().take(out.score_diag_normalized.size());
  const auto q = quantiles(out.score_diag_normalized, 0.01, 0.99, scratch);
  map_pool().give(std::move(scratch));
  out.score_diag_q01 = q[0];
  out.score_diag_q99 = q[1];
}

}  // namespace

Snapshot make_snapshot(const Settings& s, const RunMoments& m, const KeyRanges& keys, const std::atomic<bool>* stop) {
  const AccumLayout L = accum_layout(s);
  Snapshot snap;
  snap.settings = s;
  snap.samples_done = m.count;
  snap.layers.resize(s.layers);
  // Layers are independent. From 100,000 values (n 150 at 4 layers) a second thread takes the later
  // half: at n 512 a snapshot is about 25 ms of work, and a new run's first picture waits for it.
  const int split = L.total() >= 100'000 && s.layers >= 2 ? s.layers / 2 : s.layers;
  std::thread helper;
  if (split < s.layers)
    helper = std::thread([&] {
      for (int l = split; l < s.layers && !stopped(stop); ++l) block_stats(s, L, m, keys, l, snap.layers[l]);
    });
  for (int l = 0; l < split && !stopped(stop); ++l) block_stats(s, L, m, keys, l, snap.layers[l]);
  if (helper.joinable()) helper.join();
  if (stopped(stop)) return snap;  // incomplete: its caller throws it away
  if (L.embeddings) {
    snap.embeddings.resize(1);
    LayerStats& e = snap.embeddings[0];
    e.layer = 0;
    hidden_stats(m, L, L.embedding_block(), keys, e);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    e.recency = e.recency_se = e.recency_ties = nan;
  }
  return snap;
}

std::size_t pooled_map_bytes() { return map_pool().bytes(); }

void release_pooled_maps() { map_pool().clear(); }

std::shared_ptr<const Snapshot> share_snapshot(Snapshot&& snap) {
  return std::shared_ptr<const Snapshot>(new Snapshot(std::move(snap)), [](const Snapshot* p) {
    std::unique_ptr<Snapshot> owned(const_cast<Snapshot*>(p));
    for (LayerStats& l : owned->layers) give_maps(l);
    for (LayerStats& l : owned->embeddings) give_maps(l);
  });
}

const LayerStats* layer_stats(const Snapshot& snap, int layer) {
  if (layer == 0) return snap.embeddings.empty() ? nullptr : &snap.embeddings.front();
  if (layer < 1 || layer > int(snap.layers.size())) return nullptr;
  return &snap.layers[std::size_t(layer - 1)];
}

LayerStats head_view(const LayerStats& l, int head, int n) {
  LayerStats v = l;
  if (head < 0 || head >= int(l.heads.size())) return v;
  const HeadStats& h = l.heads[std::size_t(head)];
  v.score_mean = h.score_mean;
  v.score_se = h.score_se;
  v.weight_mean = h.weight_mean;
  v.weight_se = h.weight_se;
  v.recency = h.recency;
  v.recency_se = h.recency_se;
  v.recency_ties = h.recency_ties;
  v.leakage = h.leakage;
  v.score_diag_normalized = diagonal_normalized(v.score_mean, n);
  const auto q = quantiles(v.score_diag_normalized, 0.01, 0.99);
  v.score_diag_q01 = q[0];
  v.score_diag_q99 = q[1];
  return v;
}

}  // namespace maskscope
