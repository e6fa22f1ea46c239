// The random-weight transformer's forward pass (docs/model.md section 7), one sample at a time: for
// per-sample weights (each product drawn through its action on the sample's rows), and for a fixed
// network on processors without AVX2 (a register-blocked product on the 8-lane vectors of simd.hpp).
// Fixed networks on AVX2 processors take the batched path (random_weights_batched.cpp). Like the
// parameter-free kernel it is compiled for x86-64-v3 and baseline x86-64 and chosen at run time.
#include "core/kernel/network/random_weights.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/kernel/network/eigen_gemm.hpp"
#include "core/kernel/network/random_weights_bartlett.hpp"
#include "core/kernel/network/random_weights_batched.hpp"
#include "core/kernel/network/random_weights_math.hpp"
#include "core/kernel/network/random_weights_steps.hpp"
#include "core/model/cost.hpp"
#include "core/model/key_ranges.hpp"

namespace maskscope {

using rw::draw_entries;
using rw::gelu_inplace;
using rw::gemm;
using rw::RwArgs;

float gelu(float x) {
  float v[8] = {x};
  gelu_inplace(v, 1);
  return v[0];
}

RandomWeightsModel::Work::Work(int n_, int d_, int heads_, int batch_)
    : n(n_), d(d_), heads(heads_), dh(d_ / heads_), batch(batch_) {
  const std::size_t rows = std::size_t(batch) * n, nd = std::size_t(n) * d, nn = std::size_t(n) * n;
  for (auto* v : {&x, &xn, &y, &o, &att, &hres, &z}) v->resize(rows * d);
  qkv.resize(3 * rows * d);
  u.resize(4 * rows * d);
  s.resize(std::size_t(batch) * heads * nn + 8);
  a.resize(std::size_t(batch) * heads * nn + 8);
  for (auto* v : {&qh, &kh, &vh}) v->resize(nd);
  s_mean.resize(nn + 8);
  a_mean.resize(nn);
  c.resize(nn + 8);
  stage_g.resize(nn + 8);
  stage_c.resize(nn + 8);
  stage_inv.resize(n);
  inv_norm.resize(n);
  norms.resize(n + 8);
  zeros.resize(d);
  tokens.resize(rows);
  metrics.resize(batch);
  if (batch == 1) {  // the per-sample draws (random_product)
    noise.resize(4 * nd);
    chol.resize(nn);
    gram.resize(nn);
    ld.resize(nn);
    factor.resize(std::size_t(n) * d);
  }
}

namespace {

// The 8 lanes of one Gram entry's partial sums, added in a fixed tree.
[[gnu::always_inline]] inline float lane_sum(simd::f8 v) {
  return ((v[0] + v[4]) + (v[1] + v[5])) + ((v[2] + v[6]) + (v[3] + v[7]));
}

// Entries (i0 + r, j0 + c), j0 + c <= i0 + r, of G = Y Y^T: RI x RJ entries in registers at once, so each
// 8-lane step loads RI + RJ vectors for RI RJ products (four-way dot products loaded 5 for 4). Every entry
// is summed the same way (its own 8 lanes over the columns, lane_sum, then the columns beyond the last whole
// vector), so two equal rows of Y (a repeated token) give equal entries and the factor a zero column exactly.
template <int RI, int RJ>
[[gnu::always_inline]] inline void gram_block(const float* Y, int inner, int i0, int j0, int n, double* G) {
  simd::f8 acc[RI][RJ];
  for (int r = 0; r < RI; ++r)
    for (int c = 0; c < RJ; ++c) acc[r][c] = simd::f8{};
  const int body = inner / 8 * 8;
  for (int k = 0; k < body; k += 8) {
    simd::f8 a[RI], b[RJ];
    for (int r = 0; r < RI; ++r) a[r] = simd::load(Y + std::size_t(i0 + r) * inner + k);
    for (int c = 0; c < RJ; ++c) b[c] = simd::load(Y + std::size_t(j0 + c) * inner + k);
    for (int r = 0; r < RI; ++r)
      for (int c = 0; c < RJ; ++c) acc[r][c] += a[r] * b[c];
  }
  for (int r = 0; r < RI; ++r)
    for (int c = 0; c < RJ && j0 + c <= i0 + r; ++c) {
      const float* yi = Y + std::size_t(i0 + r) * inner;
      const float* yj = Y + std::size_t(j0 + c) * inner;
      float sum = lane_sum(acc[r][c]);
      for (int k = body; k < inner; ++k) sum += yi[k] * yj[k];
      G[std::size_t(i0 + r) * n + j0 + c] = sum;
    }
}

// G (n x n, lower triangle) = Y Y^T for the n rows of Y (`inner` columns), in blocks of 3 x 3 entries (15
// of AVX2's 16 vector registers). A function of its own (in both clones): inlined into run_samples, the
// four-way dot products it replaces reloaded their row pointers from the stack at every step.
MASKSCOPE_KERNEL_CLONES [[gnu::noinline]] void gram_rows(const float* Y, int n, int inner, double* G) {
  for (int i0 = 0; i0 < n; i0 += 3) {
    const int ri = std::min(3, n - i0);
    for (int j0 = 0; j0 <= i0; j0 += 3) {
      const int rj = std::min(3, n - j0);  // 3 below the diagonal block, ri on it
      if (ri == 3 && rj == 3) gram_block<3, 3>(Y, inner, i0, j0, n, G);
      else if (ri == 2 && rj == 3) gram_block<2, 3>(Y, inner, i0, j0, n, G);
      else if (ri == 1 && rj == 3) gram_block<1, 3>(Y, inner, i0, j0, n, G);
      else if (ri == 2) gram_block<2, 2>(Y, inner, i0, j0, n, G);
      else gram_block<1, 1>(Y, inner, i0, j0, n, G);
    }
  }
}

// GELU in place (gelu_inplace), as a function of its own for the same reason: its constants stayed in
// registers instead of on the stack.
MASKSCOPE_KERNEL_CLONES [[gnu::noinline]] void gelu_rows(float* u, std::size_t count) { gelu_inplace(u, count); }

// out = C Z for the lower triangular factor C (rw::lower_gemm), as a function of its own for the same
// reason: inlined into run_samples, its blocks' loops reloaded their strides from the stack.
MASKSCOPE_KERNEL_CLONES [[gnu::noinline]] void lower_rows(const float* C, int n, const float* Z, std::size_t zs,
                                                          int cols, float* out, std::size_t os) {
  rw::lower_gemm(C, n, Z, zs, cols, out, os);
}

// w.chol (n x n, row-major, lower) = s L with L L^T = Y Y^T for the n rows of Y (`inner` columns): the
// Cholesky factor of the Gram matrix in double; a direction with no variance left (a repeated token's
// row) gets a zero column.
[[gnu::always_inline]] inline const float* gram_factor(const RwArgs& k, RandomWeightsModel::Work& w, const float* Y,
                                                       int inner, float s) {
  const int n = k.n;
  double* G = w.gram.data();
  double* L = w.ld.data();
  gram_rows(Y, n, inner, G);
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
  return chol;
}

// out (n x m) = Y W for a fresh W (k x m) with entries iid N(mu, s^2), drawn through its action on
// the rows of Y only. The columns of Y W are independent N(mu (Y 1), s^2 Y Y^T), which is the law
// of mu (Y 1) 1^T + s L Z with L L^T = Y Y^T and Z (n x m) iid N(0, 1): exact in distribution,
// n m normals instead of k m, O(n^2 (k + m)) instead of O(n k m).
[[gnu::always_inline]] inline void random_product(const RwArgs& k, RandomWeightsModel::Work& w, SampleStream& rng,
                                                  const float* Y, int inner, int m, float mu, float s, float* out) {
  const int n = k.n;
  const float* chol = gram_factor(k, w, Y, inner, s);
  float* noise = w.noise.data();
  rng.normals(noise, std::size_t(n) * m);
  lower_rows(chol, n, noise, std::size_t(m), m, out, std::size_t(m));
  if (mu != 0.0f)
    for (int i = 0; i < n; ++i) {
      const float shift = mu * kernel::sum_of(Y + std::size_t(i) * inner, inner);
      float* row = out + std::size_t(i) * m;
      for (int e = 0; e < m; ++e) row[e] += shift;
    }
}

// out = Y W with the network's W (fixed) or a fresh draw (per_sample).
[[gnu::always_inline]] inline void product(const RwArgs& k, RandomWeightsModel::Work& w, SampleStream& rng,
                                           const float* Y, int inner, const std::vector<float>* fixed, int m, float mu,
                                           float s, float* out) {
  if (k.fixed) gemm(Y, k.n, inner, fixed->data(), m, out);
  else random_product(k, w, rng, Y, inner, m, mu, s, out);
}

// x_i = E[t_i] for n ids uniform over the vocabulary. Per sample, only the rows the sequence uses
// are drawn, one per distinct id in order of first appearance (the same law as a full table).
[[gnu::always_inline]] inline void embed_tokens(const RwArgs& k, RandomWeightsModel::Work& w, SampleStream& rng,
                                                std::uint64_t sample) {
  const int n = k.n, d = k.d;
  rw::draw_tokens(k, rng, sample, w.tokens.data());
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

// The attention sublayer from Bartlett draws (random_weights_bartlett.hpp; per-sample weights at mean 0,
// no RoPE, d_h >= n), given y = Norm(x): head h's q', k', v' are n x n (C = sigma L, L L^T = y y^T) with zero
// columns up to `width` (bartlett_width), the heads run on them as on head width `width` (the scale stays
// 1 / sqrt(d_h)), and out = o' W_O with o' = concat_h(A_h v'_h) (n x H width): its rows' Gram matrix has the
// law of concat_h(A_h v_h)'s, which is all the law of o W_O depends on.
[[gnu::always_inline]] inline void bartlett_attention(const RwArgs& k, RandomWeightsModel::Work& w, SampleStream& rng,
                                                      kernel::LayerMetrics& lm) {
  const int n = k.n, H = k.heads, width = rw::bartlett_width(n, k.dh), wide = H * width;
  const float* C = gram_factor(k, w, w.y.data(), k.d, k.init.std);
  float* z = w.noise.data();
  const std::size_t per_head = rw::bartlett_head_normals(n);
  rng.normals(z, std::size_t(H) * per_head);
  rw::bartlett_chis(rng, n, H, k.chi_laws, z,
                    [](SampleStream& g, const ChiLaw& law, double first, double u) { return g.chi(law, first, u); });
  const std::size_t stride = 3 * std::size_t(wide);  // rows of q' | k' | v', each H width wide
  for (int h = 0; h < H; ++h) {
    float* q = w.qkv.data() + std::size_t(h) * width;
    rw::bartlett_head(C, z + std::size_t(h) * per_head, n, width, w.factor.data(), q, q + wide, q + 2 * wide, stride);
  }
  RwArgs heads = k;
  heads.d = wide;
  heads.dh = width;
  rw::attend(heads, w.qkv.data(), w.heads_scratch(), w.s.data(), w.a.data(), w.o.data(), lm);
  random_product(k, w, rng, w.o.data(), wide, k.d, 0.0f, k.init.residual_std, w.att.data());
  for (std::size_t e = 0; e < w.nd(); ++e) w.hres[e] = k.gamma * w.x[e] + w.att[e];
}

// h = gamma x + Attn(Norm(x)): per head S = mask(q k^T / sqrt(d_h)), A = softmax(S), out = concat(A v) W_O.
[[gnu::always_inline]] inline void attention(const RwArgs& k, RandomWeightsModel::Work& w, SampleStream& rng,
                                             const Network::Block* block, kernel::LayerMetrics& lm) {
  const int d = k.d;
  const std::size_t n = std::size_t(k.n);
  rw::normalize_rows(k, w.x.data(), w.y.data(), n);
  if (k.chi_laws) {
    bartlett_attention(k, w, rng, lm);
    return;
  }
  if (block) rw::norm_affine(block->ln1_gain, block->ln1_bias, w.y.data(), n, d);  // a trained network's ln_1
  product(k, w, rng, w.y.data(), d, block ? &block->wqkv : nullptr, 3 * d, k.init.mean, k.init.std, w.qkv.data());
  if (block) rw::add_bias(block->bqkv, w.qkv.data(), n, 3 * d);
  rw::attend(k, w.qkv.data(), w.heads_scratch(), w.s.data(), w.a.data(), w.o.data(), lm);
  product(k, w, rng, w.o.data(), d, block ? &block->wo : nullptr, d, k.init.residual_mean, k.init.residual_std,
          w.att.data());
  if (block) rw::add_bias(block->bo, w.att.data(), n, d);
  for (std::size_t e = 0; e < w.nd(); ++e) w.hres[e] = k.gamma * w.x[e] + w.att[e];
}

// x' = h + GELU(Norm(h) W_1) W_2 (or x' = h without the MLP).
[[gnu::always_inline]] inline void mlp(const RwArgs& k, RandomWeightsModel::Work& w, SampleStream& rng,
                                       const Network::Block* block) {
  const int d = k.d;
  if (!k.mlp) {
    std::copy(w.hres.begin(), w.hres.begin() + std::ptrdiff_t(w.nd()), w.xn.begin());
    return;
  }
  const std::size_t n = std::size_t(k.n);
  rw::normalize_rows(k, w.hres.data(), w.z.data(), n);
  if (block) rw::norm_affine(block->ln2_gain, block->ln2_bias, w.z.data(), n, d);  // a trained network's ln_2
  product(k, w, rng, w.z.data(), d, block ? &block->w1 : nullptr, 4 * d, k.init.mean, k.init.std, w.u.data());
  if (block) rw::add_bias(block->b1, w.u.data(), n, 4 * d);
  if (k.net && k.net->activation == Activation::gelu_tanh) rw::gelu_tanh_inplace(w.u.data(), 4 * w.nd());
  else gelu_rows(w.u.data(), 4 * w.nd());
  product(k, w, rng, w.u.data(), 4 * d, block ? &block->w2 : nullptr, d, k.init.residual_mean, k.init.residual_std,
          w.att.data());
  if (block) rw::add_bias(block->b2, w.att.data(), n, d);
  for (std::size_t e = 0; e < w.nd(); ++e) w.xn[e] = w.hres[e] + w.att[e];
}

MASKSCOPE_KERNEL_CLONES
bool run_samples(const RwArgs& k, RandomWeightsModel::Work& w, std::uint64_t first_sample, std::int64_t count,
                 BlockSums* sums, SampleTrace* trace, const std::atomic<bool>* cancel, bool trace_every) {
  const rw::MetricScratch ms = w.metric_scratch();
  const kernel::StageScratch ss = w.stage_scratch();
  const bool stages = sums && k.layout->stages;
  for (std::int64_t t = 0; t < count; ++t) {
    if (cancel && cancel->load(std::memory_order_relaxed)) return false;
    const bool record = trace && (trace_every || t == count - 1);
    SampleTrace* traced = trace_every ? trace + t : trace;
    SampleStream rng(k.seed, first_sample + std::uint64_t(t));
    embed_tokens(k, w, rng, first_sample + std::uint64_t(t));
    kernel::LayerMetrics lm{};
    rw::hidden_metrics(k, ms, w.x.data(), lm);  // layer 0: the embeddings
    if (sums) rw::accumulate(k, ms, k.layout->embedding_block(), false, w.s.data(), w.a.data(), lm, *sums);
    if (record) rw::record_input(k, w.x.data(), w.tokens.data(), lm, *traced);
    for (int l = 0; l < k.layers; ++l) {
      if (cancel && l > 0 && cancel->load(std::memory_order_relaxed)) return false;
      const Network::Block* block = k.fixed ? &k.net->blocks[l] : nullptr;
      attention(k, w, rng, block, lm);
      if (stages) {  // docs/model.md section 12, before the MLP reuses w.att
        rw::add_stage(k, ss, l, Stage::input, w.x.data(), *sums);
        rw::add_stage(k, ss, l, Stage::normalized, w.y.data(), *sums);
        rw::add_head_stages(k, ss, l, w.heads_scratch(), *sums);
        rw::add_stage(k, ss, l, Stage::mix, w.o.data(), *sums);
        rw::add_stage(k, ss, l, Stage::attention, w.att.data(), *sums);
      }
      if (k.attention_output) rw::hidden_metrics(k, ms, w.att.data(), lm);  // before the MLP reuses w.att
      mlp(k, w, rng, block);
      if (stages) {
        rw::add_stage(k, ss, l, Stage::residual, w.hres.data(), *sums);
        rw::add_stage(k, ss, l, Stage::mlp, w.xn.data(), *sums);
      }
      if (!k.attention_output) rw::hidden_metrics(k, ms, w.xn.data(), lm);
      if (sums) rw::accumulate(k, ms, l, true, w.s.data(), w.a.data(), lm, *sums);
      if (record) rw::record_layer(k, w.y.data(), w.xn.data(), w.s.data(), w.a.data(), lm, traced->layers[l]);
      std::swap(w.x, w.xn);
    }
    if (sums) sums->count += 1;
  }
  return true;
}

}  // namespace

BartlettHeadRows bartlett_head_rows(const std::vector<float>& Y, int n, int inner, int dh, float sigma,
                                    std::uint64_t seed, std::uint64_t sample) {
  RandomWeightsModel::Work w(n, inner, 1, 1);
  RwArgs k{};
  k.n = n;
  const float* C = gram_factor(k, w, Y.data(), inner, sigma);
  const std::vector<ChiLaw> laws = rw::bartlett_chi_laws(n, dh);
  SampleStream rng(seed, sample);
  std::vector<float> z(rw::bartlett_head_normals(n)), qkv(3 * std::size_t(n) * n), factor(std::size_t(n) * n);
  rng.normals(z.data(), z.size());
  rw::bartlett_chis(rng, n, 1, laws.data(), z.data(),
                    [](SampleStream& g, const ChiLaw& law, double first, double u) { return g.chi(law, first, u); });
  const std::size_t nn = std::size_t(n) * n;
  rw::bartlett_head(C, z.data(), n, n, factor.data(), qkv.data(), qkv.data() + nn, qkv.data() + 2 * nn, std::size_t(n));
  return {{qkv.begin(), qkv.begin() + std::ptrdiff_t(nn)},
          {qkv.begin() + std::ptrdiff_t(nn), qkv.begin() + std::ptrdiff_t(2 * nn)},
          {qkv.begin() + std::ptrdiff_t(2 * nn), qkv.end()}};
}

bool RandomWeightsModel::batched(const Settings& s) {
  return s.weights == WeightsMode::fixed && rw::eigen_gemm_available();
}

RandomWeightsModel::RandomWeightsModel(const Settings& s, const KeyRanges& keys, const AccumLayout& layout,
                                       bool allow_batched, std::shared_ptr<const Network> network)
    : s_(s),
      keys_(keys),
      layout_(layout),
      batched_(allow_batched && batched(s)),
      work_(std::make_unique<Work>(s.n, s.d, s.heads, batched_ ? fixed_batch_samples(s) : 1)) {
  if (network && s.weights != WeightsMode::fixed)
    throw std::invalid_argument("RandomWeightsModel: a given network needs weights fixed");
  if (s.weights == WeightsMode::fixed) network_ = network ? std::move(network) : fixed_network(s);
  if (!s.tokens.empty()) tokens_ = load_token_sequences(s.tokens, s.tokens_format);  // checked by validate()
  if (s.rope()) rope_ = rope_tables(s.n, s.head_width(), s.rope_base, s.rope_scramble);
  if (rw::bartlett_exact(s)) bartlett_chi_ = rw::bartlett_chi_laws(s.n, s.head_width());
}

RandomWeightsModel::~RandomWeightsModel() = default;

bool RandomWeightsModel::run(std::uint64_t first_sample, std::int64_t count, BlockSums* sums, SampleTrace* trace,
                             const std::atomic<bool>* cancel, bool trace_every) {
  RwArgs k = rw::network_args(s_, keys_, rope_);
  k.seed = s_.seed;
  k.attention_output = s_.hidden == HiddenState::attention;
  k.positions = s_.learned_positions();
  k.bos = s_.fixed_first_token();
  k.given = tokens_.get();
  k.fixed = network_ != nullptr;
  k.vocab = s_.vocab;
  k.init = rw::init_of(s_);
  k.triples = keys_.recency_triples;
  k.slope_coef = keys_.slope_coef.data();
  k.layout = &layout_;
  k.net = network_.get();
  k.chi_laws = bartlett_chi_.empty() ? nullptr : bartlett_chi_.data();
  if (batched_) return rw::run_batched(k, *work_, first_sample, count, sums, trace, cancel, trace_every);
  return run_samples(k, *work_, first_sample, count, sums, trace, cancel, trace_every);
}

}  // namespace maskscope
