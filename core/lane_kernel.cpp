// The parameter-free forward pass (MODEL.md sections 1-4) with sixteen samples across the lanes of
// every vector (lane_kernel.hpp). Built without floating-point contraction and with the same body
// compiled for x86-64-v4, x86-64-v3 and baseline x86-64, chosen at run time: each lane does the same
// correctly rounded operations in the same order on every level, so the bits agree.
#include "lane_kernel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <limits>

#include "kernel_args.hpp"
#include "simd.hpp"

namespace maskscope {

namespace {

constexpr int W = 16;  // samples per batch: one per lane
// Aligned to 64 bytes explicitly: the baseline level would align them to 16 only, and the buffers
// (std::vector, aligned new) must suit the AVX-512 level's aligned loads.
typedef float vf __attribute__((vector_size(64), aligned(64)));
typedef std::int32_t vi __attribute__((vector_size(64), aligned(64)));
typedef double vd __attribute__((vector_size(64), aligned(64)));
typedef std::int64_t vl __attribute__((vector_size(64), aligned(64)));
typedef float vf8 __attribute__((vector_size(32)));
typedef std::int32_t vi8 __attribute__((vector_size(32)));
typedef double vd4 __attribute__((vector_size(32)));
typedef double vd2 __attribute__((vector_size(16)));

[[gnu::always_inline]] inline vf splat(float x) {
  vf v;
  for (int t = 0; t < W; ++t) v[t] = x;
  return v;
}

[[gnu::always_inline]] inline vf lane_sqrt(vf x) {
  vf r;
  for (int t = 0; t < W; ++t) r[t] = __builtin_sqrtf(x[t]);
  return r;
}

// A vector of per-lane doubles: lanes 0-7 and 8-15.
struct Halves {
  vd lo, hi;
};

[[gnu::always_inline]] inline Halves widen(vf v) {
  const vf8 a = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7);
  const vf8 b = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
  return {__builtin_convertvector(a, vd), __builtin_convertvector(b, vd)};
}

[[gnu::always_inline]] inline Halves widen(vi v) {
  const vi8 a = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7);
  const vi8 b = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
  return {__builtin_convertvector(a, vd), __builtin_convertvector(b, vd)};
}

[[gnu::always_inline]] inline double lane_of(const Halves& h, int t) { return t < 8 ? h.lo[t] : h.hi[t - 8]; }

// The sum of a vector's 8 lanes in one fixed tree, ((0+1) + (2+3)) + ((4+5) + (6+7)): the order
// add_run's transposed reduction gives every cell, so a cell's sum does not depend on its neighbours.
[[gnu::always_inline]] inline double tree_sum(vd s) {
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

// Eight vectors' lane sums at once (a transposing reduction): lane c of the result is tree_sum(v[c]).
[[gnu::always_inline]] inline vd tree_sums(const vd* v) {
  auto pair = [](vd a, vd b) {
    return __builtin_shufflevector(a, b, 0, 8, 2, 10, 4, 12, 6, 14) + __builtin_shufflevector(a, b, 1, 9, 3, 11, 5, 13, 7, 15);
  };
  auto quad = [](vd a, vd b) {
    return __builtin_shufflevector(a, b, 0, 1, 8, 9, 4, 5, 12, 13) + __builtin_shufflevector(a, b, 2, 3, 10, 11, 6, 7, 14, 15);
  };
  const vd u0 = quad(pair(v[0], v[1]), pair(v[2], v[3]));
  const vd u1 = quad(pair(v[4], v[5]), pair(v[6], v[7]));
  return __builtin_shufflevector(u0, u1, 0, 1, 2, 3, 8, 9, 10, 11) +
         __builtin_shufflevector(u0, u1, 4, 5, 6, 7, 12, 13, 14, 15);
}

// Which lanes hold a sample of the block (the last batch may be partial); the others add 0.
struct Valid {
  bool all = true;
  vl lo, hi;
  explicit Valid(int lanes) : all(lanes == W) {
    for (int t = 0; t < 8; ++t) {
      lo[t] = t < lanes ? -1 : 0;
      hi[t] = t + 8 < lanes ? -1 : 0;
    }
  }
  Halves operator()(Halves h) const {
    if (all) return h;
    return {lo ? h.lo : vd{}, hi ? h.hi : vd{}};
  }
};

// One quantity of the 16 samples into the block sums (MODEL.md section 3).
[[gnu::always_inline]] inline void add_lanes(double* sum, double* sq, std::size_t at, Halves h) {
  sum[at] += tree_sum(h.lo + h.hi);
  sq[at] += tree_sum(h.lo * h.lo + h.hi * h.hi);
}

// Cells v[0 .. count) of the 16 samples into sum/sq + at .. at + count, eight cells at a time.
[[gnu::always_inline]] inline void add_run(double* sum, double* sq, std::size_t at, const vf* v, int count,
                                           const Valid& valid) {
  int c = 0;
  for (; c + 8 <= count; c += 8) {
    vd s[8], q[8];
    for (int u = 0; u < 8; ++u) {
      const Halves h = valid(widen(v[c + u]));
      s[u] = h.lo + h.hi;
      q[u] = h.lo * h.lo + h.hi * h.hi;
    }
    vd total, squares;
    std::memcpy(&total, sum + at + c, sizeof total);
    std::memcpy(&squares, sq + at + c, sizeof squares);
    total += tree_sums(s);
    squares += tree_sums(q);
    std::memcpy(sum + at + c, &total, sizeof total);
    std::memcpy(sq + at + c, &squares, sizeof squares);
  }
  for (; c < count; ++c) add_lanes(sum, sq, at + c, valid(widen(v[c])));
}

// Per-lane metrics of one layer (MODEL.md sections 4, 7, 8).
struct LaneMetrics {
  Halves recency, recency_ties, adjacency, adjacency_ties, norm_adjacency, norm_adjacency_ties;
  Halves score_slope, weight_slope;
};

// Pair counts over a < b in [lo, hi) of row: wins where row[b] > row[a] (the later strictly larger),
// ties where equal; each lane counts its own sample (sample_metrics.hpp, in lanes). Adds to wins and
// ties. (Holding eight b against each loaded a, and counting by sign bits instead of compares, were
// measured no faster and 20% slower on AVX-512.)
[[gnu::always_inline]] inline void lane_pairs(const vf* row, int lo, int hi, vi& wins, vi& ties) {
  const vi one = vi{} + 1;
  for (int b = lo + 1; b < hi; ++b) {
    const vf vb = row[b];
    for (int a = lo; a < b; ++a) {
      const vf va = row[a];
      wins = va < vb ? wins + one : wins;  // a masked add where the target has one
      ties = va == vb ? ties + one : ties;
    }
  }
}

// n vectors on 64-byte boundaries (std::vector would drop vf's alignment attribute).
class LaneArray {
 public:
  explicit LaneArray(std::size_t n)
      : n_(n), p_(static_cast<vf*>(std::aligned_alloc(64, sizeof(vf) * std::max<std::size_t>(n, 1)))) {
    if (!p_) throw std::bad_alloc();
    std::fill(p_, p_ + n_, vf{});
  }
  ~LaneArray() { std::free(p_); }
  LaneArray(const LaneArray&) = delete;
  LaneArray& operator=(const LaneArray&) = delete;
  std::size_t size() const { return n_; }
  vf* data() { return p_; }
  const vf* data() const { return p_; }
  vf& operator[](std::size_t i) { return p_[i]; }
  const vf& operator[](std::size_t i) const { return p_[i]; }
  friend void swap(LaneArray& a, LaneArray& b) noexcept {
    std::swap(a.n_, b.n_);
    std::swap(a.p_, b.p_);
  }

 private:
  std::size_t n_;
  vf* p_;
};

}  // namespace

