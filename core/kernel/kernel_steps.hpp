// The steps both model families share (docs/model.md sections 2-4), always inlined into each family's
// kernel so that its x86-64-v3 clone gets wide vectors in every step. Internal to core/.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "core/model/rope.hpp"
#include "core/kernel/sample_metrics.hpp"
#include "core/model/settings.hpp"
#include "core/kernel/simd.hpp"
#include "core/model/trace.hpp"

// Each family's sample loop is compiled for x86-64-v3 and baseline x86-64 and chosen at run time
// (ifunc); sanitizer builds keep one baseline kernel (see CMakeLists.txt).
#if MASKSCOPE_TARGET_CLONES && defined(__x86_64__)
#define MASKSCOPE_KERNEL_CLONES [[gnu::target_clones("arch=x86-64-v3", "default")]]
#else
#define MASKSCOPE_KERNEL_CLONES
#endif

namespace maskscope::kernel {

// out[j - j0] = scale * <a, rows[j]> for j in [j0, j1], four rows at a time.
[[gnu::always_inline]] inline void dot_row(const float* a, const float* rows, int d, int j0, int j1, float scale,
                                           float* out) {
  int j = j0;
  float tmp[4];
  for (; j + 3 <= j1; j += 4) {
    simd::dot4(a, rows + std::size_t(j) * d, rows + std::size_t(j + 1) * d, rows + std::size_t(j + 2) * d,
               rows + std::size_t(j + 3) * d, d, tmp);
    for (int t = 0; t < 4; ++t) out[j - j0 + t] = scale * tmp[t];
  }
  for (; j <= j1; ++j) out[j - j0] = scale * simd::dot(a, rows + std::size_t(j) * d, d);
}

// Sum of x[0..d) in 8 lanes.
[[gnu::always_inline]] inline float sum_of(const float* x, int d) {
  simd::f8 acc = {};
  int k = 0;
  for (; k + 8 <= d; k += 8) acc += simd::load(x + k);
  float s = simd::hsum(acc);
  for (; k < d; ++k) s += x[k];
  return s;
}

// y = (x - shift) * factor.
[[gnu::always_inline]] inline void shift_scale(const float* x, float shift, float factor, float* y, int d) {
  int k = 0;
  for (; k + 8 <= d; k += 8) {
    const simd::f8 v = (simd::load(x + k) - shift) * factor;
    std::memcpy(y + k, &v, sizeof v);
  }
  for (; k < d; ++k) y[k] = (x[k] - shift) * factor;
}

// Sum of (x - shift)^2.
[[gnu::always_inline]] inline float centred_sumsq(const float* x, float shift, int d) {
  simd::f8 acc = {};
  int k = 0;
  for (; k + 8 <= d; k += 8) {
    const simd::f8 v = simd::load(x + k) - shift;
    acc += v * v;
  }
  float s = simd::hsum(acc);
  for (; k < d; ++k) s += (x[k] - shift) * (x[k] - shift);
  return s;
}

// y = Norm(x) (docs/model.md section 2) with the given epsilon (1e-12 parameter-free, 1e-5 random weights).
// `fd` is RMSNorm's and LayerNorm's divisor: the model's d (x may hold fewer coordinates, input_basis.hpp).
[[gnu::always_inline]] inline void normalize_row(Norm norm, const float* x, float* y, int d, float eps, float fd) {
  switch (norm) {
    case Norm::none:
      if (x != y) std::memcpy(y, x, sizeof(float) * std::size_t(d));
      return;
    case Norm::l2: {
      const float ss = simd::dot(x, x, d);
      shift_scale(x, 0.0f, ss > 0.0f ? 1.0f / std::sqrt(ss) : 0.0f, y, d);
      return;
    }
    case Norm::layernorm: {  // the explicit basis only: x has all d coordinates
      const float mean = sum_of(x, d) / fd;
      const float var = centred_sumsq(x, mean, d) / fd;
      shift_scale(x, mean, 1.0f / std::sqrt(var + eps), y, d);
      return;
    }
    case Norm::rmsnorm: {
      const float ms = simd::dot(x, x, d) / fd;
      shift_scale(x, 0.0f, 1.0f / std::sqrt(ms + eps), y, d);
      return;
    }
  }
}

// Row i of RoPE (rope.hpp): the pairs (2p, 2p+1) of y rotated into q; scrambled tables rotate the
// two coordinates of a pair by different bands.
[[gnu::always_inline]] inline void rotate_row(const RopeTables& t, int i, const float* y, float* q) {
  const std::size_t at = std::size_t(i) * t.half;
  const float* ca = t.cos_a.data() + at;
  const float* sa = t.sin_a.data() + at;
  const float* cb = t.cos_b.data() + at;
  const float* sb = t.sin_b.data() + at;
  for (int p = 0; p < t.half; ++p) {
    const float a0 = y[2 * p], a1 = y[2 * p + 1];
    q[2 * p] = a0 * ca[p] - a1 * sa[p];
    q[2 * p + 1] = a0 * sb[p] + a1 * cb[p];
  }
}

// A = softmax_rows(S) over the keys lo[i]..hi[i] of each row (vector exp). S and A need 8 floats of
// slack: a row's last vector may write up to 7 entries past hi[i] (zeros, or the next row's entries
// before that row is computed); nothing reads A outside the key ranges.
[[gnu::always_inline]] inline void softmax(int n, const int* key_lo, const int* key_hi, const float* S, float* A) {
  const simd::i8 lane = {0, 1, 2, 3, 4, 5, 6, 7};
  for (int i = 0; i < n; ++i) {
    const int lo = key_lo[i], hi = key_hi[i];
    const float* Si = S + std::size_t(i) * n;
    float* Ai = A + std::size_t(i) * n;
    float m = Si[lo];
    for (int j = lo + 1; j <= hi; ++j) m = std::max(m, Si[j]);
    simd::f8 zv = {};
    for (int j = lo; j <= hi; j += 8) {
      const simd::i8 inside = (lane + j) <= hi;
      const simd::f8 x = inside ? simd::load(Si + j) - m : simd::f8{} - 100.0f;
      const simd::f8 e = inside ? simd::exp_nonpositive(x) : simd::f8{};
      std::memcpy(Ai + j, &e, sizeof e);
      zv += e;
    }
    const float inv_z = 1.0f / simd::hsum(zv);
    for (int j = lo; j <= hi; j += 8) {
      const simd::f8 a = simd::load(Ai + j) * inv_z;
      std::memcpy(Ai + j, &a, sizeof a);
    }
  }
}

// Norms (Chi et al.'s variance signal) and cosine similarities (Zuo et al.) of a layer's output
// (n x d), docs/model.md section 3: 1 / ||x_i|| and the lower triangle of C, cos(x, x) = 1.
[[gnu::always_inline]] inline void output_cosines(int n, int d, const float* xn, float* inv_norm, float* C) {
  for (int i = 0; i < n; ++i) {
    const float* oi = xn + std::size_t(i) * d;
    const float ss = simd::dot(oi, oi, d);
    inv_norm[i] = ss > 0.0f ? 1.0f / std::sqrt(ss) : 0.0f;
  }
  for (int i = 0; i < n; ++i) {
    float* Ci = C + std::size_t(i) * n;
    if (i > 0) dot_row(xn + std::size_t(i) * d, xn, d, 0, i - 1, inv_norm[i], Ci);
    for (int j = 0; j < i; ++j) Ci[j] *= inv_norm[j];
    Ci[i] = inv_norm[i] > 0.0f ? 1.0f : 0.0f;
  }
}

// A metric with ties counted 1/2 and its tie fraction; NaN where no comparison exists.
struct Proportion {
  double value = std::numeric_limits<double>::quiet_NaN();
  double ties = std::numeric_limits<double>::quiet_NaN();
};

// Recency probability of one sample (LN-recency Sec. 3, docs/model.md section 4): over triples
// i > k > j of unmasked keys, the fraction with S_ik > S_ij, ties 1/2.
// From each row's counts, `counts(i)` for i = 0 .. n-1, summed (integers: in any order).
template <class Counts>
[[gnu::always_inline]] inline Proportion recency_from(int n, std::int64_t triples, Counts counts) {
  Proportion p;
  if (triples <= 0) return p;
  PairCounts total;
  for (int i = 0; i < n; ++i) {
    const PairCounts c = counts(i);
    total.wins += c.wins;
    total.ties += c.ties;
  }
  p.value = 0.5 * static_cast<double>(total.half_units()) / static_cast<double>(triples);
  p.ties = static_cast<double>(total.ties) / static_cast<double>(triples);
  return p;
}

[[gnu::always_inline]] inline Proportion recency_of(int n, const int* key_lo, std::int64_t triples, const float* S) {
  return recency_from(
      n, triples, [&](int i) __attribute__((always_inline)) {
        return ordered_pairs(S + std::size_t(i) * n, key_lo[i], i);
      });
}

// Adjacency score of one sample (Zuo et al. Sec. 4.1, App. A; docs/model.md section 4): over rows
// k >= 2 and pairs i < j < k, the fraction with row_k[i] < row_k[j], ties 1/2, averaged over rows.
// `row(k)` gives row k (8 floats of slack past its end). For the cosine matrix row k is C_k (the
// diagonal left out); for norm adjacency (docs/model.md section 7) every row is the norm sequence.
// From each row's counts, `counts(r)` for r = 2 .. n-1, averaged in row order.
template <class Counts>
[[gnu::always_inline]] inline Proportion adjacency_from(int n, Counts counts) {
  Proportion p;
  if (n < 3) return p;
  double row_sum = 0.0, tie_sum = 0.0;
  for (int r = 2; r < n; ++r) {
    const PairCounts c = counts(r);
    const double pairs = 0.5 * static_cast<double>(r) * (r - 1);
    row_sum += 0.5 * static_cast<double>(c.half_units()) / pairs;
    tie_sum += static_cast<double>(c.ties) / pairs;
  }
  p.value = row_sum / (n - 2);
  p.ties = tie_sum / (n - 2);
  return p;
}

template <class Row>
[[gnu::always_inline]] inline Proportion adjacency_of(int n, Row row) {
  return adjacency_from(
      n, [&](int r) __attribute__((always_inline)) { return ordered_pairs(row(r), 0, r); });
}

// Norm adjacency (Zuo et al. Sec. 5.4, docs/model.md section 7): the adjacency score of the matrix whose
// every row is the sequence of output norms ||x_i|| (from 1 / ||x_i||, 0 for a zero vector), i.e.
// over rows k >= 2 and pairs i < j < k the fraction with ||x_i|| < ||x_j||. All rows are prefixes of
// one sequence, so row k's counts are row k-1's plus the pairs that end at k-1: O(n^2), not O(n^3).
// Ties at float resolution (core/stats/float_resolution.hpp) with one tolerance for every row: that of the whole
// sequence (its largest norm), so that the rows stay prefixes. `norms` needs n floats.
[[gnu::always_inline]] inline Proportion norm_adjacency_of(int n, const float* inv_norm, float* norms) {
  Proportion p;
  if (n < 3) return p;
  for (int i = 0; i < n; ++i) norms[i] = inv_norm[i] > 0.0f ? 1.0f / inv_norm[i] : 0.0f;
  const float t = tie_tolerance(norms, 0, n);
  std::int64_t wins = 0, ties = 0;  // over the pairs a < b <= last
  double row_sum = 0.0, tie_sum = 0.0;
  for (int last = 1; last + 1 < n; ++last) {
    const float below = norms[last] - t, above = norms[last] + t;
    std::int64_t w = 0, l = 0;
    for (int a = 0; a < last; ++a) {
      w += norms[a] < below;
      l += norms[a] > above;
    }
    wins += w;
    ties += last - w - l;
    const int r = last + 1;  // row r compares the pairs within [0, r)
    const double pairs = 0.5 * static_cast<double>(r) * (r - 1);
    row_sum += 0.5 * static_cast<double>(2 * wins + ties) / pairs;
    tie_sum += static_cast<double>(ties) / pairs;
  }
  p.value = row_sum / (n - 2);
  p.ties = tie_sum / (n - 2);
  return p;
}

// The weight on key 0, the attention sink (docs/model.md section 10): the mean of A_i0 over the query rows
// i >= 1 whose keys include 0 (row 0 is left out: under the causal mask it has no other key). 0 when no
// such row exists (n 1, or a window of 1).
[[gnu::always_inline]] inline double sink_weight(int n, const int* lo, const float* A) {
  double sum = 0.0;
  int rows = 0;
  for (int i = 1; i < n; ++i)
    if (lo[i] == 0) {
      sum += double(A[std::size_t(i) * n]);
      ++rows;
    }
  return rows > 0 ? sum / rows : 0.0;
}

// A sample's within-offset slope of map M on the query position (docs/model.md section 8; KeyRanges::slope_coef).
// coef and M need 8 floats of slack: a row's last vector is masked to its keys.
[[gnu::always_inline]] inline double offset_slope(int n, const int* lo, const int* hi, const float* coef,
                                                  const float* M) {
  const simd::i8 lane = {0, 1, 2, 3, 4, 5, 6, 7};
  simd::f8 acc = {};
  for (int i = 0; i < n; ++i) {
    const float* c = coef + std::size_t(i) * n;
    const float* m = M + std::size_t(i) * n;
    for (int j = lo[i]; j <= hi[i]; j += 8) {
      const simd::i8 inside = (lane + j) <= hi[i];
      acc += inside ? simd::load(c + j) * simd::load(m + j) : simd::f8{};
    }
  }
  return double(simd::hsum(acc));
}

// Streaming sums (accumulator.hpp) of one sample's quantities: value and square at sum/sq + at.
// kFirst: the block's first sample writes 0 + v and 0 + v^2, which is what adding to zeroed sums
// gives bit for bit (-0 included), so a block whose first sample writes every value needs no reset.
// kSquares false (with kFirst only): a one-sample block whose squares are implied
// (BlockSums::squares_implied): sq is not written.
template <bool kFirst = false, bool kSquares = true>
[[gnu::always_inline]] inline void add_value(double* sum, double* sq, std::size_t at, double v) {
  static_assert(kFirst || kSquares, "only a block's first sample may leave its squares implied");
  if constexpr (kFirst) {
    sum[at] = 0.0 + v;
    if constexpr (kSquares) sq[at] = 0.0 + v * v;
  } else {
    sum[at] += v;
    sq[at] += v * v;
  }
}

// The unmasked entries j in [lo[i], hi[i]] of an n x n map, into the packed map at `at`
// (AccumLayout: row after row, open keys only).
template <bool kFirst = false, bool kSquares = true>
[[gnu::always_inline]] inline void add_masked_map(double* sum, double* sq, std::size_t at, int n, const int* lo,
                                                  const int* hi, const float* M) {
  for (int i = 0; i < n; ++i)
    for (int j = lo[i]; j <= hi[i]; ++j) add_value<kFirst, kSquares>(sum, sq, at++, M[std::size_t(i) * n + j]);
}

// The lower triangle j <= i of an n x n map (the cosines), into the packed triangle at `at`.
template <bool kFirst = false, bool kSquares = true>
[[gnu::always_inline]] inline void add_lower(double* sum, double* sq, std::size_t at, int n, const float* C) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) add_value<kFirst, kSquares>(sum, sq, at++, C[std::size_t(i) * n + j]);
}

// The norms ||x_i|| from 1 / ||x_i|| (0 for a zero vector).
template <bool kFirst = false, bool kSquares = true>
[[gnu::always_inline]] inline void add_norms(double* sum, double* sq, std::size_t at, int n, const float* inv_norm) {
  for (int i = 0; i < n; ++i)
    add_value<kFirst, kSquares>(sum, sq, at + i, inv_norm[i] > 0.0f ? 1.0 / inv_norm[i] : 0.0);
}

// One sample's metrics into its trace (both families' per-layer metrics carry these three).
template <class Metrics>
void record_metrics(const Metrics& m, LayerTrace& lt) {
  lt.rp = m.rp.value;
  lt.rp_ties = m.rp.ties;
  lt.adjacency = m.adjacency.value;
  lt.adjacency_ties = m.adjacency.ties;
  lt.norm_adjacency = m.norm_adjacency.value;
}

}  // namespace maskscope::kernel
