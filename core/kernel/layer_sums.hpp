// One layer's per-sample metrics and their accumulation, for attention with H heads: shared by the
// random-weight network (random_weights.cpp) and the analysis of real models' tensors
// (tensor_analysis.cpp), so both go through the same code.
#pragma once

#include <cstddef>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/stats/accumulator.hpp"
#include "core/kernel/kernel_steps.hpp"
#include "core/model/settings.hpp"

namespace maskscope::kernel {

struct LayerMetrics {
  Proportion rp, adjacency, norm_adjacency;
  double score_slope, weight_slope;  // of the head-mean maps (the mean of the heads' slopes)
  double sink_weight;                // the weight on key 0 of the head-mean map (sink_weight)
  double head_rp[Limits::heads_max], head_rp_ties[Limits::heads_max], head_slope[Limits::heads_max];
};

// Where a layer's keys, recency triples and slope coefficients come from (KeyRanges) and its sums go.
struct LayerArgs {
  int n = 0, heads = 1;
  const int* lo = nullptr;
  const int* hi = nullptr;
  std::int64_t triples = 0;
  const float* slope_coef = nullptr;
  const AccumLayout* layout = nullptr;
};

// Before the heads of a layer.
inline void begin_heads(LayerMetrics& lm) {
  lm.rp = {0.0, 0.0};
  lm.score_slope = lm.weight_slope = lm.sink_weight = 0.0;
}

// Head h's logits S and weights A (n x n, 8 floats of slack): its recency and slopes, and its share
// of the layer's (head-mean) metrics.
[[gnu::always_inline]] inline void head_metrics(const LayerArgs& k, int h, const float* S, const float* A,
                                                LayerMetrics& lm) {
  const int n = k.n, H = k.heads;
  const Proportion r = recency_of(n, k.lo, k.triples, S);
  lm.head_rp[h] = r.value;
  lm.head_slope[h] = offset_slope(n, k.lo, k.hi, k.slope_coef, S);
  lm.score_slope += lm.head_slope[h] / H;
  lm.weight_slope += offset_slope(n, k.lo, k.hi, k.slope_coef, A) / H;
  lm.sink_weight += sink_weight(n, k.lo, A) / H;
  lm.head_rp_ties[h] = r.ties;
  lm.rp.value += r.value / H;
  lm.rp.ties += r.ties / H;
}

// Cosines, norms, adjacency and norm adjacency of hidden states x (n x d). C: n x n (+8), inv_norm
// and norms: n (+8).
[[gnu::always_inline]] inline void hidden_metrics(int n, int d, const float* x, float* inv_norm, float* C, float* norms,
                                                  LayerMetrics& lm) {
  output_cosines(n, d, x, inv_norm, C);
  lm.adjacency = adjacency_of(n, [&](int r) { return C + std::size_t(r) * n; });
  lm.norm_adjacency = norm_adjacency_of(n, inv_norm, norms);
}

// The fixed bin of x in [lo, lo + width) cut into `bins` (values outside go to the end bins).
inline int bin_of(double x, double lo, double width, int bins) {
  const double b = std::floor((x - lo) / width * bins);
  return b < 0 ? 0 : b >= bins ? bins - 1 : int(b);
}

// Zuo et al.'s Fig. 2 and Fig. 13 for one sample (AccumLayout::hist_base): over triples a < b < c, the
// cosine differences sim(a, b) - sim(a, c) and sim(c, b) - sim(c, a) binned over [-1, 1], each anchor row
// (a, respectively c) weighted equally as the adjacency score averages its rows, so the second's share
// above 0 (ties 1/2) is this sample's adjacency score; and a one in the bin of its adjacency and RP over
// [0, 1]. C: the cosines, lower triangle (row i, keys j <= i). A difference at float resolution (a tie of
// its two cosines at their row's tolerance, core/stats/float_resolution.hpp, as the adjacency score counts it) adds
// half its weight to each of the two bins beside 0 (B is even) and 1/2 to the mass above 0.
inline void add_histograms(const LayerArgs& k, int l, bool maps, const float* C, const LayerMetrics& lm, double* sum,
                           double* sq) {
  const AccumLayout& L = *k.layout;
  const int n = k.n, B = L.hist_bins;
  thread_local std::vector<double> bins;
  thread_local std::vector<float> ahead;
  bins.assign(4 * std::size_t(B), 0.0);
  double above[2] = {0.0, 0.0};
  auto sim = [&](int i, int j) { return i >= j ? C[std::size_t(i) * n + j] : C[std::size_t(j) * n + i]; };
  // `nearer` against `farther` (the cosine to the nearer and the farther key) at tolerance t.
  auto add = [&](int which, float nearer, float farther, float t, double w) {
    const int order = order_at_resolution(farther, nearer, t);
    double* h = bins.data() + std::size_t(which) * B;
    if (order == 0) {
      h[B / 2 - 1] += 0.5 * w;
      h[B / 2] += 0.5 * w;
      above[which] += 0.5 * w;
      return;
    }
    h[bin_of(nearer - farther, -1.0, 2.0, B)] += w;
    above[which] += order > 0 ? w : 0.0;
  };
  if (n >= 3) {
    for (int a = 0; a + 2 < n; ++a) {  // anchor a looks ahead: b, c after it
      const double m = n - 1 - a, w = 1.0 / ((n - 2) * 0.5 * m * (m - 1));
      ahead.resize(std::size_t(n));
      for (int b = a + 1; b < n; ++b) ahead[std::size_t(b)] = sim(a, b);
      const float t = tie_tolerance(ahead.data(), a + 1, n);
      for (int b = a + 1; b + 1 < n; ++b)
        for (int c = b + 1; c < n; ++c) add(0, ahead[std::size_t(b)], ahead[std::size_t(c)], t, w);
    }
    for (int c = 2; c < n; ++c) {  // anchor c looks back: row c of the adjacency score
      const double w = 1.0 / ((n - 2) * 0.5 * double(c) * (c - 1));
      const float* row = C + std::size_t(c) * n;
      const float t = tie_tolerance(row, 0, c);
      for (int b = 1; b < c; ++b)
        for (int a = 0; a < b; ++a) add(1, row[b], row[a], t, w);
    }
    bins[2 * std::size_t(B) + bin_of(lm.adjacency.value, 0.0, 1.0, B)] = 1.0;
  }
  if (maps && k.triples > 0) bins[3 * std::size_t(B) + bin_of(lm.rp.value, 0.0, 1.0, B)] = 1.0;
  const std::size_t at = L.hist_base(l);
  for (std::size_t e = 0; e < bins.size(); ++e) add_value(sum, sq, at + e, bins[e]);
  add_value(sum, sq, L.forward_difference_above(l), above[0]);
  add_value(sum, sq, L.backward_difference_above(l), above[1]);
}

// Adds block l's quantities to the sums: with `maps`, the heads' S and A (head-major, n x n each),
// their head means (computed into s_mean, a_mean) and the attention metrics; always the hidden
// states' cosines C, norms and adjacency.
[[gnu::always_inline]] inline void accumulate_layer(const LayerArgs& k, int l, bool maps, const float* S_heads,
                                                    const float* A_heads, float* s_mean, float* a_mean, const float* C,
                                                    const float* inv_norm, const LayerMetrics& lm, BlockSums& sums) {
  const int n = k.n, H = k.heads;
  const AccumLayout& L = *k.layout;
  double* sum = sums.sum.data();
  double* sq = sums.sumsq.data();
  if (maps) {
    const std::size_t nn = std::size_t(n) * n;
    if (H == 1) {
      add_masked_map(sum, sq, L.score(l), n, k.lo, k.hi, S_heads);
      add_masked_map(sum, sq, L.weight(l), n, k.lo, k.hi, A_heads);
    } else {
      std::fill(s_mean, s_mean + nn, 0.0f);
      std::fill(a_mean, a_mean + nn, 0.0f);
      const float inv_h = 1.0f / static_cast<float>(H);
      for (int h = 0; h < H; ++h) {
        const float* S = S_heads + std::size_t(h) * nn;
        const float* A = A_heads + std::size_t(h) * nn;
        add_masked_map(sum, sq, L.head_score(l, h), n, k.lo, k.hi, S);
        add_masked_map(sum, sq, L.head_weight(l, h), n, k.lo, k.hi, A);
        for (int i = 0; i < n; ++i)
          for (int j = k.lo[i]; j <= k.hi[i]; ++j) {
            s_mean[std::size_t(i) * n + j] += inv_h * S[std::size_t(i) * n + j];
            a_mean[std::size_t(i) * n + j] += inv_h * A[std::size_t(i) * n + j];
          }
        add_value(sum, sq, L.head_score_slope(l, h), lm.head_slope[h]);
        if (k.triples > 0) {
          add_value(sum, sq, L.head_rp(l, h), lm.head_rp[h]);
          add_value(sum, sq, L.head_rp_ties(l, h), lm.head_rp_ties[h]);
        }
      }
      add_masked_map(sum, sq, L.score(l), n, k.lo, k.hi, s_mean);
      add_masked_map(sum, sq, L.weight(l), n, k.lo, k.hi, a_mean);
    }
    add_value(sum, sq, L.score_slope(l), lm.score_slope);
    add_value(sum, sq, L.weight_slope(l), lm.weight_slope);
    add_value(sum, sq, L.sink_weight(l), lm.sink_weight);
    if (k.triples > 0) {
      add_value(sum, sq, L.rp(l), lm.rp.value);
      add_value(sum, sq, L.rp_ties(l), lm.rp.ties);
    }
  }
  add_lower(sum, sq, L.cosine(l), n, C);
  add_norms(sum, sq, L.norm(l), n, inv_norm);
  if (n >= 3) {
    add_value(sum, sq, L.adjacency(l), lm.adjacency.value);
    add_value(sum, sq, L.adjacency_ties(l), lm.adjacency.ties);
    add_value(sum, sq, L.norm_adjacency(l), lm.norm_adjacency.value);
    add_value(sum, sq, L.norm_adjacency_ties(l), lm.norm_adjacency.ties);
  }
  if (L.hist_bins > 0) add_histograms(k, l, maps, C, lm, sum, sq);
}

}  // namespace maskscope::kernel
