// The steps of the random-weight forward pass (docs/model.md section 7) that act on one sample's
// rows, shared by the per-sample path (random_weights.cpp: per-sample weights, and fixed weights on
// processors without AVX2) and the batched fixed-network path (random_weights_batched.cpp). Always
// inlined into each caller's kernel clones. Internal to core/.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "core/kernel/kernel_steps.hpp"
#include "core/kernel/layer_sums.hpp"
#include "core/kernel/stage_grams.hpp"
#include "core/model/key_ranges.hpp"
#include "core/model/stages.hpp"
#include "core/kernel/network/random_weights.hpp"
#include "core/kernel/network/random_weights_init.hpp"
#include "core/model/token_file.hpp"
#include "core/model/trace.hpp"

namespace maskscope::rw {

constexpr float kNormEps = 1e-5f;  // docs/model.md section 7: PyTorch's LayerNorm default

struct RwArgs {
  int n, d, layers, heads, dh;
  Norm norm;
  float gamma, scale;
  bool rope, mlp, fixed;
  bool attention_output;        // the metrics of the attention sublayer's output (HiddenState::attention)
  bool positions;               // a learned absolute position table (Settings::pos_embedding)
  const ChiLaw* chi_laws;       // Bartlett attention's chi_{d_h - i} (random_weights_bartlett.hpp), or nullptr
  bool bos;                     // position 0 holds the BOS token, id vocab (Settings::first_token fixed)
  const TokenSequences* given;  // Settings::tokens: sample s reads line s mod lines; nullptr: uniform ids
  std::int64_t vocab;
  InitStd init;
  const int* lo;
  const int* hi;
  std::int64_t triples;
  const RopeTables* rope_tables;
  const float* slope_coef;
  const AccumLayout* layout;
  const Network* net;
  std::uint64_t seed;
};

// The arguments every pass of the network shares, from its settings: sizes, norm, residual strength, the score
// scale 1 / sqrt(d_h), RoPE, MLP, and the mask's keys. The sampling kernel (random_weights.cpp) adds its draws,
// readings and sums; the training pass (core/train/) runs its row steps with these alone.
inline RwArgs network_args(const Settings& s, const KeyRanges& keys, const RopeTables& rope) {
  RwArgs k{};
  k.n = s.n;
  k.d = s.d;
  k.layers = s.layers;
  k.heads = s.heads;
  k.dh = s.head_width();
  k.norm = s.norm;
  k.gamma = static_cast<float>(s.gamma);
  k.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(k.dh)));
  k.rope = s.rope();
  k.mlp = s.mlp;
  k.lo = keys.lo.data();
  k.hi = keys.hi.data();
  k.rope_tables = &rope;
  return k;
}

// The layer's keys and sums as the shared layer code (layer_sums.hpp) takes them.
inline kernel::LayerArgs layer_args(const RwArgs& k) {
  return {k.n, k.heads, k.lo, k.hi, k.triples, k.slope_coef, k.layout};
}

// n token ids uniform over the vocabulary, the first draws of the sample's words stream. With a fixed
// first token, position 0 then holds BOS, the id vocab (an embedding row beyond the vocabulary, which no
// other position draws); positions 1..n-1 keep the ids of first_token none (the same draws).
// Given token sequences (docs/model.md section 11): sample s takes line s mod lines, after BOS when it is fixed.
[[gnu::always_inline]] inline void draw_tokens(const RwArgs& k, SampleStream& rng, std::uint64_t sample,
                                               std::int64_t* tokens) {
  if (k.given) {
    const std::int64_t* line = k.given->line_of(sample);
    const int first = k.bos ? 1 : 0;
    for (int i = first; i < k.n; ++i) tokens[i] = line[i - first];
  } else {
    for (int i = 0; i < k.n; ++i) tokens[i] = uniform_below(rng, k.vocab);
  }
  if (k.bos) tokens[0] = k.vocab;
}

