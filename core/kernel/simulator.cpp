// The per-sample forward pass (docs/model.md sections 1-3). The hot loop is compiled twice, for
// x86-64-v3 (AVX2 + FMA) and for baseline x86-64, and chosen at run time by the loader (ifunc),
// so one binary runs everywhere and uses wide vectors where it can. On AVX2 and AVX-512 processors
// the lane kernel (lane_kernel.hpp) runs the settings it suits instead.
#include "core/kernel/simulator.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <thread>
#include <utility>

#include "core/model/cost.hpp"
#include "core/random/random_stream.hpp"
#include "core/kernel/kernel_args.hpp"
#include "core/kernel/lane/lane_kernel.hpp"
#include "core/kernel/kernel_steps.hpp"
#include "core/kernel/network/random_weights.hpp"
#include "core/kernel/simd.hpp"

namespace maskscope {

namespace {

using kernel::dot_row;
using simd::dot;

// The steps of one sample, in the order of docs/model.md sections 1-4. Each is always inlined into
// run_samples, so the x86-64-v3 clone of the kernel gets wide vectors in every step.

// Y = Norm(X) row by row. In the reduced basis LayerNorm's centring is the removal of coordinate 0
// (the all-ones direction), and its variance is the rest's squared norm over the model's d.
[[gnu::always_inline]] inline void normalize(const KernelArgs& k, const float* x, float* y) {
  const int n = k.n, d = k.d;
  if (k.basis.reduced && k.norm == Norm::layernorm) {
    for (int i = 0; i < n; ++i) {
      const float* xi = x + std::size_t(i) * d;
      float* yi = y + std::size_t(i) * d;
      const float ss = std::max(0.0f, simd::dot(xi, xi, d) - xi[0] * xi[0]);
      const float f = 1.0f / std::sqrt(ss / float(k.d_model) + kNormEps);
      kernel::shift_scale(xi, 0.0f, f, yi, d);
      yi[0] = 0.0f;
    }
    return;
  }
  for (int i = 0; i < n; ++i)
    kernel::normalize_row(k.norm, x + std::size_t(i) * d, y + std::size_t(i) * d, d, kNormEps, float(k.d_model));
}

// Q = K = Rope(Y) (Su et al., RoFormer Eq. 34): pair (2p, 2p+1) of token i turns by i theta^(-2p/d).
// Values are not rotated (docs/model.md section 2).
[[gnu::always_inline]] inline void rotate(const KernelArgs& k, const float* y, float* q) {
  for (int i = 0; i < k.n; ++i) {
    const float* yi = y + std::size_t(i) * k.d;
    float* qi = q + std::size_t(i) * k.d;
    kernel::rotate_row(*k.rope_tables, i, yi, qi);
  }
}

// S = Mask(scale Q K^T) (docs/model.md section 2): the lower triangle within each row's key range,
// mirrored when bidirectional (Q = K, so S is symmetric).
[[gnu::always_inline]] inline void scores(const KernelArgs& k, const float* q, float* S) {
  const int n = k.n, d = k.d;
  for (int i = 0; i < n; ++i) dot_row(q + std::size_t(i) * d, q, d, k.lo[i], i, k.scale, S + i * n + k.lo[i]);
  if (k.bidirectional)
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j) S[i * n + j] = S[j * n + i];
}

// X' = A Y + gamma X (docs/model.md section 2; gamma = residual strength).
[[gnu::always_inline]] inline void mix(const KernelArgs& k, const float* A, const float* y, const float* x, float* xn) {
  for (int i = 0; i < k.n; ++i)
    simd::weighted_rows(A + std::size_t(i) * k.n, y, k.d, k.lo[i], k.hi[i], k.gamma, x + std::size_t(i) * k.d,
                        xn + std::size_t(i) * k.d);
}

// Rows [from, to)'s pair counts: recency pairs of S (when `recency`) and adjacency pairs of C (rows >= 2).
MASKSCOPE_KERNEL_CLONES
void row_pairs(int n, const int* lo, bool recency, const float* S, const float* C, int from, int to, PairCounts* rec,
               PairCounts* adj) {
  for (int i = from; i < to; ++i) {
    if (recency) rec[i] = ordered_pairs(S + std::size_t(i) * n, lo[i], i);
    if (i >= 2) adj[i] = ordered_pairs(C + std::size_t(i) * n, 0, i);
  }
}

// docs/model.md sections 4 and 7, one sample: recency probability of S, adjacency score of the cosine
// matrix C, and norm adjacency of the output norms ||x_i|| (into `norms`, 8 floats of slack).
// `split`: the O(n^3) pair counts of the later rows go to a second thread (a new run's first
// sample, while the other workers wait for its picture: Run's first_picture_alone). Counts are
// integers and rows are averaged in order, so the bits are those of one thread.
[[gnu::always_inline]] inline SampleMetrics sample_metrics(const KernelArgs& k, const float* S, const float* A,
                                                           const float* C, const float* inv_norm, float* norms,
                                                           SampleWork* split = nullptr) {
  const int n = k.n;
  SampleMetrics m;
  m.score_slope = kernel::offset_slope(n, k.lo, k.hi, k.slope_coef, S);
  m.weight_slope = kernel::offset_slope(n, k.lo, k.hi, k.slope_coef, A);
  m.sink_weight = kernel::sink_weight(n, k.lo, A);
  if (split) {
    split->recency_rows.assign(std::size_t(n), PairCounts{});
    split->adjacency_rows.assign(std::size_t(n), PairCounts{});
    PairCounts* rec = split->recency_rows.data();
    PairCounts* adj = split->adjacency_rows.data();
    const bool recency = k.triples > 0;
    const int mid = static_cast<int>(0.794 * n);  // row i costs ~i^2: rows [0, 0.794 n) are half the pairs
    std::thread later(row_pairs, n, k.lo, recency, S, C, mid, n, rec, adj);
    row_pairs(n, k.lo, recency, S, C, 0, mid, rec, adj);
    later.join();
    m.rp = kernel::recency_from(n, k.triples, [&](int i) { return rec[i]; });
    m.adjacency = kernel::adjacency_from(n, [&](int r) { return adj[r]; });
  } else {
    m.rp = kernel::recency_of(n, k.lo, k.triples, S);
    m.adjacency = kernel::adjacency_of(n, [&](int r) { return C + std::size_t(r) * n; });
  }
  m.norm_adjacency = kernel::norm_adjacency_of(n, inv_norm, norms);
  return m;
}

// Adds this layer's S, A, C, norms and metrics (and their squares) to the block sums. kFirst: the
// block's first sample, which writes every value of the layer (kernel::add_value), absent metrics as 0.
// kSquares false: a one-sample block with its squares implied (BlockSums::squares_implied).
template <bool kFirst, bool kSquares = true>
[[gnu::always_inline]] inline void accumulate(const KernelArgs& k, int l, const float* S, const float* A,
                                              const float* C, const float* inv_norm, const SampleMetrics& m,
                                              BlockSums& sums) {
  const int n = k.n;
  const AccumLayout& L = *k.layout;
  double* sum = sums.sum.data();
  double* sq = sums.sumsq.data();
  kernel::add_masked_map<kFirst, kSquares>(sum, sq, L.score(l), n, k.lo, k.hi, S);
  kernel::add_masked_map<kFirst, kSquares>(sum, sq, L.weight(l), n, k.lo, k.hi, A);
  kernel::add_lower<kFirst, kSquares>(sum, sq, L.cosine(l), n, C);
  kernel::add_norms<kFirst, kSquares>(sum, sq, L.norm(l), n, inv_norm);
  kernel::add_value<kFirst, kSquares>(sum, sq, L.score_slope(l), m.score_slope);
  kernel::add_value<kFirst, kSquares>(sum, sq, L.weight_slope(l), m.weight_slope);
  kernel::add_value<kFirst, kSquares>(sum, sq, L.sink_weight(l), m.sink_weight);
  const bool rp = k.triples > 0, adjacency = n >= 3;
  if (rp || kFirst) {
    kernel::add_value<kFirst, kSquares>(sum, sq, L.rp(l), rp ? m.rp.value : 0.0);
    kernel::add_value<kFirst, kSquares>(sum, sq, L.rp_ties(l), rp ? m.rp.ties : 0.0);
  }
  if (adjacency || kFirst) {
    kernel::add_value<kFirst, kSquares>(sum, sq, L.adjacency(l), adjacency ? m.adjacency.value : 0.0);
    kernel::add_value<kFirst, kSquares>(sum, sq, L.adjacency_ties(l), adjacency ? m.adjacency.ties : 0.0);
    kernel::add_value<kFirst, kSquares>(sum, sq, L.norm_adjacency(l), adjacency ? m.norm_adjacency.value : 0.0);
    kernel::add_value<kFirst, kSquares>(sum, sq, L.norm_adjacency_ties(l), adjacency ? m.norm_adjacency.ties : 0.0);
  }
}

// Runs `count` samples from `rng`. Accumulates into `sums` when given (its first sample writes every
// value, so `sums` need only have the layout's size); records the last sample into `trace` when
// given. Returns false if cancelled (checked every sample and layer).
MASKSCOPE_KERNEL_CLONES
bool run_samples(const KernelArgs& k, SampleWork& w, std::uint64_t first_sample, std::int64_t count, BlockSums* sums,
                 SampleTrace* trace, const std::atomic<bool>* cancel, std::vector<SampleTrace>* every = nullptr,
                 bool implied_squares = false, bool split_first = false, bool append = false) {
  const int n = k.n, d = k.d;
  for (std::int64_t t = 0; t < count; ++t) {
    if (cancel && cancel->load(std::memory_order_relaxed)) return false;
    if (every) trace = &(*every)[std::size_t(t)];
    const bool record = trace && (every || t == count - 1);
    SampleStream rng(k.seed, first_sample + std::uint64_t(t));
    draw_inputs(k, rng, w.x.data(), w.v.data(), w.draws);
    if (record) {
      trace->dim = k.d;
      trace->input.assign(w.x.begin(), w.x.end());
    }

    for (int l = 0; l < k.layers; ++l) {
      if (cancel && l > 0 && cancel->load(std::memory_order_relaxed)) return false;
      float* x = w.x.data();
      float* xn = w.xn.data();
      float* y = w.y.data();
      normalize(k, x, y);  // Y = Norm(X)
      const float* q = y;
      if (k.rope) {
        rotate(k, y, w.q.data());
        q = w.q.data();
      }
      scores(k, q, w.s.data());
      kernel::softmax(n, k.lo, k.hi, w.s.data(), w.a.data());
      mix(k, w.a.data(), y, x, xn);
      kernel::output_cosines(n, d, xn, w.inv_norm.data(), w.c.data());
      const SampleMetrics m = sample_metrics(k, w.s.data(), w.a.data(), w.c.data(), w.inv_norm.data(), w.norms.data(),
                                             split_first && t == 0 ? &w : nullptr);
      if (sums && t == 0 && implied_squares)
        accumulate<true, false>(k, l, w.s.data(), w.a.data(), w.c.data(), w.inv_norm.data(), m, *sums);
      else if (sums && t == 0 && !append)
        accumulate<true>(k, l, w.s.data(), w.a.data(), w.c.data(), w.inv_norm.data(), m, *sums);
      else if (sums) accumulate<false>(k, l, w.s.data(), w.a.data(), w.c.data(), w.inv_norm.data(), m, *sums);
      if (sums && k.layout->stages) {
        if (t == 0 && implied_squares) add_stage_grams<true, false>(k, w, l, x, y, q, w.a.data(), xn, *sums);
        else if (t == 0) add_stage_grams<true>(k, w, l, x, y, q, w.a.data(), xn, *sums);
        else add_stage_grams(k, w, l, x, y, q, w.a.data(), xn, *sums);
      }
      if (record) record_layer(k, y, xn, w.s.data(), w.a.data(), m, trace->layers[l]);
      std::swap(w.x, w.xn);
    }
    if (sums) sums->count += 1;
  }
  return true;
}

}  // namespace

