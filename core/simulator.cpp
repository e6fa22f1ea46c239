// The per-sample forward pass (MODEL.md sections 1-3). The hot loop is compiled twice, for
// x86-64-v3 (AVX2 + FMA) and for baseline x86-64, and chosen at run time by the loader (ifunc),
// so one binary runs everywhere and uses wide vectors where it can.
#include "simulator.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <cmath>
#include <limits>

#include "resources.hpp"
#include "rng.hpp"
#include "sample_metrics.hpp"
#include "simd.hpp"

namespace maskscope {

namespace {

constexpr float kNormEps = 1e-12f;  // MODEL.md section 2 (and the LN-recency notebook)

struct KernelArgs {
  int n, d, layers;
  float inv_sqrt_d;
  float anisotropy;  // c = sqrt(alpha / (1 - alpha)), LN-recency Eq. 6
  bool alpha_one;    // alpha = 1: every token is v / sqrt(d)
  bool unit_input;
  Norm norm;
  float scale;
  float gamma;
  bool rope;
  bool bidirectional;
  const int* lo;
  const int* hi;
  const float* rope_cos;
  const float* rope_sin;
  std::int64_t triples;
  const AccumLayout* layout;
  const ZigguratTables* zig;
};

using simd::dot;

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
  for (; j <= j1; ++j) out[j - j0] = scale * dot(a, rows + std::size_t(j) * d, d);
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

[[gnu::always_inline]] inline void normalize_row(Norm norm, const float* x, float* y, int d) {
  const float fd = static_cast<float>(d);
  switch (norm) {
    case Norm::none:
      if (x != y) std::memcpy(y, x, sizeof(float) * std::size_t(d));
      return;
    case Norm::l2: {
      const float ss = dot(x, x, d);
      shift_scale(x, 0.0f, ss > 0.0f ? 1.0f / std::sqrt(ss) : 0.0f, y, d);
      return;
    }
    case Norm::layernorm: {
      const float mean = sum_of(x, d) / fd;
      const float var = centred_sumsq(x, mean, d) / fd;
      shift_scale(x, mean, 1.0f / std::sqrt(var + kNormEps), y, d);
      return;
    }
    case Norm::rmsnorm: {
      const float ms = dot(x, x, d) / fd;
      shift_scale(x, 0.0f, 1.0f / std::sqrt(ms + kNormEps), y, d);
      return;
    }
  }
}

}  // namespace

// S and C carry 8 floats of slack for the vector pair counts (sample_metrics.hpp).
struct Simulator::Work {
  std::vector<float> x, y, q, xn, s, a, c, inv_norm, v;
  Work(int n, int d)
      : x(std::size_t(n) * d), y(std::size_t(n) * d), q(std::size_t(n) * d), xn(std::size_t(n) * d),
        s(std::size_t(n) * n + 8), a(std::size_t(n) * n), c(std::size_t(n) * n + 8), inv_norm(n), v(d) {}
};

namespace {

// The steps of one sample, in the order of MODEL.md sections 1-4. Each is always inlined into
// run_samples, so the x86-64-v3 clone of the kernel gets wide vectors in every step.

// LN-recency Eq. 6 (MODEL.md section 1): x_i = (eps_i + c v) / sqrt(d), c = sqrt(alpha / (1 - alpha));
// alpha = 1 is the limit in which every token is v / sqrt(d). Optionally unit norm (Behind RoPE Sec. 3.2).
[[gnu::always_inline]] inline void draw_inputs(const KernelArgs& k, BlockStream& rng, float* x, float* v) {
  const int n = k.n, d = k.d;
  if (k.alpha_one) {
    rng.normals(*k.zig, v, d);
    for (int e = 0; e < d; ++e) v[e] *= k.inv_sqrt_d;
    for (int i = 0; i < n; ++i) std::copy(v, v + d, x + std::size_t(i) * d);
  } else {
    if (k.anisotropy != 0.0f) {
      rng.normals(*k.zig, v, d);
      for (int e = 0; e < d; ++e) v[e] *= k.anisotropy;
    } else {
      std::fill(v, v + d, 0.0f);
    }
    rng.normals(*k.zig, x, n * d);
    for (int i = 0; i < n; ++i) {
      float* xi = x + std::size_t(i) * d;
#pragma omp simd
      for (int e = 0; e < d; ++e) xi[e] = (xi[e] + v[e]) * k.inv_sqrt_d;
    }
  }
  if (k.unit_input)
    for (int i = 0; i < n; ++i) normalize_row(Norm::l2, x + std::size_t(i) * d, x + std::size_t(i) * d, d);
}

// Q = K = Rope(Y) (Su et al., RoFormer Eq. 34): pair (2p, 2p+1) of token i turns by i theta^(-2p/d).
// Values are not rotated (MODEL.md section 2).
[[gnu::always_inline]] inline void rotate(const KernelArgs& k, const float* y, float* q) {
  const int half = k.d / 2;
  for (int i = 0; i < k.n; ++i) {
    const float* yi = y + std::size_t(i) * k.d;
    float* qi = q + std::size_t(i) * k.d;
    const float* cs = k.rope_cos + std::size_t(i) * half;
    const float* sn = k.rope_sin + std::size_t(i) * half;
    for (int p = 0; p < half; ++p) {
      const float a0 = yi[2 * p], a1 = yi[2 * p + 1];
      qi[2 * p] = a0 * cs[p] - a1 * sn[p];
      qi[2 * p + 1] = a0 * sn[p] + a1 * cs[p];
    }
  }
}

// S = Mask(scale Q K^T) (MODEL.md section 2): the lower triangle within each row's key range,
// mirrored when bidirectional (Q = K, so S is symmetric).
[[gnu::always_inline]] inline void scores(const KernelArgs& k, const float* q, float* S) {
  const int n = k.n, d = k.d;
  for (int i = 0; i < n; ++i) dot_row(q + std::size_t(i) * d, q, d, k.lo[i], i, k.scale, S + i * n + k.lo[i]);
  if (k.bidirectional)
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j) S[i * n + j] = S[j * n + i];
}

// A = softmax_rows(S) over the unmasked keys (vector exp; S has 8 floats of slack).
[[gnu::always_inline]] inline void softmax(const KernelArgs& k, const float* S, float* A) {
  const int n = k.n;
  for (int i = 0; i < n; ++i) {
    const int lo = k.lo[i], hi = k.hi[i];
    const float* Si = S + std::size_t(i) * n;
    float* Ai = A + std::size_t(i) * n;
    float m = Si[lo];
    for (int j = lo + 1; j <= hi; ++j) m = std::max(m, Si[j]);
    simd::f8 zv = {};
    float tail[8];
    int j = lo;
    for (; j + 8 <= hi + 1; j += 8) {
      const simd::f8 e = simd::exp_nonpositive(simd::load(Si + j) - m);
      std::memcpy(Ai + j, &e, sizeof e);
      zv += e;
    }
    if (j <= hi) {
      const simd::f8 e = simd::exp_nonpositive(simd::load(Si + j) - m);
      std::memcpy(tail, &e, sizeof e);
      for (int lane = 0; j + lane <= hi; ++lane) {
        Ai[j + lane] = tail[lane];
        zv[lane] += tail[lane];
      }
    }
    const float inv_z = 1.0f / simd::hsum(zv);
    for (int jj = lo; jj <= hi; ++jj) Ai[jj] *= inv_z;
  }
}

// X' = A Y + gamma X (MODEL.md section 2; gamma = residual strength).
[[gnu::always_inline]] inline void mix(const KernelArgs& k, const float* A, const float* y, const float* x, float* xn) {
  for (int i = 0; i < k.n; ++i)
    simd::weighted_rows(A + std::size_t(i) * k.n, y, k.d, k.lo[i], k.hi[i], k.gamma, x + std::size_t(i) * k.d,
                        xn + std::size_t(i) * k.d);
}

// Norms (Chi et al.'s variance signal) and cosine similarities (Zuo et al.) of the layer's
// output, MODEL.md section 3: lower triangle of C, cos(x, x) = 1.
[[gnu::always_inline]] inline void output_cosines(const KernelArgs& k, const float* xn, float* inv_norm, float* C) {
  const int n = k.n, d = k.d;
  for (int i = 0; i < n; ++i) {
    const float* oi = xn + std::size_t(i) * d;
    const float ss = dot(oi, oi, d);
    inv_norm[i] = ss > 0.0f ? 1.0f / std::sqrt(ss) : 0.0f;
  }
  for (int i = 0; i < n; ++i) {
    float* Ci = C + std::size_t(i) * n;
    if (i > 0) dot_row(xn + std::size_t(i) * d, xn, d, 0, i - 1, inv_norm[i], Ci);
    for (int j = 0; j < i; ++j) Ci[j] *= inv_norm[j];
    Ci[i] = inv_norm[i] > 0.0f ? 1.0f : 0.0f;
  }
}

struct SampleMetrics {
  double recency, recency_ties, adjacency, adjacency_ties;
};

// MODEL.md section 4, one sample. Recency probability (LN-recency Sec. 3): over triples
// i > k > j of unmasked keys, the fraction with S_ik > S_ij, ties 1/2. Adjacency score (Zuo et
// al. Sec. 4.1, App. A): over rows k >= 2 of C and pairs i < j < k (diagonal left out), the
// fraction with C_ki < C_kj, ties 1/2, averaged over rows. NaN where no comparison exists.
[[gnu::always_inline]] inline SampleMetrics sample_metrics(const KernelArgs& k, const float* S, const float* C) {
  const int n = k.n;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  SampleMetrics m{nan, nan, nan, nan};
  if (k.triples > 0) {
    PairCounts total;
    for (int i = 0; i < n; ++i) {
      const PairCounts c = ordered_pairs(S + std::size_t(i) * n, k.lo[i], i);
      total.wins += c.wins;
      total.ties += c.ties;
    }
    m.recency = 0.5 * static_cast<double>(total.half_units()) / static_cast<double>(k.triples);
    m.recency_ties = static_cast<double>(total.ties) / static_cast<double>(k.triples);
  }
  if (n >= 3) {
    double row_sum = 0.0, tie_sum = 0.0;
    for (int r = 2; r < n; ++r) {
      const PairCounts c = ordered_pairs(C + std::size_t(r) * n, 0, r);
      const double pairs = 0.5 * static_cast<double>(r) * (r - 1);
      row_sum += 0.5 * static_cast<double>(c.half_units()) / pairs;
      tie_sum += static_cast<double>(c.ties) / pairs;
    }
    m.adjacency = row_sum / (n - 2);
    m.adjacency_ties = tie_sum / (n - 2);
  }
  return m;
}

// Adds this layer's S, A, C, norms and metrics (and their squares) to the block sums.
[[gnu::always_inline]] inline void accumulate(const KernelArgs& k, int l, const float* S, const float* A,
                                              const float* C, const float* inv_norm, const SampleMetrics& m,
                                              BlockSums& sums) {
  const int n = k.n;
  const AccumLayout& L = *k.layout;
  double* sum = sums.sum.data();
  double* sq = sums.sumsq.data();
  for (int i = 0; i < n; ++i) {
    const std::size_t os = L.score(l) + std::size_t(i) * n, oa = L.weight(l) + std::size_t(i) * n;
    const std::size_t oc = L.cosine(l) + std::size_t(i) * n;
    const float* Si = S + std::size_t(i) * n;
    const float* Ai = A + std::size_t(i) * n;
    const float* Ci = C + std::size_t(i) * n;
    for (int j = k.lo[i]; j <= k.hi[i]; ++j) {
      const double sv = Si[j], av = Ai[j];
      sum[os + j] += sv;
      sq[os + j] += sv * sv;
      sum[oa + j] += av;
      sq[oa + j] += av * av;
    }
    for (int j = 0; j <= i; ++j) {
      const double cv = Ci[j];
      sum[oc + j] += cv;
      sq[oc + j] += cv * cv;
    }
    const double norm_i = inv_norm[i] > 0.0f ? 1.0 / inv_norm[i] : 0.0;
    sum[L.norm(l) + i] += norm_i;
    sq[L.norm(l) + i] += norm_i * norm_i;
  }
  auto add = [&](std::size_t at, double v) {
    sum[at] += v;
    sq[at] += v * v;
  };
  if (k.triples > 0) {
    add(L.recency(l), m.recency);
    add(L.recency_ties(l), m.recency_ties);
  }
  if (n >= 3) {
    add(L.adjacency(l), m.adjacency);
    add(L.adjacency_ties(l), m.adjacency_ties);
  }
}

void record_layer(const KernelArgs& k, const float* y, const float* xn, const float* S, const float* A,
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
  lt.recency = m.recency;
  lt.recency_ties = m.recency_ties;
  lt.adjacency = m.adjacency;
  lt.adjacency_ties = m.adjacency_ties;
}

#if MASKSCOPE_TARGET_CLONES && defined(__x86_64__)
#define MASKSCOPE_KERNEL_CLONES [[gnu::target_clones("arch=x86-64-v3", "default")]]
#else
#define MASKSCOPE_KERNEL_CLONES  // sanitizer builds: one baseline kernel (see CMakeLists.txt)
#endif

// Runs `count` samples from `rng`. Accumulates into `sums` when given; records the last sample
// into `trace` when given. Returns false if cancelled (checked every sample and layer).
MASKSCOPE_KERNEL_CLONES
bool run_samples(const KernelArgs& k, Simulator::Work& w, BlockStream& rng, std::int64_t count,
                 BlockSums* sums, SampleTrace* trace, const std::atomic<bool>* cancel) {
  const int n = k.n, d = k.d;
  for (std::int64_t t = 0; t < count; ++t) {
    if (cancel && cancel->load(std::memory_order_relaxed)) return false;
    const bool record = trace && t == count - 1;
    draw_inputs(k, rng, w.x.data(), w.v.data());
    if (record) trace->input.assign(w.x.begin(), w.x.end());

    for (int l = 0; l < k.layers; ++l) {
      if (cancel && l > 0 && cancel->load(std::memory_order_relaxed)) return false;
      float* x = w.x.data();
      float* xn = w.xn.data();
      float* y = w.y.data();
      for (int i = 0; i < n; ++i) normalize_row(k.norm, x + std::size_t(i) * d, y + std::size_t(i) * d, d);  // Y = Norm(X)
      const float* q = y;
      if (k.rope) {
        rotate(k, y, w.q.data());
        q = w.q.data();
      }
      scores(k, q, w.s.data());
      softmax(k, w.s.data(), w.a.data());
      mix(k, w.a.data(), y, x, xn);
      output_cosines(k, xn, w.inv_norm.data(), w.c.data());
      const SampleMetrics m = sample_metrics(k, w.s.data(), w.c.data());
      if (sums) accumulate(k, l, w.s.data(), w.a.data(), w.c.data(), w.inv_norm.data(), m, *sums);
      if (record) record_layer(k, y, xn, w.s.data(), w.a.data(), m, trace->layers[l]);
      std::swap(w.x, w.xn);
    }
    if (sums) sums->count += 1;
  }
  return true;
}

}  // namespace