// Rows = Norm(rows of x), n_rows rows of width d.
[[gnu::always_inline]] inline void normalize_rows(const RwArgs& k, const float* x, float* y, std::size_t n_rows) {
  for (std::size_t i = 0; i < n_rows; ++i)
    kernel::normalize_row(k.norm, x + i * k.d, y + i * k.d, k.d, kNormEps, float(k.d));
}

// A trained or loaded network's optional parameters (Network, random_weights.hpp), absent (empty) in a drawn
// one, which then keeps its bits: Norm's gain and bias after the normalization, y = g y + b (per column).
[[gnu::always_inline]] inline void norm_affine(const std::vector<float>& gain, const std::vector<float>& bias, float* y,
                                               std::size_t n_rows, int d) {
  if (gain.empty() && bias.empty()) return;
  for (std::size_t i = 0; i < n_rows; ++i) {
    float* row = y + i * std::size_t(d);
    if (!gain.empty())
      for (int c = 0; c < d; ++c) row[c] *= gain[std::size_t(c)];
    if (!bias.empty())
      for (int c = 0; c < d; ++c) row[c] += bias[std::size_t(c)];
  }
}

// A linear map's bias, y = x W + b, on n_rows rows of `cols` columns (nothing when b is empty).
[[gnu::always_inline]] inline void add_bias(const std::vector<float>& b, float* y, std::size_t n_rows, int cols) {
  if (b.empty()) return;
  for (std::size_t i = 0; i < n_rows; ++i) {
    float* row = y + i * std::size_t(cols);
    for (int c = 0; c < cols; ++c) row[c] += b[std::size_t(c)];
  }
}

// RoPE within one head (RoFormer Eq. 34): pair (2p, 2p+1) of token i turns by i theta^(-2p/d_h).
[[gnu::always_inline]] inline void rotate_head(const RwArgs& k, float* rows) {
  float tmp[2 * Limits::rw_d_max];
  for (int i = 0; i < k.n; ++i) {
    float* r = rows + std::size_t(i) * k.dh;
    std::memcpy(tmp, r, sizeof(float) * std::size_t(k.dh));
    kernel::rotate_row(*k.rope_tables, i, tmp, r);
  }
}

// Scratch of one sample's heads: head-major q, k, v (n d each) and a row of d_h zeros.
struct HeadScratch {
  float* qh;
  float* kh;
  float* vh;
  const float* zeros;
};

// Head-major copies of one sample's rows of q | k | v (n x 3d): head h's q, k, v rows contiguous in hs.
[[gnu::always_inline]] inline void split_heads(const RwArgs& k, const float* qkv, const HeadScratch& hs) {
  const int n = k.n, d = k.d, dh = k.dh;
  for (int h = 0; h < k.heads; ++h)
    for (int i = 0; i < n; ++i) {
      const float* row = qkv + std::size_t(i) * 3 * d + std::size_t(h) * dh;
      const std::size_t at = (std::size_t(h) * n + i) * dh;
      std::memcpy(hs.qh + at, row, sizeof(float) * std::size_t(dh));
      std::memcpy(hs.kh + at, row + d, sizeof(float) * std::size_t(dh));
      std::memcpy(hs.vh + at, row + 2 * d, sizeof(float) * std::size_t(dh));
    }
}

