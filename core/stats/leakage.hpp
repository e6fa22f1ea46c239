// Absolute-position leakage (Ruscio et al., `004` Eq. 4; docs/model.md section 8): how much of a map's
// variance the query position explains beyond the saturated relative baseline (one free mean per
// offset o = i - j). Computed from per-cell means and sums of squared deviations, so it costs
// nothing per sample; its standard error comes from the per-sample within-offset slope.
#pragma once

#include <cstdint>
#include <vector>

#include "core/stats/accumulator.hpp"
#include "core/stats/estimate.hpp"
#include "core/model/key_ranges.hpp"

namespace maskscope {

struct LeakageBin {
  int from = 0, to = 0;  // query positions [from, to), 0-based
  double delta_r2 = 0;   // NaN when the bin has no within-offset variation of i
};

struct Leakage {
  Estimate delta_r2;               // pooled over samples (the paper's definition)
  double delta_r2_mean_map = 0;    // of the sample-mean map: systematic structure only
  double r2_base = 0;              // R^2 of the relative baseline, pooled
  double slope = 0, slope_se = 0;  // b: the full model's common within-offset slope on i, and its SE
  std::vector<LeakageBin> bins;    // Ruscio's query-position bins, cut at n
};

// Ruscio et al.'s bin edges (Table 7), cut at n; for n > 256 one more bin [256, n).
std::vector<LeakageBin> leakage_bins(int n);

// The cells c = (i, j) with lo[i] <= j <= hi[i] of an n x n map: `mean` (n x n), `m2` (n x n sums of
// squared deviations over `count` samples; empty for a map without samples, as a single stored map),
// and the standard error of the per-sample slope (0 if unknown). NaN when undefined (SST 0, no cells).
//   SST = sum_c [M2_c + N (m_c - mean)^2],  SSE_base = sum_c [M2_c + N (m_c - m_o)^2],
//   b = sum_c (i_c - i_o)(m_c - m_o) / Q,   Q = sum_c (i_c - i_o)^2,   dR^2 = N b^2 Q / SST,
//   SE(dR^2) = N Q / SST sqrt(4 b^2 se_b^2 + 2 se_b^4)  (b ~ normal; b^2 is biased by se_b^2 near 0).
Leakage leakage_of(int n, const KeyRanges& keys, const std::vector<double>& mean, const std::vector<double>& m2,
                   std::int64_t count, double slope_se);
// From a run's moments: the packed map (AccumLayout) at `map` and the per-sample slope at `slope`.
Leakage leakage_of(const AccumLayout& L, const KeyRanges& keys, const RunMoments& m, std::size_t map,
                   std::size_t slope);

// a / b, and its standard error by the delta method for independent a and b,
// r sqrt((sa / a)^2 + (sb / b)^2); NaN where undefined (b <= 0, a <= 0). Runs on the same draws are
// positively correlated, so leaving the covariance out overstates the SE (conservative).
double leakage_ratio(double a, double b);
double leakage_ratio_se(double a, double sa, double b, double sb);

// A ratio of two estimates with its SE (leakage_ratio, leakage_ratio_se), or null (NaN) with the reason
// (docs/model.md section 4.1): the rule for every ratio of estimates.
struct Ratio {
  double value = 0, se = 0;
  EstimateNote note = EstimateNote::none;
};
// a / b, null with EstimateNote::denominator_not_significant unless b stands out of its noise (more than
// 3 SE; an SE of 0 at float resolution: more than 0): a ratio to noise means nothing.
Ratio significant_ratio(const Estimate& a, const Estimate& b);

// r_l = dR^2_bidirectional / dR^2_causal, the residual-stream share of the leakage (Ruscio et al. `004`
// Table 8; 1 - r_l is the causal-mask share of Eq. 5), by significant_ratio.
using ResidualShare = Ratio;
Ratio residual_stream_share(const Leakage& bidirectional, const Leakage& causal);

// The saturated relative baseline's fit of a map: each cell's offset mean m_o (NaN where masked).
// The map minus this is the absolute part, which dR^2 measures.
std::vector<double> offset_means(int n, const KeyRanges& keys, const std::vector<double>& map);

}  // namespace maskscope