namespace {
KernelArgs make_args(const Settings& s, const InputBasis& basis, const KeyRanges& keys, const RopeTables& rope,
                     const AccumLayout& layout, const std::vector<ChiLaw>& chi_laws) {
  KernelArgs k{};
  k.n = s.n;
  k.basis = basis;
  k.d = k.basis.dim;
  k.d_model = s.d;
  k.layers = s.layers;
  k.seed = s.seed;
  k.inv_sqrt_d = static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.d)));
  k.alpha_one = s.alpha >= 1.0;
  k.anisotropy = k.alpha_one ? 0.0f : static_cast<float>(std::sqrt(s.alpha / (1.0 - s.alpha)));
  k.unit_input = s.unit_input;
  k.first_token = s.fixed_first_token();
  k.norm = s.norm;
  k.scale = static_cast<float>(scale_factor(s.scale, s.d));
  k.gamma = static_cast<float>(s.gamma);
  k.rope = s.rope();
  k.bidirectional = s.mask == MaskKind::bidirectional;
  k.lo = keys.lo.data();
  k.hi = keys.hi.data();
  k.rope_tables = &rope;
  k.slope_coef = keys.slope_coef.data();
  k.triples = keys.recency_triples;
  k.layout = &layout;
  k.chi_laws = chi_laws.data();
  return k;
}
}  // namespace