struct LaneKernel::Buffers {
  LaneArray x, y, q, xn, s, a, c, g, inv_norm, norms, rows_prev, rows_cur;
  std::vector<float> ax, av, adraws;  // one sample's draws (kernel_args.hpp draw_inputs)
  std::vector<int> zeros;             // every row's first key for the cosines: 0
  explicit Buffers(const KernelArgs& k)
      : x(std::size_t(k.n) * k.d), y(x.size()), q(x.size()), xn(x.size()), s(std::size_t(k.n) * k.n),
        a(s.size()), c(s.size()), g(s.size()), inv_norm(std::size_t(k.n)), norms(std::size_t(k.n)), rows_prev(2 * std::size_t(k.n)),
        rows_cur(2 * std::size_t(k.n)), ax(x.size()),
        av(std::size_t(k.d)), adraws(k.basis.normals), zeros(std::size_t(k.n), 0) {}
};

namespace {

using Buffers = LaneKernel::Buffers;

// MODEL.md section 1 for each lane's sample (zeros in unused lanes), recorded into the traces.
[[gnu::always_inline]] inline void draw_lanes(const KernelArgs& k, Buffers& b, std::uint64_t first, int lanes,
                                              std::vector<SampleTrace>* traces, std::int64_t t0) {
  const std::size_t size = b.x.size();
  for (int t = 0; t < W; ++t) {
    if (t < lanes) {
      SampleStream rng(k.seed, first + std::uint64_t(t));
      draw_inputs(k, rng, b.ax.data(), b.av.data(), b.adraws);
      if (traces) {
        SampleTrace& tr = (*traces)[std::size_t(t0 + t)];
        tr.dim = k.d;
        tr.input = b.ax;
      }
    } else if (t == lanes) {
      std::fill(b.ax.begin(), b.ax.end(), 0.0f);
    }
    for (std::size_t e = 0; e < size; ++e) b.x[e][t] = b.ax[e];
  }
}

// Y = Norm(X) (MODEL.md section 2; reduced LayerNorm as in simulator.cpp's normalize).
[[gnu::always_inline]] inline void normalize_lanes(const KernelArgs& k, const vf* x, vf* y) {
  const int n = k.n, d = k.d;
  const float fd = float(k.d_model);
  for (int i = 0; i < n; ++i) {
    const vf* xi = x + std::size_t(i) * d;
    vf* yi = y + std::size_t(i) * d;
    vf shift = {}, f = {};
    switch (k.norm) {
      case Norm::none:
        std::copy(xi, xi + d, yi);
        continue;
      case Norm::l2: {
        vf ss = {};
        for (int e = 0; e < d; ++e) ss += xi[e] * xi[e];
        f = ss > 0.0f ? 1.0f / lane_sqrt(ss) : vf{};
        break;
      }
      case Norm::rmsnorm: {
        vf ss = {};
        for (int e = 0; e < d; ++e) ss += xi[e] * xi[e];
        f = 1.0f / lane_sqrt(ss / fd + kNormEps);
        break;
      }
      case Norm::layernorm: {
        if (k.basis.reduced) {  // centring is the removal of coordinate 0
          vf ss = {};
          for (int e = 0; e < d; ++e) ss += xi[e] * xi[e];
          ss -= xi[0] * xi[0];
          ss = ss > 0.0f ? ss : vf{};
          f = 1.0f / lane_sqrt(ss / fd + kNormEps);
          for (int e = 0; e < d; ++e) yi[e] = xi[e] * f;
          yi[0] = vf{};
          continue;
        }
        vf sum = {};
        for (int e = 0; e < d; ++e) sum += xi[e];
        shift = sum / fd;
        vf ss = {};
        for (int e = 0; e < d; ++e) ss += (xi[e] - shift) * (xi[e] - shift);
        f = 1.0f / lane_sqrt(ss / fd + kNormEps);
        break;
      }
    }
    for (int e = 0; e < d; ++e) yi[e] = (xi[e] - shift) * f;
  }
}

// Q = K = Rope(Y): pair (2p, 2p+1) of token i turned by its angles (kernel::rotate_row, in lanes).
[[gnu::always_inline]] inline void rotate_lanes(const KernelArgs& k, const vf* y, vf* q) {
  const RopeTables& t = *k.rope_tables;
  for (int i = 0; i < k.n; ++i) {
    const std::size_t at = std::size_t(i) * t.half;
    const vf* yi = y + std::size_t(i) * k.d;
    vf* qi = q + std::size_t(i) * k.d;
    for (int p = 0; p < t.half; ++p) {
      const vf a0 = yi[2 * p], a1 = yi[2 * p + 1];
      qi[2 * p] = a0 * t.cos_a[at + p] - a1 * t.sin_a[at + p];
      qi[2 * p + 1] = a0 * t.sin_b[at + p] + a1 * t.cos_b[at + p];
    }
    for (int e = 2 * t.half; e < k.d; ++e) qi[e] = yi[e];
  }
}

// out[j] = scale <r, rows[j]> for j in [j0, j1], four rows at a time.
[[gnu::always_inline]] inline void dot_rows(const vf* r, const vf* rows, int d, int j0, int j1, vf scale, vf* out) {
  int j = j0;
  for (; j + 3 <= j1; j += 4) {
    const vf* r0 = rows + std::size_t(j) * d;
    const vf* r1 = r0 + d;
    const vf* r2 = r1 + d;
    const vf* r3 = r2 + d;
    vf c0 = {}, c1 = {}, c2 = {}, c3 = {};
    for (int e = 0; e < d; ++e) {
      const vf a = r[e];
      c0 += a * r0[e];
      c1 += a * r1[e];
      c2 += a * r2[e];
      c3 += a * r3[e];
    }
    out[j] = scale * c0;
    out[j + 1] = scale * c1;
    out[j + 2] = scale * c2;
    out[j + 3] = scale * c3;
  }
  for (; j <= j1; ++j) {
    const vf* rj = rows + std::size_t(j) * d;
    vf c = {};
    for (int e = 0; e < d; ++e) c += r[e] * rj[e];
    out[j] = scale * c;
  }
}

// The upper triangle of a symmetric map from its lower one (bidirectional scores: Q = K).
[[gnu::always_inline]] inline void mirror_upper(int n, vf* S) {
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) S[std::size_t(i) * n + j] = S[std::size_t(j) * n + i];
}