// Head h of one sample after split_heads: RoPE on its q and k rows (in place), S = mask(q_h k_h^T / sqrt(d_h)),
// A = softmax(S) (n x n each, 8 floats of slack), and its columns of o = concat_h(A_h v_h) (n x d). The
// training engine (core/train/) runs the same step and keeps q, k, v and A for its backward pass.
[[gnu::always_inline]] inline void attend_head(const RwArgs& k, int h, const HeadScratch& hs, float* S, float* A,
                                               float* o) {
  const int n = k.n, d = k.d, dh = k.dh;
  float* qh = hs.qh + std::size_t(h) * n * dh;
  float* kh = hs.kh + std::size_t(h) * n * dh;
  const float* vh = hs.vh + std::size_t(h) * n * dh;
  if (k.rope) {
    rotate_head(k, qh);
    rotate_head(k, kh);
  }
  for (int i = 0; i < n; ++i)
    kernel::dot_row(qh + std::size_t(i) * dh, kh, dh, k.lo[i], k.hi[i], k.scale, S + std::size_t(i) * n + k.lo[i]);
  kernel::softmax(n, k.lo, k.hi, S, A);
  for (int i = 0; i < n; ++i)
    simd::weighted_rows(A + std::size_t(i) * n, vh, dh, k.lo[i], k.hi[i], 0.0f, hs.zeros,
                        o + std::size_t(i) * d + std::size_t(h) * dh);
}

// One sample's heads from its rows of q | k | v (n x 3d): per head S = mask(q_h k_h^T / sqrt(d_h)),
// A = softmax(S) (S_heads, A_heads: H blocks of n x n, 8 floats of slack), o = concat_h(A_h v_h) (n x d),
// and the heads' metrics into lm.
[[gnu::always_inline]] inline void attend(const RwArgs& k, const float* qkv, const HeadScratch& hs, float* S_heads,
                                          float* A_heads, float* o, kernel::LayerMetrics& lm) {
  const std::size_t nn = std::size_t(k.n) * k.n;
  split_heads(k, qkv, hs);
  kernel::begin_heads(lm);
  const kernel::LayerArgs la = layer_args(k);
  for (int h = 0; h < k.heads; ++h) {
    float* S = S_heads + std::size_t(h) * nn;
    float* A = A_heads + std::size_t(h) * nn;
    attend_head(k, h, hs, S, A, o);
    kernel::head_metrics(la, h, S, A, lm);
  }
}

// Scratch of one sample's metrics: the cosine matrix C (n x n + 8), 1 / ||x_i|| (n), norms (n + 8)
// and the head-mean maps (n x n each).
struct MetricScratch {
  float* c;
  float* inv_norm;
  float* norms;
  float* s_mean;
  float* a_mean;
};

// Cosines, norms, adjacency and norm adjacency of the hidden states x (docs/model.md sections 3, 4, 7).
[[gnu::always_inline]] inline void hidden_metrics(const RwArgs& k, const MetricScratch& ms, const float* x,
                                                  kernel::LayerMetrics& lm) {
  kernel::hidden_metrics(k.n, k.d, x, ms.inv_norm, ms.c, ms.norms, lm);
}

// Layer l's sums (the embeddings' block without maps) from the sample's S, A and its hidden_metrics.
[[gnu::always_inline]] inline void accumulate(const RwArgs& k, const MetricScratch& ms, int l, bool maps,
                                              const float* S_heads, const float* A_heads,
                                              const kernel::LayerMetrics& lm, BlockSums& sums) {
  kernel::accumulate_layer(layer_args(k), l, maps, S_heads, A_heads, ms.s_mean, ms.a_mean, ms.c, ms.inv_norm, lm, sums);
}

// Stage `st` of layer l (rows n x d: x, Norm(x), concat_h(A_h v_h), the attention output, h, x') into the
// sums when the run has it (docs/model.md section 12).
[[gnu::always_inline]] inline void add_stage(const RwArgs& k, const kernel::StageScratch& ss, int l, Stage st,
                                             const float* rows, BlockSums& sums) {
  kernel::add_stage(*k.layout, l, int(st), rows, k.d, 1, ss, sums.sum.data(), sums.sumsq.data());
}

// The queries and keys of layer l after attend (head-major, RoPE'd): <q_i, q_j> over the heads concatenated,
// sum_h <q_h,i, q_h,j>, as the d columns of W_Q make them.
[[gnu::always_inline]] inline void add_head_stages(const RwArgs& k, const kernel::StageScratch& ss, int l,
                                                   const HeadScratch& hs, BlockSums& sums) {
  kernel::add_stage(*k.layout, l, int(Stage::query), hs.qh, k.dh, k.heads, ss, sums.sum.data(), sums.sumsq.data());
  kernel::add_stage(*k.layout, l, int(Stage::key), hs.kh, k.dh, k.heads, ss, sums.sum.data(), sums.sumsq.data());
}