KeyRanges key_ranges(const Settings& s) {
  KeyRanges r;
  const int n = s.n;
  r.lo.resize(n);
  r.hi.resize(n);
  for (int i = 0; i < n; ++i) {
    switch (s.mask) {
      case MaskKind::causal: r.lo[i] = 0; r.hi[i] = i; break;
      case MaskKind::bidirectional: r.lo[i] = 0; r.hi[i] = n - 1; break;
      case MaskKind::window: r.lo[i] = std::max(0, i - s.window + 1); r.hi[i] = i; break;
    }
    const std::int64_t m = i - r.lo[i];  // keys strictly below the diagonal
    r.recency_triples += m * (m - 1) / 2;
  }
  r.adjacency_rows = std::max(0, n - 2);
  return r;
}

std::int64_t samples_per_block(const Settings& s) {
  // About 2e7 multiply-adds per block: a few milliseconds of work, so snapshots refresh often
  // and cancellation is quick, while the per-block merge stays negligible.
  const double target = 2e7 / std::max(1.0, sample_cost(s));
  if (target < 1.0) return 1;
  const std::int64_t p = std::int64_t(1) << (63 - std::countl_zero(static_cast<std::uint64_t>(target)));
  return std::clamp<std::int64_t>(p, 1, 4096);
}