// out[i n + j] = scale <r_i, r_j> for lo[i] <= j <= i. Four rows by four columns at a time where all
// sixteen pairs lie on or below the diagonal: each load then feeds four products, which keeps the
// batch's rows (which outgrow the L1 cache from n ~ 20) from limiting the speed. Every entry sums
// over e in the same order as dot_rows, so the blocking does not change a bit. Entries left of a
// row's keys may be written (never read).
[[gnu::always_inline]] inline void gram_lanes(const vf* r, int n, int d, const int* lo, vf scale, vf* out) {
  int i0 = 0;
  for (; i0 + 3 < n; i0 += 4) {
    const vf* a0 = r + std::size_t(i0) * d;
    const vf* a1 = a0 + d;
    const vf* a2 = a1 + d;
    const vf* a3 = a2 + d;
    int j = lo[i0];
    for (; j + 3 <= i0; j += 4) {
      const vf* b0 = r + std::size_t(j) * d;
      const vf* b1 = b0 + d;
      const vf* b2 = b1 + d;
      const vf* b3 = b2 + d;
      vf c[4][4] = {};
      for (int e = 0; e < d; ++e) {
        const vf x0 = a0[e], x1 = a1[e], x2 = a2[e], x3 = a3[e];
        const vf y0 = b0[e], y1 = b1[e], y2 = b2[e], y3 = b3[e];
        c[0][0] += x0 * y0; c[0][1] += x0 * y1; c[0][2] += x0 * y2; c[0][3] += x0 * y3;
        c[1][0] += x1 * y0; c[1][1] += x1 * y1; c[1][2] += x1 * y2; c[1][3] += x1 * y3;
        c[2][0] += x2 * y0; c[2][1] += x2 * y1; c[2][2] += x2 * y2; c[2][3] += x2 * y3;
        c[3][0] += x3 * y0; c[3][1] += x3 * y1; c[3][2] += x3 * y2; c[3][3] += x3 * y3;
      }
      for (int u = 0; u < 4; ++u)
        for (int v = 0; v < 4; ++v) out[std::size_t(i0 + u) * n + j + v] = scale * c[u][v];
    }
    for (int u = 0; u < 4; ++u) {
      const int i = i0 + u;
      dot_rows(r + std::size_t(i) * d, r, d, std::max(j, lo[i]), i, scale, out + std::size_t(i) * n);
    }
  }
  for (int i = i0; i < n; ++i) dot_rows(r + std::size_t(i) * d, r, d, lo[i], i, scale, out + std::size_t(i) * n);
}