// The embeddings of a traced sample (layer 0).
inline void record_input(const RwArgs& k, const float* x, const std::int64_t* tokens, const kernel::LayerMetrics& lm,
                         SampleTrace& trace) {
  const std::size_t nd = std::size_t(k.n) * k.d;
  trace.dim = k.d;
  trace.input.assign(x, x + nd);
  trace.tokens.assign(tokens, tokens + k.n);
  trace.embedding_adjacency = lm.adjacency.value;
  trace.embedding_norm_adjacency = lm.norm_adjacency.value;
}

// One layer of a traced sample: Norm(x) (y), the output x', each head's S and the head means.
inline void record_layer(const RwArgs& k, const float* y, const float* x_out, const float* S_heads,
                         const float* A_heads, const kernel::LayerMetrics& lm, LayerTrace& lt) {
  const int n = k.n, H = k.heads;
  const std::size_t nn = std::size_t(n) * n, nd = std::size_t(n) * k.d;
  lt.normalized.assign(y, y + nd);
  lt.output.assign(x_out, x_out + nd);
  lt.scores.assign(nn, std::numeric_limits<float>::quiet_NaN());
  lt.weights.assign(nn, 0.0f);
  lt.head_scores.assign(H, std::vector<float>(nn, std::numeric_limits<float>::quiet_NaN()));
  for (int h = 0; h < H; ++h)
    for (int i = 0; i < n; ++i)
      for (int j = k.lo[i]; j <= k.hi[i]; ++j) {
        const std::size_t e = std::size_t(i) * n + j;
        const float sv = S_heads[std::size_t(h) * nn + e];
        lt.head_scores[h][e] = sv;
        lt.scores[e] = (h == 0 ? 0.0f : lt.scores[e]) + sv / static_cast<float>(H);
        lt.weights[e] += A_heads[std::size_t(h) * nn + e] / static_cast<float>(H);
      }
  kernel::record_metrics(lm, lt);
}

}  // namespace maskscope::rw

namespace maskscope {

// The buffers of a RandomWeightsModel: rows of `batch` samples (1 on the per-sample path), each sample's
// heads and metrics, and the per-sample draws' Cholesky scratch (per-sample weights only).
struct RandomWeightsModel::Work {
  int n, d, heads, dh, batch;
  std::vector<float> x, xn, y, qkv, o, att, hres, z, u;  // batch n rows each (x: d, qkv: 3d, u: 4d columns)
  std::vector<float> s, a;                               // batch x heads blocks of n x n (+ 8 floats of slack)
  std::vector<float> qh, kh, vh, s_mean, a_mean, c, inv_norm, norms, zeros, noise, chol, factor;
  std::vector<float> stage_g, stage_c, stage_inv;  // one sample's stage Gram matrices (stage_grams.hpp)
  std::vector<double> gram, ld;
  std::vector<std::int64_t> tokens;           // batch n ids
  std::vector<kernel::LayerMetrics> metrics;  // one per sample of the batch
  Work(int n_, int d_, int heads_, int batch_);
  std::size_t nd() const { return std::size_t(n) * d; }
  std::size_t nn() const { return std::size_t(n) * n; }
  rw::HeadScratch heads_scratch() { return {qh.data(), kh.data(), vh.data(), zeros.data()}; }
  rw::MetricScratch metric_scratch() { return {c.data(), inv_norm.data(), norms.data(), s_mean.data(), a_mean.data()}; }
  kernel::StageScratch stage_scratch() { return {stage_g.data(), stage_c.data(), stage_inv.data()}; }
};

}  // namespace maskscope
