// What the parameter-free family's two kernels share: their arguments, one sample's draws
// (docs/model.md section 1), its metrics record and the per-sample scratch buffers. Internal to core/.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/stats/accumulator.hpp"
#include "core/kernel/kernel_steps.hpp"
#include "core/random/random_stream.hpp"
#include "core/model/rope.hpp"
#include "core/model/input_basis.hpp"
#include "core/model/key_ranges.hpp"
#include "core/model/stages.hpp"
#include "core/kernel/stage_grams.hpp"

namespace maskscope {

inline constexpr float kNormEps = 1e-12f;  // docs/model.md section 2 (and the LN-recency notebook)

struct KernelArgs {
  int n;
  int d;        // coordinates per row: the model's d, or the reduced basis (InputBasis) padded to 8
  int d_model;  // the model's d (LayerNorm's and RMSNorm's divisor)
  int layers;
  std::uint64_t seed;
  InputBasis basis;
  float inv_sqrt_d;
  float anisotropy;  // c = sqrt(alpha / (1 - alpha)), LN-recency Eq. 6
  bool alpha_one;    // alpha = 1: every token is v / sqrt(d)
  bool unit_input;
  bool first_token;  // x_0 = v / sqrt(d), the common direction (Settings::first_token fixed)
  Norm norm;
  float scale;
  float gamma;
  bool rope;
  bool bidirectional;
  const int* lo;
  const int* hi;
  const RopeTables* rope_tables;
  const float* slope_coef;
  std::int64_t triples;
  const AccumLayout* layout;
  const ChiLaw* chi_laws;  // the reduced basis's diagonal: chi_{k - r} for r < m
};

constexpr std::uint64_t round_up_64(std::uint64_t m) { return (m + 63) / 64 * 64; }

// S and C carry 8 floats of slack for the vector pair counts (sample_metrics.hpp).
struct SampleWork {
  std::vector<float> x, y, q, xn, s, a, c, inv_norm, norms, v, draws;
  std::vector<PairCounts> recency_rows, adjacency_rows;  // a split sample's per-row counts (simulator.cpp)
  // Settings::stage_grams only (else empty): A Y, a row of zeros, and the stages' G, C and 1 / norms.
  std::vector<float> mixed, zeros, stage_g, stage_c, stage_inv;
  SampleWork(int n, const InputBasis& b, bool stages = false)
      : x(std::size_t(n) * b.dim),
        y(std::size_t(n) * b.dim),
        q(std::size_t(n) * b.dim),
        xn(std::size_t(n) * b.dim),
        s(std::size_t(n) * n + 8),
        a(std::size_t(n) * n + 8),
        c(std::size_t(n) * n + 8),
        inv_norm(n),
        norms(n + 8),
        v(b.dim),
        draws(b.normals) {
    if (!stages) return;
    mixed.resize(std::size_t(n) * b.dim);
    zeros.resize(std::size_t(b.dim));
    stage_g.resize(std::size_t(n) * n + 8);
    stage_c.resize(std::size_t(n) * n + 8);
    stage_inv.resize(std::size_t(n));
  }
};

// One sample's stage Gram matrices of layer l (docs/model.md section 12) into the sums: X, Norm(X),
// Q = K = Rope(Norm(X)) (q is y without RoPE), A Y (the mix alone, computed here) and X' = A Y + gamma X.
// Both parameter-free kernels call it (the lane kernel lane by lane), so they round alike.
template <bool kFirst = false, bool kSquares = true>
[[gnu::always_inline]] inline void add_stage_grams(const KernelArgs& k, SampleWork& w, int l, const float* x,
                                                   const float* y, const float* q, const float* A, const float* xn,
                                                   BlockSums& sums) {
  const AccumLayout& L = *k.layout;
  const int n = k.n, d = k.d;
  double* sum = sums.sum.data();
  double* sq = sums.sumsq.data();
  const kernel::StageScratch ss{w.stage_g.data(), w.stage_c.data(), w.stage_inv.data()};
  for (int i = 0; i < n; ++i)  // A Y: the residual's add with gamma 0 (0 x adds nothing)
    simd::weighted_rows(A + std::size_t(i) * n, y, d, k.lo[i], k.hi[i], 0.0f, w.zeros.data(),
                        w.mixed.data() + std::size_t(i) * d);
  kernel::add_stage<kFirst, kSquares>(L, l, int(Stage::input), x, d, 1, ss, sum, sq);
  kernel::add_stage<kFirst, kSquares>(L, l, int(Stage::normalized), y, d, 1, ss, sum, sq);
  kernel::add_stage<kFirst, kSquares>(L, l, int(Stage::query), q, d, 1, ss, sum, sq);
  kernel::add_stage<kFirst, kSquares>(L, l, int(Stage::mix), w.mixed.data(), d, 1, ss, sum, sq);
  kernel::add_stage<kFirst, kSquares>(L, l, int(Stage::residual), xn, d, 1, ss, sum, sq);
}

struct SampleMetrics {
  kernel::Proportion rp, adjacency, norm_adjacency;
  double score_slope, weight_slope;  // within-offset slopes on the query position (docs/model.md section 8)
  double sink_weight = 0;            // the weight on key 0 (kernel::sink_weight)
};

// The reduced basis's diagonal (InputBasis), chi_{k - r} for r < m, drawn in row order (a rejection
// takes words from the stream) in place: chi_z[r] holds the draw's first normal, then the draw.
// `chi(rng, law, z, u)` is SampleStream::chi or the lane kernel's copy of its first attempt.
template <class Chi>
[[gnu::always_inline]] inline void draw_chis(const KernelArgs& k, SampleStream& rng, float* chi_z, Chi&& chi) {
  std::uint64_t u_word = 0;
  for (int r = 0; r < k.basis.m; ++r) {
    if (r % 2 == 0) u_word = rng.next();
    const std::uint32_t u32 = static_cast<std::uint32_t>(r % 2 == 0 ? u_word : u_word >> 32);
    const double u = (double(u32) + 0.5) * 0x1.0p-32;
    chi_z[r] = static_cast<float>(chi(rng, k.chi_laws[r], double(chi_z[r]), u));
  }
}

// LN-recency Eq. 6 (docs/model.md section 1): x_i = (eps_i + c v) / sqrt(d), c = sqrt(alpha / (1 - alpha));
// alpha = 1 is the limit in which every token is v / sqrt(d). Optionally unit norm (Behind RoPE Sec. 3.2).
// Explicit basis: eps_i and v drawn in all d coordinates (normals 0 .. n d - 1, then v from the next
// multiple of 64). Reduced basis (InputBasis): the rows v, eps_0 .. eps_{n-1} are Gaussian in R^d, so
// up to a rotation (which no quantity of the model sees) they are the rows of the lower-trapezoidal
// factor L of Z = L Q: L_rc ~ N(0, 1) for c < r, L_rr ~ chi_{k - r}, in m = min(rows, k) coordinates,
// after the `special` coordinates that keep their own N(0, 1) (LayerNorm's all-ones direction).
// v comes first so that token i = (eps_i + c v) / sqrt(d) keeps the zeros of its factor row i + 1:
// the rows' widths (row_widths) then grow with i, which the lane kernel's sums use.
[[gnu::always_inline]] inline void draw_inputs(const KernelArgs& k, SampleStream& rng, float* x, float* v,
                                               std::vector<float>& draws) {
  const int n = k.n, d = k.d;
  const InputBasis& b = k.basis;
  if (b.reduced) {
    const int rows = b.rows, m = b.m, sp = b.special;
    float* z = draws.data();  // b.normals: the factor's entries, then the first attempt of each chi
    rng.normals(z, b.normals);
    float* chi_z = z + (b.normals - std::size_t(m));
    draw_chis(k, rng, chi_z,
              [](SampleStream& g, const ChiLaw& law, double first, double u) { return g.chi(law, first, u); });
    std::fill(x, x + std::size_t(n) * d, 0.0f);
    std::fill(v, v + d, 0.0f);
    std::size_t at = 0;
    const int first_token = rows - b.token_rows;  // 1 when the input has a common direction v: row 0
    for (int r = 0; r < rows; ++r) {
      float* row = r < first_token ? v : x + std::size_t(r - first_token) * d;
      for (int c = 0; c < sp + std::min(r, m); ++c) row[c] = z[at++];
      if (r < m) row[sp + r] = chi_z[r];
    }
    if (k.alpha_one) {
      for (int i = 0; i < n; ++i)
        for (int e = 0; e < d; ++e) x[std::size_t(i) * d + e] = v[e] * k.inv_sqrt_d;
    } else {
      for (int i = 0; i < n; ++i) {
        float* xi = x + std::size_t(i) * d;
        for (int e = 0; e < d; ++e) xi[e] = (xi[e] + k.anisotropy * v[e]) * k.inv_sqrt_d;
      }
      // A fixed first token: x_0 = v / sqrt(d), the direction every token leans toward (docs/model.md
      // section 10). eps_0 is drawn all the same, so tokens 1..n-1 are those of first_token none.
      if (k.first_token)
        for (int e = 0; e < d; ++e) x[e] = v[e] * k.inv_sqrt_d;
    }
  } else if (k.alpha_one) {
    rng.seek_normal(round_up_64(std::uint64_t(n) * d));
    rng.normals(v, d);
    for (int e = 0; e < d; ++e) v[e] *= k.inv_sqrt_d;
    for (int i = 0; i < n; ++i) std::copy(v, v + d, x + std::size_t(i) * d);
  } else {
    rng.normals(x, std::size_t(n) * d);
    if (k.anisotropy != 0.0f || k.first_token) {
      rng.normals(v, d);
      if (k.first_token)  // x_0 = v / sqrt(d) (docs/model.md section 12), in place of eps_0's row
        for (int e = 0; e < d; ++e) x[e] = v[e] * k.inv_sqrt_d;
      for (int e = 0; e < d; ++e) v[e] *= k.anisotropy;
    } else {
      std::fill(v, v + d, 0.0f);
    }
    for (int i = k.first_token ? 1 : 0; i < n; ++i) {
      float* xi = x + std::size_t(i) * d;
#pragma omp simd
      for (int e = 0; e < d; ++e) xi[e] = (xi[e] + v[e]) * k.inv_sqrt_d;
    }
  }
  if (k.unit_input)
    for (int i = 0; i < n; ++i)
      kernel::normalize_row(Norm::l2, x + std::size_t(i) * d, x + std::size_t(i) * d, d, kNormEps, float(d));
}

// Row i's width: its coordinates from width[i] on are +0 in the layer inputs, normalized rows and
// outputs of every layer, so sums over coordinates may stop there (adding +0 changes no sum). In the
// reduced basis (draw_inputs) factor row r holds special + min(r + 1, m) coordinates; token i is
// its own row plus a multiple of v, normalizing keeps the zeros, and with every key at or before
// its query (hi[i] <= i) a mixed row is no wider than its own. Widths grow with i. d otherwise.
inline std::vector<int> row_widths(const KernelArgs& k) {
  std::vector<int> width(std::size_t(k.n), k.d);
  const InputBasis& b = k.basis;
  if (!b.reduced) return width;
  for (int i = 0; i < k.n; ++i)
    if (k.hi[i] > i) return width;
  auto factor_row = [&](int r) { return b.special + std::min(r + 1, b.m); };
  const int first_token = b.rows - b.token_rows;  // v, when drawn, is factor row 0
  const int v_width = first_token == 1 ? factor_row(0) : 0;
  for (int i = 0; i < k.n; ++i)
    width[std::size_t(i)] = std::min(k.d, std::max(k.alpha_one ? 0 : factor_row(i + first_token), v_width));
  return width;
}

inline void record_layer(const KernelArgs& k, const float* y, const float* xn, const float* S, const float* A,
                         const SampleMetrics& m, LayerTrace& lt) {
  const int n = k.n, d = k.d;
  lt.normalized.assign(y, y + std::size_t(n) * d);
  lt.output.assign(xn, xn + std::size_t(n) * d);
  lt.scores.assign(std::size_t(n) * n, std::numeric_limits<float>::quiet_NaN());
  lt.weights.assign(std::size_t(n) * n, 0.0f);
  for (int i = 0; i < n; ++i)
    for (int j = k.lo[i]; j <= k.hi[i]; ++j) {
      lt.scores[i * n + j] = S[i * n + j];
      lt.weights[i * n + j] = A[i * n + j];
    }
  kernel::record_metrics(m, lt);
}

}  // namespace maskscope