// S = Mask(scale Q K^T): the lower triangle within each row's keys, mirrored when bidirectional.
[[gnu::always_inline]] inline void scores_lanes(const KernelArgs& k, const vf* q, vf* S) {
  const int n = k.n, d = k.d;
  const vf scale = splat(k.scale);
  gram_lanes(q, n, d, k.lo, scale, S);
  if (k.bidirectional) mirror_upper(n, S);
}

// Whether S can come from the Gram matrix G = X X^T of the layer's input, which the previous layer
// computed for its cosines: without RoPE, <Norm(x_i), Norm(x_j)> = f_i f_j (G_ij - c_ij) with
// f the norm's factor and c = 0, or x_i0 x_j0 for LayerNorm in the reduced basis (coordinate 0 is the
// all-ones direction). One Gram per layer instead of two. Explicit-basis LayerNorm keeps its two-pass
// centring (the one-pass form would cancel).
bool scores_from_gram(const KernelArgs& k) {
  if (k.rope) return false;
  return k.norm != Norm::layernorm || k.basis.reduced;
}

// With l2 and scale 1, the next layer's scores below the diagonal are this layer's cosines, bit for
// bit: both are (G_ij f_i) f_j with f = 1 / ||x|| (scores_from_gram_lanes, cosines_lanes). Where every
// row's keys start at 0 (causal or bidirectional), the recency pairs of row i (within S_i[0, i)) are
// then the adjacency pairs of cosine row i (within C_i[0, i)): counted once, used twice.
bool counts_carry_over(const KernelArgs& k) {
  if (!scores_from_gram(k) || k.norm != Norm::l2 || k.scale != 1.0f) return false;
  for (int i = 0; i < k.n; ++i)
    if (k.lo[i] != 0) return false;
  return true;
}

// S = Mask(scale <Norm(x_i), Norm(x_j)>) from G (lower triangle, diagonal included) and X.
[[gnu::always_inline]] inline void scores_from_gram_lanes(const KernelArgs& k, const vf* G, const vf* x, vf* f, vf* S) {
  const int n = k.n, d = k.d;
  const float fd = float(k.d_model);
  const bool ln = k.norm == Norm::layernorm;
  for (int i = 0; i < n; ++i) {
    vf ss = G[std::size_t(i) * n + i];
    switch (k.norm) {
      case Norm::none: f[i] = splat(1.0f); break;
      case Norm::l2: f[i] = ss > 0.0f ? 1.0f / lane_sqrt(ss) : vf{}; break;
      case Norm::rmsnorm: f[i] = 1.0f / lane_sqrt(ss / fd + kNormEps); break;
      case Norm::layernorm: {
        const vf x0 = x[std::size_t(i) * d];
        ss -= x0 * x0;
        ss = ss > 0.0f ? ss : vf{};
        f[i] = 1.0f / lane_sqrt(ss / fd + kNormEps);
        break;
      }
    }
  }
  const vf scale = splat(k.scale);
  for (int i = 0; i < n; ++i) {
    const vf fi = scale * f[i];
    const vf xi0 = x[std::size_t(i) * d];
    for (int j = k.lo[i]; j <= i; ++j) {
      vf g = G[std::size_t(i) * n + j];
      if (ln) g -= xi0 * x[std::size_t(j) * d];
      S[std::size_t(i) * n + j] = fi * g * f[j];
    }
  }
  if (k.bidirectional) mirror_upper(n, S);
}

// A = softmax_rows(S) over each row's keys.
[[gnu::always_inline]] inline void softmax_lanes(const KernelArgs& k, const vf* S, vf* A) {
  const int n = k.n;
  for (int i = 0; i < n; ++i) {
    const vf* Si = S + std::size_t(i) * n;
    vf* Ai = A + std::size_t(i) * n;
    const int lo = k.lo[i], hi = k.hi[i];
    vf m = Si[lo];
    for (int j = lo + 1; j <= hi; ++j) m = Si[j] > m ? Si[j] : m;
    vf z = {};
    for (int j = lo; j <= hi; ++j) {
      const vf e = simd::exp_nonpositive_lanes<vf, vi>(Si[j] - m);
      Ai[j] = e;
      z += e;
    }
    const vf inv_z = 1.0f / z;
    for (int j = lo; j <= hi; ++j) Ai[j] *= inv_z;
    std::fill(Ai, Ai + lo, vf{});  // masked keys weigh exactly 0 (mix_lanes runs over blocks of rows)
    std::fill(Ai + hi + 1, Ai + n, vf{});
  }
}