Simulator::Simulator(const Settings& s, bool explicit_inputs, Kernel kernel, std::shared_ptr<const Network> network)
    : s_(s), basis_(input_basis(s, explicit_inputs)), layout_(accum_layout(s)), keys_(key_ranges(s)) {
  if (s.random_weights()) {
    random_weights_ =
        std::make_unique<RandomWeightsModel>(s_, keys_, layout_, kernel != Kernel::per_sample, std::move(network));
    return;
  }
  work_ = std::make_unique<SampleWork>(s.n, basis_, s.stage_grams);
  for (int r = 0; r < basis_.m; ++r) chi_laws_.emplace_back(double(basis_.k - r));
  if (s.rope()) rope_ = rope_tables(s.n, s.d, s.rope_base, s.rope_scramble);
  if (runs_in_lanes(s, basis_, kernel))
    lanes_ = std::make_unique<LaneKernel>(make_args(s_, basis_, keys_, rope_, layout_, chi_laws_));
}

Simulator::~Simulator() = default;

const Network* Simulator::network() const { return random_weights_ ? random_weights_->network() : nullptr; }

bool Simulator::simulate_block(std::uint64_t first_sample, std::int64_t count, BlockSums& sums,
                               const std::atomic<bool>* cancel, BlockOptions options) {
  if (options.append && random_weights_)
    throw std::logic_error("simulate_block: random weights compute a block in one call");
  const bool implied_squares = options.implied_squares && count == 1 && !random_weights_ && !lanes_ && !options.append;
  if (implied_squares) {
    // One sample: its values alone; the squares follow from them (BlockSums::squares_implied).
    if (sums.sum.size() != layout_.total()) sums.sum = BigVector(layout_.total());
    if (!sums.sumsq.empty()) sums.sumsq = BigVector();
    sums.count = 0;
  } else if (options.append) {
    if (sums.sum.size() != layout_.total() || sums.sumsq.size() != layout_.total())
      throw std::logic_error("simulate_block: nothing to append to");
  } else if (random_weights_ || lanes_ || sums.sum.size() != layout_.total() || sums.sumsq.size() != layout_.total()) {
    sums.reset(layout_.total());
  } else {
    sums.count = 0;  // the per-sample kernel's first sample writes every value: no pass of zeros (25 MB at n 512)
  }
  if (random_weights_) return random_weights_->run(first_sample, count, &sums, nullptr, cancel);
  const KernelArgs k = make_args(s_, basis_, keys_, rope_, layout_, chi_laws_);
  if (lanes_) return lanes_->run(k, *work_, first_sample, count, &sums, nullptr, cancel);
  return run_samples(k, *work_, first_sample, count, &sums, nullptr, cancel, nullptr, implied_squares,
                     options.split_first_sample, options.append);
}

