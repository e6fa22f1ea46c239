// Turning merged moments into the published per-layer statistics.
#include "snapshot.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "metrics.hpp"

namespace maskscope {

namespace {

// Mean and standard error of an n x n map's unmasked entries (NaN elsewhere).
void masked_map(const RunMoments& m, std::size_t at, int n, const KeyRanges& keys, std::vector<double>& mean,
                std::vector<double>& se) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  mean.assign(std::size_t(n) * n, nan);
  se.assign(std::size_t(n) * n, nan);
  if (m.count == 0) return;
  for (int i = 0; i < n; ++i)
    for (int j = keys.lo[i]; j <= keys.hi[i]; ++j) {
      const std::size_t e = std::size_t(i) * n + j;
      mean[e] = m.mean[at + e];
      se[e] = m.standard_error(at + e);
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
  out.cosine_mean.assign(nn, nan);
  out.cosine_se.assign(nn, nan);
  out.norm_mean.assign(n, nan);
  out.norm_se.assign(n, nan);
  if (m.count > 0) {
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j <= i; ++j) {
        const std::size_t e = std::size_t(i) * n + j;
        out.cosine_mean[e] = m.mean[L.cosine(l) + e];
        out.cosine_se[e] = m.standard_error(L.cosine(l) + e);
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

}  // namespace

Snapshot make_snapshot(const Settings& s, const RunMoments& m, const KeyRanges& keys) {
  const int n = s.n;
  const AccumLayout L = accum_layout(s);
  Snapshot snap;
  snap.settings = s;
  snap.samples_done = m.count;
  snap.layers.resize(s.layers);
  const bool has_rp = keys.recency_triples > 0;
  for (int l = 0; l < s.layers; ++l) {
    LayerStats& out = snap.layers[l];
    out.layer = l + 1;
    masked_map(m, L.score(l), n, keys, out.score_mean, out.score_se);
    masked_map(m, L.weight(l), n, keys, out.weight_mean, out.weight_se);
    hidden_stats(m, L, l, keys, out);
    const Metric rp = metric(m, has_rp, L.recency(l), L.recency_ties(l));
    out.recency = rp.mean;
    out.recency_se = rp.se;
    out.recency_ties = rp.ties;
    out.leakage = leakage_of(n, keys, m, L.score(l), L.score_slope(l));
    out.weight_leakage = leakage_of(n, keys, m, L.weight(l), L.weight_slope(l));
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
          masked_map(m, L.head_score(l, h), n, keys, hs.score_mean, hs.score_se);
          masked_map(m, L.head_weight(l, h), n, keys, hs.weight_mean, hs.weight_se);
        }
        const Metric hrp = metric(m, has_rp, L.head_recency(l, h), L.head_recency_ties(l, h));
        hs.recency = hrp.mean;
        hs.recency_se = hrp.se;
        hs.recency_ties = hrp.ties;
        hs.leakage = s.heads == 1 ? out.leakage : leakage_of(n, keys, m, L.head_score(l, h), L.head_score_slope(l, h));
      }
    }
    out.score_diag_normalized = diagonal_normalized(out.score_mean, n);
    const auto q = quantiles(out.score_diag_normalized, 0.01, 0.99);
    out.score_diag_q01 = q[0];
    out.score_diag_q99 = q[1];
  }
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