// V vectors of X' = A Y + gamma X from coordinate e0, in V independent accumulators.
template <int V>
[[gnu::always_inline]] inline void mix_chunk(const vf* Ai, const vf* y, const vf* xi, vf* out, int d, int lo, int hi,
                                             vf gamma, int e0) {
  vf acc[V];
  for (int v = 0; v < V; ++v) acc[v] = gamma * xi[e0 + v];
  for (int j = lo; j <= hi; ++j) {
    const vf a = Ai[j];
    const vf* yj = y + std::size_t(j) * d + e0;
    for (int v = 0; v < V; ++v) acc[v] += a * yj[v];
  }
  for (int v = 0; v < V; ++v) out[e0 + v] = acc[v];
}

// Row i of X' from vector e_start on, eight vectors at a time.
[[gnu::always_inline]] inline void mix_row(const vf* Ai, const vf* y, const vf* xi, vf* out, int d, int e_start,
                                           int lo, int hi, vf gamma) {
  int e0 = e_start;
  for (; e0 + 8 <= d; e0 += 8) mix_chunk<8>(Ai, y, xi, out, d, lo, hi, gamma, e0);
  simd::with_count_1_to_7(d - e0, [&]<int V>() __attribute__((always_inline)) {
    mix_chunk<V>(Ai, y, xi, out, d, lo, hi, gamma, e0);
  });
}

// Rows i0..i0+3 of X' on the vectors e0..e0+3, over the keys j0..j1 of the four rows (A is 0 outside
// a row's keys, and adding +0 changes no sum): each load feeds four products.
[[gnu::always_inline]] inline void mix_block(const vf* A, const vf* y, const vf* x, vf* xn, int n, int d, int i0,
                                             int e0, int j0, int j1, vf gamma) {
  vf acc[4][4];
  for (int u = 0; u < 4; ++u)
    for (int v = 0; v < 4; ++v) acc[u][v] = gamma * x[std::size_t(i0 + u) * d + e0 + v];
  const vf* A0 = A + std::size_t(i0) * n;
  for (int j = j0; j <= j1; ++j) {
    const vf* yj = y + std::size_t(j) * d + e0;
    const vf w0 = A0[j], w1 = A0[n + j], w2 = A0[2 * n + j], w3 = A0[3 * n + j];
    const vf y0 = yj[0], y1 = yj[1], y2 = yj[2], y3 = yj[3];
    acc[0][0] += w0 * y0; acc[0][1] += w0 * y1; acc[0][2] += w0 * y2; acc[0][3] += w0 * y3;
    acc[1][0] += w1 * y0; acc[1][1] += w1 * y1; acc[1][2] += w1 * y2; acc[1][3] += w1 * y3;
    acc[2][0] += w2 * y0; acc[2][1] += w2 * y1; acc[2][2] += w2 * y2; acc[2][3] += w2 * y3;
    acc[3][0] += w3 * y0; acc[3][1] += w3 * y1; acc[3][2] += w3 * y2; acc[3][3] += w3 * y3;
  }
  for (int u = 0; u < 4; ++u)
    for (int v = 0; v < 4; ++v) xn[std::size_t(i0 + u) * d + e0 + v] = acc[u][v];
}

// X' = A Y + gamma X (MODEL.md section 2): blocks of four rows and four vectors, then the rest.
[[gnu::always_inline]] inline void mix_lanes(const KernelArgs& k, const vf* A, const vf* y, const vf* x, vf* xn) {
  const int n = k.n, d = k.d;
  const vf gamma = splat(k.gamma);
  const int d4 = d / 4 * 4;
  int i = 0;
  for (; i + 3 < n; i += 4) {
    for (int e0 = 0; e0 < d4; e0 += 4) mix_block(A, y, x, xn, n, d, i, e0, k.lo[i], k.hi[i + 3], gamma);
    if (d4 == d) continue;
    for (int u = 0; u < 4; ++u)
      mix_row(A + std::size_t(i + u) * n, y, x + std::size_t(i + u) * d, xn + std::size_t(i + u) * d, d, d4,
              k.lo[i + u], k.hi[i + u], gamma);
  }
  for (; i < n; ++i)
    mix_row(A + std::size_t(i) * n, y, x + std::size_t(i) * d, xn + std::size_t(i) * d, d, 0, k.lo[i], k.hi[i], gamma);
}

// 1 / ||x_i|| (0 for a zero vector) and the lower triangle of the cosine matrix, cos(x, x) = 1:
// the Gram matrix of the outputs, whose diagonal gives the norms.
[[gnu::always_inline]] inline void cosines_lanes(const KernelArgs& k, const vf* xn, const int* zeros, vf* inv_norm,
                                                 vf* G, vf* C) {
  const int n = k.n;
  gram_lanes(xn, n, k.d, zeros, splat(1.0f), G);
  for (int i = 0; i < n; ++i) {
    const vf ss = G[std::size_t(i) * n + i];
    inv_norm[i] = ss > 0.0f ? 1.0f / lane_sqrt(ss) : vf{};
  }
  for (int i = 0; i < n; ++i) {
    const vf* Gi = G + std::size_t(i) * n;
    vf* Ci = C + std::size_t(i) * n;
    for (int j = 0; j < i; ++j) Ci[j] = Gi[j] * inv_norm[i] * inv_norm[j];
    Ci[i] = inv_norm[i] > 0.0f ? splat(1.0f) : vf{};
  }
}