Simulator::Simulator(const Settings& s)
    : s_(s), layout_(s.n, s.layers), keys_(key_ranges(s)), work_(std::make_unique<Work>(s.n, s.d)) {
  if (s.rope()) {
    // RoPE (Su et al.): pair (2p, 2p+1) of token i turns by i * theta^(-2p/d).
    const int n = s.n, half = s.d / 2;
    rope_cos_.resize(std::size_t(n) * half);
    rope_sin_.resize(std::size_t(n) * half);
    for (int i = 0; i < n; ++i)
      for (int p = 0; p < half; ++p) {
        const double angle = i * std::pow(s.rope_base, -2.0 * p / s.d);
        rope_cos_[std::size_t(i) * half + p] = static_cast<float>(std::cos(angle));
        rope_sin_[std::size_t(i) * half + p] = static_cast<float>(std::sin(angle));
      }
  }
}

Simulator::~Simulator() = default;

namespace {
KernelArgs make_args(const Settings& s, const KeyRanges& keys, const std::vector<float>& rc,
                     const std::vector<float>& rs, const AccumLayout& layout) {
  KernelArgs k{};
  k.n = s.n;
  k.d = s.d;
  k.layers = s.layers;
  k.inv_sqrt_d = static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.d)));
  k.alpha_one = s.alpha >= 1.0;
  k.anisotropy = k.alpha_one ? 0.0f : static_cast<float>(std::sqrt(s.alpha / (1.0 - s.alpha)));
  k.unit_input = s.unit_input;
  k.norm = s.norm;
  k.scale = static_cast<float>(scale_factor(s.scale, s.d));
  k.gamma = static_cast<float>(s.gamma);
  k.rope = s.rope();
  k.bidirectional = s.mask == MaskKind::bidirectional;
  k.lo = keys.lo.data();
  k.hi = keys.hi.data();
  k.rope_cos = rc.data();
  k.rope_sin = rs.data();
  k.triples = keys.recency_triples;
  k.layout = &layout;
  k.zig = &ziggurat_tables();
  return k;
}
}  // namespace

bool Simulator::simulate_block(std::uint64_t block, std::int64_t count, BlockSums& sums,
                               const std::atomic<bool>* cancel) {
  sums.reset();
  BlockStream rng(s_.seed, block);
  const KernelArgs k = make_args(s_, keys_, rope_cos_, rope_sin_, layout_);
  return run_samples(k, *work_, rng, count, &sums, nullptr, cancel);
}

SampleTrace Simulator::trace_sample(std::uint64_t block, std::int64_t index) {
  SampleTrace trace;
  trace.layers.resize(s_.layers);
  BlockStream rng(s_.seed, block);
  const KernelArgs k = make_args(s_, keys_, rope_cos_, rope_sin_, layout_);
  run_samples(k, *work_, rng, index + 1, nullptr, &trace, nullptr);
  return trace;
}

}  // namespace maskscope
