// Turning merged moments into the published per-layer statistics.
#include "snapshot.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "metrics.hpp"

namespace maskscope {

Snapshot make_snapshot(const Settings& s, const RunMoments& m, const KeyRanges& keys) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const int n = s.n;
  const AccumLayout L(n, s.layers);
  Snapshot snap;
  snap.settings = s;
  snap.samples_done = m.count;
  snap.layers.resize(s.layers);
  const std::size_t nn = std::size_t(n) * n;
  const std::vector<int>& key_lo = keys.lo;
  const std::vector<int>& key_hi = keys.hi;
  for (int l = 0; l < s.layers; ++l) {
    LayerStats& out = snap.layers[l];
    out.layer = l + 1;
    out.score_mean.assign(nn, nan);
    out.score_se.assign(nn, nan);
    out.weight_mean.assign(nn, nan);
    out.weight_se.assign(nn, nan);
    out.cosine_mean.assign(nn, nan);
    out.cosine_se.assign(nn, nan);
    out.norm_mean.assign(n, nan);
    out.norm_se.assign(n, nan);
    if (m.count > 0) {
      for (int i = 0; i < n; ++i) {
        for (int j = key_lo[i]; j <= key_hi[i]; ++j) {
          const std::size_t e = std::size_t(i) * n + j;
          out.score_mean[e] = m.mean[L.score(l) + e];
          out.score_se[e] = m.standard_error(L.score(l) + e);
          out.weight_mean[e] = m.mean[L.weight(l) + e];
          out.weight_se[e] = m.standard_error(L.weight(l) + e);
        }
        for (int j = 0; j <= i; ++j) {
          const std::size_t e = std::size_t(i) * n + j, t = std::size_t(j) * n + i;
          out.cosine_mean[e] = out.cosine_mean[t] = m.mean[L.cosine(l) + e];
          out.cosine_se[e] = out.cosine_se[t] = m.standard_error(L.cosine(l) + e);
        }
        out.norm_mean[i] = m.mean[L.norm(l) + i];
        out.norm_se[i] = m.standard_error(L.norm(l) + i);
      }
    }
    const bool has_rp = keys.recency_triples > 0 && m.count > 0;
    out.recency = has_rp ? m.mean[L.recency(l)] : nan;
    out.recency_se = has_rp ? m.standard_error(L.recency(l)) : nan;
    out.recency_ties = has_rp ? m.mean[L.recency_ties(l)] : nan;
    const bool has_adj = keys.adjacency_rows > 0 && m.count > 0;
    out.adjacency = has_adj ? m.mean[L.adjacency(l)] : nan;
    out.adjacency_se = has_adj ? m.standard_error(L.adjacency(l)) : nan;
    out.adjacency_ties = has_adj ? m.mean[L.adjacency_ties(l)] : nan;
    out.score_diag_normalized = diagonal_normalized(out.score_mean, n);
    out.score_diag_q01 = quantile(out.score_diag_normalized, 0.01);
    out.score_diag_q99 = quantile(out.score_diag_normalized, 0.99);
  }
  return snap;
}

}  // namespace maskscope