// A proportion in half units over `pairs` comparisons, lane by lane: value (ties 1/2) and tie share.
[[gnu::always_inline]] inline void proportion(vi wins, vi ties, double pairs, Halves& value, Halves& tie_share) {
  const Halves h = widen(wins + wins + ties), t = widen(ties);
  value = {0.5 * h.lo / pairs, 0.5 * h.hi / pairs};
  tie_share = {t.lo / pairs, t.hi / pairs};
}

// The mean over rows r = 2 .. n-1 of each row's proportion (over its r (r - 1) / 2 pairs), lane by
// lane: the adjacency score and norm adjacency (MODEL.md sections 4 and 7).
struct RowMean {
  Halves value{}, ties{};
  [[gnu::always_inline]] void add(vi wins, vi row_ties, int r) {
    Halves v, t;
    proportion(wins, row_ties, 0.5 * double(r) * (r - 1), v, t);
    value = {value.lo + v.lo, value.hi + v.hi};
    ties = {ties.lo + t.lo, ties.hi + t.hi};
  }
  [[gnu::always_inline]] void finish(int n, Halves& mean, Halves& tie_mean) const {
    mean = {value.lo / double(n - 2), value.hi / double(n - 2)};
    tie_mean = {ties.lo / double(n - 2), ties.hi / double(n - 2)};
  }
};

// Per-row pair counts (vi bits kept in vf storage).
[[gnu::always_inline]] inline vf as_vf(vi v) {
  vf f;
  std::memcpy(&f, &v, sizeof f);
  return f;
}
[[gnu::always_inline]] inline vi as_vi(vf f) {
  vi v;
  std::memcpy(&v, &f, sizeof v);
  return v;
}

// `rp_rows`: when given, row i's recency pair counts (wins, ties at 2i, 2i + 1), known already (see
// counts_carry_over). `adjacency_rows`: when given, receives each cosine row's pair counts.
[[gnu::always_inline]] inline LaneMetrics metrics_lanes(const KernelArgs& k, const vf* S, const vf* A, const vf* C,
                                                        const vf* inv_norm, vf* norms, const vf* rp_rows,
                                                        vf* adjacency_rows) {
  const int n = k.n;
  LaneMetrics m;
  // Within-offset slopes on the query position (MODEL.md section 8).
  vf ss = {}, sa = {};
  for (int i = 0; i < n; ++i)
    for (int j = k.lo[i]; j <= k.hi[i]; ++j) {
      const float coef = k.slope_coef[std::size_t(i) * n + j];
      ss += coef * S[std::size_t(i) * n + j];
      sa += coef * A[std::size_t(i) * n + j];
    }
  m.score_slope = widen(ss);
  m.weight_slope = widen(sa);
  // Recency probability (MODEL.md section 4): triples i > k > j, nearer key strictly higher.
  if (k.triples > 0) {
    vi wins = {}, ties = {};
    if (rp_rows) {
      for (int i = 0; i < n; ++i) {
        wins += as_vi(rp_rows[2 * i]);
        ties += as_vi(rp_rows[2 * i + 1]);
      }
    } else {
      for (int i = 0; i < n; ++i) lane_pairs(S + std::size_t(i) * n, k.lo[i], i, wins, ties);
    }
    proportion(wins, ties, double(k.triples), m.recency, m.recency_ties);
  }
  if (n >= 3) {
    // Adjacency score of the cosine matrix (rows r >= 2, pairs a < b < r), averaged over rows.
    RowMean rows;
    if (adjacency_rows) std::fill(adjacency_rows, adjacency_rows + 4, vf{});  // rows 0 and 1: no pairs
    for (int r = 2; r < n; ++r) {
      vi wins = {}, ties = {};
      lane_pairs(C + std::size_t(r) * n, 0, r, wins, ties);
      if (adjacency_rows) {
        adjacency_rows[2 * r] = as_vf(wins);
        adjacency_rows[2 * r + 1] = as_vf(ties);
      }
      rows.add(wins, ties, r);
    }
    rows.finish(n, m.adjacency, m.adjacency_ties);
    // Norm adjacency (MODEL.md section 7): rows are prefixes of the norm sequence.
    for (int i = 0; i < n; ++i) norms[i] = inv_norm[i] > 0.0f ? 1.0f / inv_norm[i] : vf{};
    vi wins = {}, ties = {};
    RowMean prefixes;
    for (int last = 1; last + 1 < n; ++last) {
      const vi one = vi{} + 1;
      for (int a = 0; a < last; ++a) {
        wins = norms[a] < norms[last] ? wins + one : wins;
        ties = norms[a] == norms[last] ? ties + one : ties;
      }
      prefixes.add(wins, ties, last + 1);  // row last + 1 compares the pairs within [0, last]
    }
    prefixes.finish(n, m.norm_adjacency, m.norm_adjacency_ties);
  }
  return m;
}