std::vector<SampleTrace> Simulator::trace_block(std::uint64_t first_sample, std::int64_t count) {
  std::vector<SampleTrace> traces(static_cast<std::size_t>(count));
  for (auto& t : traces) t.layers.resize(s_.layers);
  if (random_weights_) {  // a fixed network's batches once each, not once per sample
    random_weights_->run(first_sample, count, nullptr, traces.data(), nullptr, true);
    return traces;
  }
  const KernelArgs k = make_args(s_, basis_, keys_, rope_, layout_, chi_laws_);
  if (lanes_) lanes_->run(k, *work_, first_sample, count, nullptr, &traces, nullptr);
  else run_samples(k, *work_, first_sample, count, nullptr, nullptr, nullptr, &traces);
  return traces;
}

SampleTrace Simulator::trace_sample(std::uint64_t sample) {
  SampleTrace trace;
  trace.layers.resize(s_.layers);
  if (random_weights_) {
    random_weights_->run(sample, 1, nullptr, &trace, nullptr);
    return trace;
  }
  const KernelArgs k = make_args(s_, basis_, keys_, rope_, layout_, chi_laws_);
  if (lanes_) {
    std::vector<SampleTrace> one(1, std::move(trace));
    lanes_->run(k, *work_, sample, 1, nullptr, &one, nullptr);
    return std::move(one[0]);
  }
  run_samples(k, *work_, sample, 1, nullptr, &trace, nullptr);
  return trace;
}

}  // namespace maskscope
