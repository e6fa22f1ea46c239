// The random-weight transformer's forward pass (docs/model.md section 7). Like the parameter-free
// kernel it is compiled for x86-64-v3 and baseline x86-64 and chosen at run time; the matrix
// products are a register-blocked kernel on the same 8-lane vectors (simd.hpp).
#include "core/kernel/random_weights.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "core/kernel/kernel_steps.hpp"
#include "core/kernel/layer_sums.hpp"
#include "core/kernel/random_weights_init.hpp"
#include "core/kernel/random_weights_math.hpp"
#include "core/model/key_ranges.hpp"
#include "core/model/trace.hpp"

namespace maskscope {

namespace {

constexpr float kNormEps = 1e-5f;  // docs/model.md section 7: PyTorch's LayerNorm default

using rw::draw_entries;
using rw::gelu_inplace;
using rw::gemm;
using rw::init_of;
using rw::InitStd;
using rw::uniform_below;

}  // namespace

float gelu(float x) {
  float v[8] = {x};
  gelu_inplace(v, 1);
  return v[0];
}

struct RandomWeightsModel::Work {
  int n, d, heads, dh;
  std::vector<float> x, xn, y, qkv, qh, kh, vh, o, att, hres, z, u, s, a, s_mean, a_mean, c, inv_norm, norms, zeros,
      noise, chol;
  std::vector<double> gram, ld;
  std::vector<std::int64_t> tokens;
  Work(int n_, int d_, int heads_)
      : n(n_),
        d(d_),
        heads(heads_),
        dh(d_ / heads_),
        x(nd()),
        xn(nd()),
        y(nd()),
        qkv(3 * nd()),
        qh(nd()),
        kh(nd()),
        vh(nd()),
        o(nd()),
        att(nd()),
        hres(nd()),
        z(nd()),
        u(4 * nd()),
        s(std::size_t(heads_) * nn() + 8),
        a(std::size_t(heads_) * nn() + 8),
        s_mean(nn() + 8),
        a_mean(nn()),
        c(nn() + 8),
        inv_norm(n_),
        norms(n_ + 8),
        zeros(d_),
        noise(4 * nd()),
        chol(nn()),
        gram(nn()),
        ld(nn()),
        tokens(n_) {}
  std::size_t nd() const { return std::size_t(n) * d; }
  std::size_t nn() const { return std::size_t(n) * n; }
};

namespace {

struct RwArgs {
  int n, d, layers, heads, dh;
  Norm norm;
  float gamma, scale;
  bool rope, mlp, fixed, positions;  // positions: a learned absolute position table (Settings::pos_embedding)
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

// out (n x m) = Y W for a fresh W (k x m) with entries iid N(mu, s^2), drawn through its action on
// the rows of Y only. The columns of Y W are independent N(mu (Y 1), s^2 Y Y^T), which is the law
// of mu (Y 1) 1^T + s L Z with L L^T = Y Y^T and Z (n x m) iid N(0, 1): exact in distribution,
// n m normals instead of k m, O(n^2 (k + m)) instead of O(n k m). L is the Cholesky factor of the
// Gram matrix in double; a direction with no variance left (a repeated token's row) gets a zero column.
[[gnu::always_inline]] inline void random_product(const RwArgs& k, RandomWeightsModel::Work& w, SampleStream& rng,
                                                  const float* Y, int inner, int m, float mu, float s, float* out) {
  const int n = k.n;
  double* G = w.gram.data();
  double* L = w.ld.data();
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j)
      G[i * n + j] = simd::dot(Y + std::size_t(i) * inner, Y + std::size_t(j) * inner, inner);
  for (int j = 0; j < n; ++j) {
    double djj = G[j * n + j];
    for (int p = 0; p < j; ++p) djj -= L[j * n + p] * L[j * n + p];
    if (!(djj > 1e-7 * G[j * n + j])) {
      for (int i = j; i < n; ++i) L[i * n + j] = 0.0;
      continue;
    }
    const double ljj = std::sqrt(djj);
    L[j * n + j] = ljj;
    for (int i = j + 1; i < n; ++i) {
      double v = G[i * n + j];
      for (int p = 0; p < j; ++p) v -= L[i * n + p] * L[j * n + p];
      L[i * n + j] = v / ljj;
    }
  }
  float* chol = w.chol.data();
  for (int i = 0; i < n; ++i)
    for (int p = 0; p < n; ++p) chol[i * n + p] = p <= i ? static_cast<float>(s * L[i * n + p]) : 0.0f;
  float* noise = w.noise.data();
  rng.normals(noise, std::size_t(n) * m);
  gemm(chol, n, n, noise, m, out);
  if (mu != 0.0f)
    for (int i = 0; i < n; ++i) {
      const float shift = mu * kernel::sum_of(Y + std::size_t(i) * inner, inner);
      float* row = out + std::size_t(i) * m;
      for (int e = 0; e < m; ++e) row[e] += shift;
    }
}

// out = Y W with the network's W (fixed) or a fresh draw (per_sample).
[[gnu::always_inline]] inline void product(const RwArgs& k, RandomWeightsModel::Work& w, SampleStream& rng,
                                           const float* Y, int inner, const std::vector<float>* fixed, int m, float s,
                                           float* out) {
  if (k.fixed) gemm(Y, k.n, inner, fixed->data(), m, out);
  else random_product(k, w, rng, Y, inner, m, k.init.mean, s, out);
}

// x_i = E[t_i] for n ids uniform over the vocabulary. Per sample, only the rows the sequence uses
// are drawn, one per distinct id in order of first appearance (the same law as a full table).
[[gnu::always_inline]] inline void embed_tokens(const RwArgs& k, RandomWeightsModel::Work& w, SampleStream& rng) {
  const int n = k.n, d = k.d;
  for (int i = 0; i < n; ++i) w.tokens[i] = uniform_below(rng, k.vocab);
  for (int i = 0; i < n; ++i) {
    float* xi = w.x.data() + std::size_t(i) * d;
    if (k.fixed) {
      std::memcpy(xi, k.net->embed.data() + std::size_t(w.tokens[i]) * d, sizeof(float) * std::size_t(d));
      continue;
    }
    int first = i;
    for (int p = 0; p < i; ++p)
      if (w.tokens[p] == w.tokens[i]) {
        first = p;
        break;
      }
    if (first < i) std::memcpy(xi, w.x.data() + std::size_t(first) * d, sizeof(float) * std::size_t(d));
    else draw_entries(rng, k.init.mean, k.init.embed_std, xi, std::size_t(d));
  }
  if (!k.positions) return;  // x_i += P[i]: the network's table, or a fresh one per sample
  const float* P = k.fixed ? k.net->pos.data() : w.noise.data();
  if (!k.fixed) draw_entries(rng, k.init.mean, k.init.pos_std, w.noise.data(), w.nd());
  for (std::size_t e = 0; e < w.nd(); ++e) w.x[e] += P[e];
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

using kernel::LayerMetrics;

// The layer's keys and sums as the shared layer code (layer_sums.hpp) takes them.
inline kernel::LayerArgs layer_args(const RwArgs& k) {
  return {k.n, k.heads, k.lo, k.hi, k.triples, k.slope_coef, k.layout};
}

// h = gamma x + Attn(Norm(x)): per head S = mask(q k^T / sqrt(d_h)), A = softmax(S), out = concat(A v) W_O.
[[gnu::always_inline]] inline void attention(const RwArgs& k, RandomWeightsModel::Work& w, SampleStream& rng,
                                             const Network::Block* block, LayerMetrics& lm) {
  const int n = k.n, d = k.d, dh = k.dh, H = k.heads;
  const std::size_t nn = std::size_t(n) * n;
  for (int i = 0; i < n; ++i)
    kernel::normalize_row(k.norm, w.x.data() + std::size_t(i) * d, w.y.data() + std::size_t(i) * d, d, kNormEps,
                          float(d));
  product(k, w, rng, w.y.data(), d, block ? &block->wqkv : nullptr, 3 * d, k.init.std, w.qkv.data());
  for (int h = 0; h < H; ++h)  // head-major copies: head h's q, k, v rows contiguous
    for (int i = 0; i < n; ++i) {
      const float* row = w.qkv.data() + std::size_t(i) * 3 * d + std::size_t(h) * dh;
      const std::size_t at = (std::size_t(h) * n + i) * dh;
      std::memcpy(w.qh.data() + at, row, sizeof(float) * std::size_t(dh));
      std::memcpy(w.kh.data() + at, row + d, sizeof(float) * std::size_t(dh));
      std::memcpy(w.vh.data() + at, row + 2 * d, sizeof(float) * std::size_t(dh));
    }
  kernel::begin_heads(lm);
  const kernel::LayerArgs la = layer_args(k);
  for (int h = 0; h < H; ++h) {
    float* qh = w.qh.data() + std::size_t(h) * n * dh;
    float* kh = w.kh.data() + std::size_t(h) * n * dh;
    const float* vh = w.vh.data() + std::size_t(h) * n * dh;
    float* S = w.s.data() + std::size_t(h) * nn;
    float* A = w.a.data() + std::size_t(h) * nn;
    if (k.rope) {
      rotate_head(k, qh);
      rotate_head(k, kh);
    }
    for (int i = 0; i < n; ++i)
      kernel::dot_row(qh + std::size_t(i) * dh, kh, dh, k.lo[i], k.hi[i], k.scale, S + std::size_t(i) * n + k.lo[i]);
    kernel::softmax(n, k.lo, k.hi, S, A);
    for (int i = 0; i < n; ++i)
      simd::weighted_rows(A + std::size_t(i) * n, vh, dh, k.lo[i], k.hi[i], 0.0f, w.zeros.data(),
                          w.o.data() + std::size_t(i) * d + std::size_t(h) * dh);
    kernel::head_metrics(la, h, S, A, lm);
  }
  product(k, w, rng, w.o.data(), d, block ? &block->wo : nullptr, d, k.init.residual_std, w.att.data());
  for (std::size_t e = 0; e < w.nd(); ++e) w.hres[e] = k.gamma * w.x[e] + w.att[e];
}

// x' = h + GELU(Norm(h) W_1) W_2 (or x' = h without the MLP).
[[gnu::always_inline]] inline void mlp(const RwArgs& k, RandomWeightsModel::Work& w, SampleStream& rng,
                                       const Network::Block* block) {
  const int n = k.n, d = k.d;
  if (!k.mlp) {
    std::copy(w.hres.begin(), w.hres.end(), w.xn.begin());
    return;
  }
  for (int i = 0; i < n; ++i)
    kernel::normalize_row(k.norm, w.hres.data() + std::size_t(i) * d, w.z.data() + std::size_t(i) * d, d, kNormEps,
                          float(d));
  product(k, w, rng, w.z.data(), d, block ? &block->w1 : nullptr, 4 * d, k.init.std, w.u.data());
  gelu_inplace(w.u.data(), 4 * w.nd());
  product(k, w, rng, w.u.data(), 4 * d, block ? &block->w2 : nullptr, d, k.init.residual_std, w.att.data());
  for (std::size_t e = 0; e < w.nd(); ++e) w.xn[e] = w.hres[e] + w.att[e];
}

// Cosines, norms, adjacency and norm adjacency of the hidden states x (docs/model.md sections 3, 4, 7).
[[gnu::always_inline]] inline void hidden_metrics(const RwArgs& k, RandomWeightsModel::Work& w, const float* x,
                                                  LayerMetrics& lm) {
  kernel::hidden_metrics(k.n, k.d, x, w.inv_norm.data(), w.c.data(), w.norms.data(), lm);
}

[[gnu::always_inline]] inline void accumulate(const RwArgs& k, RandomWeightsModel::Work& w, int l, bool maps,
                                              const LayerMetrics& lm, BlockSums& sums) {
  kernel::accumulate_layer(layer_args(k), l, maps, w.s.data(), w.a.data(), w.s_mean.data(), w.a_mean.data(), w.c.data(),
                           w.inv_norm.data(), lm, sums);
}

void record_layer(const RwArgs& k, const RandomWeightsModel::Work& w, const LayerMetrics& lm, LayerTrace& lt) {
  const int n = k.n, H = k.heads;
  const std::size_t nn = std::size_t(n) * n;
  lt.normalized = w.y;
  lt.output = w.xn;
  lt.scores.assign(nn, std::numeric_limits<float>::quiet_NaN());
  lt.weights.assign(nn, 0.0f);
  lt.head_scores.assign(H, std::vector<float>(nn, std::numeric_limits<float>::quiet_NaN()));
  for (int h = 0; h < H; ++h)
    for (int i = 0; i < n; ++i)
      for (int j = k.lo[i]; j <= k.hi[i]; ++j) {
        const std::size_t e = std::size_t(i) * n + j;
        const float sv = w.s[std::size_t(h) * nn + e];
        lt.head_scores[h][e] = sv;
        lt.scores[e] = (h == 0 ? 0.0f : lt.scores[e]) + sv / static_cast<float>(H);
        lt.weights[e] += w.a[std::size_t(h) * nn + e] / static_cast<float>(H);
      }
  kernel::record_metrics(lm, lt);
}

MASKSCOPE_KERNEL_CLONES
bool run_samples(const RwArgs& k, RandomWeightsModel::Work& w, std::uint64_t first_sample, std::int64_t count,
                 BlockSums* sums, SampleTrace* trace, const std::atomic<bool>* cancel) {
  for (std::int64_t t = 0; t < count; ++t) {
    if (cancel && cancel->load(std::memory_order_relaxed)) return false;
    const bool record = trace && t == count - 1;
    SampleStream rng(k.seed, first_sample + std::uint64_t(t));
    embed_tokens(k, w, rng);
    LayerMetrics lm{};
    hidden_metrics(k, w, w.x.data(), lm);  // layer 0: the embeddings
    if (sums) accumulate(k, w, k.layout->embedding_block(), false, lm, *sums);
    if (record) {
      trace->dim = k.d;
      trace->input = w.x;
      trace->tokens = w.tokens;
      trace->embedding_adjacency = lm.adjacency.value;
      trace->embedding_norm_adjacency = lm.norm_adjacency.value;
    }
    for (int l = 0; l < k.layers; ++l) {
      if (cancel && l > 0 && cancel->load(std::memory_order_relaxed)) return false;
      const Network::Block* block = k.fixed ? &k.net->blocks[l] : nullptr;
      attention(k, w, rng, block, lm);
      mlp(k, w, rng, block);
      hidden_metrics(k, w, w.xn.data(), lm);
      if (sums) accumulate(k, w, l, true, lm, *sums);
      if (record) record_layer(k, w, lm, trace->layers[l]);
      std::swap(w.x, w.xn);
    }
    if (sums) sums->count += 1;
  }
  return true;
}

}  // namespace

RandomWeightsModel::RandomWeightsModel(const Settings& s, const KeyRanges& keys, const AccumLayout& layout)
    : s_(s), keys_(keys), layout_(layout), work_(std::make_unique<Work>(s.n, s.d, s.heads)) {
  if (s.weights == WeightsMode::fixed) network_ = fixed_network(s);
  if (s.rope()) rope_ = rope_tables(s.n, s.head_width(), s.rope_base, s.rope_scramble);
}

RandomWeightsModel::~RandomWeightsModel() = default;

bool RandomWeightsModel::run(std::uint64_t first_sample, std::int64_t count, BlockSums* sums, SampleTrace* trace,
                             const std::atomic<bool>* cancel) {
  RwArgs k{};
  k.seed = s_.seed;
  k.n = s_.n;
  k.d = s_.d;
  k.layers = s_.layers;
  k.heads = s_.heads;
  k.dh = s_.head_width();
  k.norm = s_.norm;
  k.gamma = static_cast<float>(s_.gamma);
  k.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(k.dh)));
  k.rope = s_.rope();
  k.mlp = s_.mlp;
  k.fixed = network_ != nullptr;
  k.positions = s_.learned_positions();
  k.vocab = s_.vocab;
  k.init = init_of(s_);
  k.lo = keys_.lo.data();
  k.hi = keys_.hi.data();
  k.triples = keys_.recency_triples;
  k.rope_tables = &rope_;
  k.slope_coef = keys_.slope_coef.data();
  k.layout = &layout_;
  k.net = network_.get();
  return run_samples(k, *work_, first_sample, count, sums, trace, cancel);
}

}  // namespace maskscope