// The layer's maps, norms and metrics of the batch into the block sums (simulator.cpp's accumulate).
[[gnu::always_inline]] inline void accumulate_lanes(const KernelArgs& k, int l, const Buffers& b,
                                                    const LaneMetrics& m, const Valid& valid, BlockSums& sums) {
  const int n = k.n;
  const AccumLayout& L = *k.layout;
  double* sum = sums.sum.data();
  double* sq = sums.sumsq.data();
  for (int i = 0; i < n; ++i) {
    const std::size_t c = std::size_t(i) * n + k.lo[i];
    const int keys = k.hi[i] - k.lo[i] + 1;
    add_run(sum, sq, L.score(l) + L.map_row(i), b.s.data() + c, keys, valid);
    add_run(sum, sq, L.weight(l) + L.map_row(i), b.a.data() + c, keys, valid);
    add_run(sum, sq, L.cosine(l) + L.cosine_row(i), b.c.data() + std::size_t(i) * n, i + 1, valid);
  }
  for (int i = 0; i < n; ++i) {
    const Halves h = widen(b.inv_norm[std::size_t(i)]);
    add_lanes(sum, sq, L.norm(l) + i, valid({h.lo > 0.0 ? 1.0 / h.lo : vd{}, h.hi > 0.0 ? 1.0 / h.hi : vd{}}));
  }
  add_lanes(sum, sq, L.score_slope(l), valid(m.score_slope));
  add_lanes(sum, sq, L.weight_slope(l), valid(m.weight_slope));
  if (k.triples > 0) {
    add_lanes(sum, sq, L.recency(l), valid(m.recency));
    add_lanes(sum, sq, L.recency_ties(l), valid(m.recency_ties));
  }
  if (n >= 3) {
    add_lanes(sum, sq, L.adjacency(l), valid(m.adjacency));
    add_lanes(sum, sq, L.adjacency_ties(l), valid(m.adjacency_ties));
    add_lanes(sum, sq, L.norm_adjacency(l), valid(m.norm_adjacency));
    add_lanes(sum, sq, L.norm_adjacency_ties(l), valid(m.norm_adjacency_ties));
  }
}

// Lane t's layer into its trace, through the per-sample scratch `w` (record_layer).
void record_lane(const KernelArgs& k, const Buffers& b, const LaneMetrics& m, int t, Simulator::Work& w,
                 LayerTrace& lt) {
  for (std::size_t e = 0; e < b.y.size(); ++e) {
    w.y[e] = b.y[e][t];
    w.xn[e] = b.xn[e][t];
  }
  for (std::size_t c = 0; c < b.s.size(); ++c) {
    w.s[c] = b.s[c][t];
    w.a[c] = b.a[c][t];
  }
  SampleMetrics sm{};
  sm.score_slope = lane_of(m.score_slope, t);
  sm.weight_slope = lane_of(m.weight_slope, t);
  if (k.triples > 0) sm.recency = {lane_of(m.recency, t), lane_of(m.recency_ties, t)};
  if (k.n >= 3) {
    sm.adjacency = {lane_of(m.adjacency, t), lane_of(m.adjacency_ties, t)};
    sm.norm_adjacency = {lane_of(m.norm_adjacency, t), lane_of(m.norm_adjacency_ties, t)};
  }
  record_layer(k, w.y.data(), w.xn.data(), w.s.data(), w.a.data(), sm, lt);
}

[[gnu::always_inline]] inline bool run_lanes(const KernelArgs& k, Buffers& b, Simulator::Work& w,
                                             std::uint64_t first_sample, std::int64_t count, BlockSums* sums,
                                             std::vector<SampleTrace>* traces, const std::atomic<bool>* cancel) {
  for (std::int64_t t0 = 0; t0 < count; t0 += W) {
    if (cancel && cancel->load(std::memory_order_relaxed)) return false;
    const int lanes = int(std::min<std::int64_t>(W, count - t0));
    const Valid valid(lanes);
    draw_lanes(k, b, first_sample + std::uint64_t(t0), lanes, traces, t0);
    const bool from_gram = scores_from_gram(k), carry = counts_carry_over(k);
    if (from_gram) gram_lanes(b.x.data(), k.n, k.d, b.zeros.data(), splat(1.0f), b.g.data());  // the input's
    for (int l = 0; l < k.layers; ++l) {
      if (cancel && l > 0 && cancel->load(std::memory_order_relaxed)) return false;
      normalize_lanes(k, b.x.data(), b.y.data());
      if (from_gram) {
        scores_from_gram_lanes(k, b.g.data(), b.x.data(), b.norms.data(), b.s.data());
      } else {
        const vf* q = b.y.data();
        if (k.rope) {
          rotate_lanes(k, b.y.data(), b.q.data());
          q = b.q.data();
        }
        scores_lanes(k, q, b.s.data());
      }
      softmax_lanes(k, b.s.data(), b.a.data());
      mix_lanes(k, b.a.data(), b.y.data(), b.x.data(), b.xn.data());
      cosines_lanes(k, b.xn.data(), b.zeros.data(), b.inv_norm.data(), b.g.data(), b.c.data());  // G: the next input's
      const LaneMetrics m = metrics_lanes(k, b.s.data(), b.a.data(), b.c.data(), b.inv_norm.data(), b.norms.data(),
                                          carry && l > 0 ? b.rows_prev.data() : nullptr,
                                          carry ? b.rows_cur.data() : nullptr);
      if (carry) swap(b.rows_prev, b.rows_cur);
      if (sums) accumulate_lanes(k, l, b, m, valid, *sums);
      if (traces)
        for (int t = 0; t < lanes; ++t) record_lane(k, b, m, t, w, (*traces)[std::size_t(t0 + t)].layers[std::size_t(l)]);
      swap(b.x, b.xn);
    }
    if (sums) sums->count += lanes;
  }
  return true;
}

using LaneFn = bool (*)(const KernelArgs&, Buffers&, Simulator::Work&, std::uint64_t, std::int64_t, BlockSums*,
                        std::vector<SampleTrace>*, const std::atomic<bool>*);

#if MASKSCOPE_TARGET_CLONES && defined(__x86_64__)
[[gnu::target("arch=x86-64-v4")]] bool run_lanes_v4(const KernelArgs& k, Buffers& b, Simulator::Work& w,
                                                    std::uint64_t first, std::int64_t count, BlockSums* sums,
                                                    std::vector<SampleTrace>* traces, const std::atomic<bool>* cancel) {
  return run_lanes(k, b, w, first, count, sums, traces, cancel);
}
[[gnu::target("arch=x86-64-v3")]] bool run_lanes_v3(const KernelArgs& k, Buffers& b, Simulator::Work& w,
                                                    std::uint64_t first, std::int64_t count, BlockSums* sums,
                                                    std::vector<SampleTrace>* traces, const std::atomic<bool>* cancel) {
  return run_lanes(k, b, w, first, count, sums, traces, cancel);
}
#endif
bool run_lanes_base(const KernelArgs& k, Buffers& b, Simulator::Work& w, std::uint64_t first, std::int64_t count,
                    BlockSums* sums, std::vector<SampleTrace>* traces, const std::atomic<bool>* cancel) {
  return run_lanes(k, b, w, first, count, sums, traces, cancel);
}

struct Level {
  const char* name;
  LaneFn fn;
  bool supported;
};

const std::vector<Level>& levels() {
  static const std::vector<Level> v = [] {
    std::vector<Level> l;
#if MASKSCOPE_TARGET_CLONES && defined(__x86_64__)
    __builtin_cpu_init();
    l.push_back({"x86-64-v4", run_lanes_v4, __builtin_cpu_supports("x86-64-v4") != 0});
    l.push_back({"x86-64-v3", run_lanes_v3, __builtin_cpu_supports("x86-64-v3") != 0});
#endif
    l.push_back({"x86-64", run_lanes_base, true});
    return l;
  }();
  return v;
}

// The level in use: the best supported unless set_lane_isa chose another.
std::atomic<int>& chosen_level() {
  static std::atomic<int> chosen = [] {
    const auto& v = levels();
    // MASKSCOPE_LANE_ISA=x86-64-v3 (for example) picks a lower level, for benchmarks; the numbers are the same.
    const char* want = std::getenv("MASKSCOPE_LANE_ISA");
    for (std::size_t i = 0; want && i < v.size(); ++i)
      if (v[i].supported && std::string(want) == v[i].name) return int(i);
    for (std::size_t i = 0; i < v.size(); ++i)
      if (v[i].supported) return int(i);
    return int(v.size() - 1);
  }();
  return chosen;
}

}  // namespace

bool use_lane_kernel(const Settings& s, const InputBasis& basis) {
  // Measured on AVX-512 (one thread, whole batches) against the per-sample kernel: 1.9x at n 10-64,
  // d 64; 1.7x at n 96-128, d 64; 1.2-1.4x with RoPE at n 32-64, d 128-1024; even at n 16, d 2048.
  // Blocks must hold whole batches (a block of 4 samples would leave 12 lanes idle), and a batch's
  // buffers stay under 16 MiB per thread.
  if (s.random_weights() || s.n > 128 || samples_per_block(s) < W) return false;
  const std::size_t bytes = sizeof(vf) * (6 * std::size_t(s.n) * basis.dim + 4 * std::size_t(s.n) * s.n);
  return bytes <= (std::size_t(16) << 20);
}

bool lane_kernel_native() {
#if MASKSCOPE_TARGET_CLONES && defined(__x86_64__)
  static const bool native = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("x86-64-v4") != 0;
  }();
  return native;
#else
  return false;
#endif
}

bool runs_in_lanes(const Settings& s, const InputBasis& basis, Simulator::Kernel kernel) {
  const bool wanted = kernel == Simulator::Kernel::lanes || (kernel == Simulator::Kernel::automatic && lane_kernel_native());
  return wanted && use_lane_kernel(s, basis);
}

std::string kernel_name(const Settings& s, Simulator::Kernel kernel) {
  if (runs_in_lanes(s, input_basis(s), kernel)) return "lanes";
#if MASKSCOPE_TARGET_CLONES && defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v3")) return "per-sample x86-64-v3";  // the kernel's target_clones
#endif
  return "per-sample x86-64";
}

LaneKernel::LaneKernel(const KernelArgs& k) : b_(std::make_unique<Buffers>(k)) {}
LaneKernel::~LaneKernel() = default;

bool LaneKernel::run(const KernelArgs& k, Simulator::Work& w, std::uint64_t first_sample, std::int64_t count,
                     BlockSums* sums, std::vector<SampleTrace>* traces, const std::atomic<bool>* cancel) {
  const auto& v = levels();
  return v[std::size_t(chosen_level().load())].fn(k, *b_, w, first_sample, count, sums, traces, cancel);
}

std::string lane_isa() { return levels()[std::size_t(chosen_level().load())].name; }

bool set_lane_isa(const std::string& level) {
  const auto& v = levels();
  for (std::size_t i = 0; i < v.size(); ++i)
    if (level == v[i].name && v[i].supported) {
      chosen_level().store(int(i));
      return true;
    }
  return false;
}

std::vector<std::string> lane_isas_available() {
  std::vector<std::string> names;
  for (const Level& l : levels())
    if (l.supported) names.push_back(l.name);
  return names;
}

}  // namespace maskscope
