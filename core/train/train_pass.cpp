// The training engine's forward and backward pass (train_pass.hpp). Each step of the forward pass is the
// fixed-network kernel's (random_weights_steps.hpp: normalize_rows, norm_affine, add_bias, split_heads,
// attend_head, GELU) on all rows of the chunk at once; its backward follows it in reverse, in the same order as
// the forward pass reads: embedding, blocks (attention, MLP), final norm, tied head. Products through
// products.hpp (Eigen). Like the kernels, compiled for x86-64-v3 and baseline x86-64 and chosen at run time.
#include "core/train/train_pass.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "core/kernel/network/random_weights_math.hpp"
#include "core/kernel/network/random_weights_steps.hpp"
#include "core/model/key_ranges.hpp"
#include "core/model/rope.hpp"
#include "core/train/products.hpp"

namespace maskscope::train {

namespace {

// One block's activations, N = rows n token rows each (x W products read them again in the backward pass).
struct LayerActs {
  std::vector<float> xhat1, y1;  // Norm(x) before and after ln_1's affine (N x d)
  std::vector<float> qkv;        // y1 W_QKV + b (N x 3d)
  std::vector<float> q, k, v;    // head-major per sequence (rows x H x n x d_h); q and k RoPE'd
  std::vector<float> att;        // A per sequence and head (rows x H x n x n, 8 floats of slack)
  std::vector<float> o;          // concat_h(A_h v_h) (N x d)
  std::vector<float> h;          // gamma x + o W_O + b (N x d)
  std::vector<float> xhat2, y2;  // Norm(h) before and after ln_2's affine (N x d)
  std::vector<float> u, g;       // y2 W_1 + b and GELU(u) (N x 4d)
};

}  // namespace

struct TrainPass::Buffers {
  int n, d, layers, heads, dh, vocab_rows, max_rows, rows = 0;
  Norm norm;
  float gamma;
  bool mlp, positions;
  KeyRanges keys;
  RopeTables rope;
  rw::RwArgs args{};  // the kernel's arguments for its row steps (n, d, heads, norm, scale, RoPE, keys)
  std::vector<std::int32_t> tokens, targets;
  std::vector<float> x;  // the residual stream: x^(0) .. x^(L), (L + 1) x N x d
  std::vector<LayerActs> acts;
  std::vector<float> xhatf, yf;  // Norm_f(x^(L)) before and after ln_f's affine
  std::vector<float> probs;      // N x V rows: logits, then softmax where a target is, then d loss / d logits
  std::vector<float> S, zeros;   // one head's scores (n x n + 8), d_h zeros
  // Backward scratch.
  std::vector<float> dx, dres, dy, dqkv, dout, dg, dq, dk;
  std::size_t N() const { return std::size_t(rows) * n; }
};

namespace {

using Buffers = TrainPass::Buffers;

// rows x cols of `in`, summed over rows into `out` (a bias's gradient), in row order.
void add_column_sums(const float* in, std::size_t rows, int cols, float* out) {
  for (std::size_t i = 0; i < rows; ++i)
    for (int c = 0; c < cols; ++c) out[c] += in[i * std::size_t(cols) + c];
}

// y = Norm(x) with the kernel's step, keeping Norm(x) before the affine in xhat.
[[gnu::always_inline]] inline void norm_forward(const Buffers& b, const float* x, float* xhat, float* y,
                                                const std::vector<float>& gain, const std::vector<float>& bias) {
  const std::size_t N = b.N();
  rw::normalize_rows(b.args, x, xhat, N);
  std::memcpy(y, xhat, sizeof(float) * N * std::size_t(b.d));
  rw::norm_affine(gain, bias, y, N, b.d);
}

// The backward of norm_forward: the affine's gradients into dgain, dbias (when the network has them), and
// dx += Norm'(x)^T (dy * gain). Norm(x) = (x - mean) r (LayerNorm, r = 1 / sqrt(var + eps)), x r (RMSNorm,
// r = 1 / sqrt(mean x^2 + eps)), x r (l2, r = 1 / ||x||): dx = r (g - mean(g) - xhat mean(g xhat)), without the
// mean(g) term for RMSNorm and with sums instead of means for l2.
[[gnu::always_inline]] inline void norm_backward(const Buffers& b, const float* x, const float* xhat, const float* dy,
                                                 const std::vector<float>& gain, std::vector<float>& dgain,
                                                 std::vector<float>& dbias, float* dx) {
  const int d = b.d;
  const float fd = float(d);
  std::vector<float> g(static_cast<std::size_t>(d));
  for (std::size_t i = 0; i < b.N(); ++i) {
    const float* xr = x + i * d;
    const float* xh = xhat + i * d;
    const float* dyr = dy + i * d;
    float* dxr = dx + i * d;
    if (!dgain.empty())
      for (int c = 0; c < d; ++c) dgain[c] += dyr[c] * xh[c];
    if (!dbias.empty())
      for (int c = 0; c < d; ++c) dbias[c] += dyr[c];
    for (int c = 0; c < d; ++c) g[c] = gain.empty() ? dyr[c] : dyr[c] * gain[c];
    if (b.norm == Norm::none) {
      for (int c = 0; c < d; ++c) dxr[c] += g[c];
      continue;
    }
    float sum_g = 0, sum_gx = 0;
    for (int c = 0; c < d; ++c) {
      sum_g += g[c];
      sum_gx += g[c] * xh[c];
    }
    float r = 0, mean_g = 0, proj = 0;
    if (b.norm == Norm::layernorm) {
      float mean = 0, var = 0;
      for (int c = 0; c < d; ++c) mean += xr[c];
      mean /= fd;
      for (int c = 0; c < d; ++c) var += (xr[c] - mean) * (xr[c] - mean);
      r = 1.0f / std::sqrt(var / fd + rw::kNormEps);
      mean_g = sum_g / fd;
      proj = sum_gx / fd;
    } else if (b.norm == Norm::rmsnorm) {
      float ss = 0;
      for (int c = 0; c < d; ++c) ss += xr[c] * xr[c];
      r = 1.0f / std::sqrt(ss / fd + rw::kNormEps);
      proj = sum_gx / fd;
    } else {  // l2
      float ss = 0;
      for (int c = 0; c < d; ++c) ss += xr[c] * xr[c];
      if (!(ss > 0.0f)) continue;
      r = 1.0f / std::sqrt(ss);
      proj = sum_gx;
    }
    for (int c = 0; c < d; ++c) dxr[c] += r * (g[c] - mean_g - xh[c] * proj);
  }
}

// GELU's derivative at u (erf or tanh form, as the forward pass's activation).
[[gnu::always_inline]] inline float gelu_derivative(Activation act, float x) {
  if (act == Activation::gelu_tanh) {
    constexpr float c = 0.7978845608028654f, a = 0.044715f;
    const float t = std::tanh(c * (x + a * x * x * x));
    return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * c * (1.0f + 3.0f * a * x * x);
  }
  return 0.5f * (1.0f + std::erf(x * 0.70710678118654752f)) + x * 0.3989422804014327f * std::exp(-0.5f * x * x);
}

// The attention heads of every sequence (the kernel's split_heads and attend_head), keeping q, k, v and A.
MASKSCOPE_KERNEL_CLONES void attention_forward(Buffers& b, LayerActs& la) {
  const std::size_t nd = std::size_t(b.n) * b.d, nn = std::size_t(b.n) * b.n;
  for (int r = 0; r < b.rows; ++r) {
    const rw::HeadScratch hs{la.q.data() + r * nd, la.k.data() + r * nd, la.v.data() + r * nd, b.zeros.data()};
    rw::split_heads(b.args, la.qkv.data() + 3 * r * nd, hs);
    for (int h = 0; h < b.heads; ++h)
      rw::attend_head(b.args, h, hs, b.S.data(), la.att.data() + (std::size_t(r) * b.heads + h) * nn,
                      la.o.data() + r * nd);
  }
}

// The backward of attention_forward: d o (N x d) to d qkv (N x 3d). Per sequence and head, with A = softmax(S):
// dV = A^T dO, dA = dO V^T, dS = A (dA - rowsum(A dA)), dQ = scale dS K, dK = scale dS^T Q, then RoPE's
// transpose on dQ and dK (a rotation's inverse).
MASKSCOPE_KERNEL_CLONES void attention_backward(Buffers& b, const LayerActs& la, const float* dout, float* dqkv) {
  const int n = b.n, d = b.d, dh = b.dh;
  const std::size_t nd = std::size_t(n) * d, nn = std::size_t(n) * n;
  const float scale = b.args.scale;
  std::fill(dqkv, dqkv + 3 * b.N() * std::size_t(d), 0.0f);
  std::vector<float> dS(nn);
  float* dq = b.dq.data();
  float* dk = b.dk.data();
  for (int r = 0; r < b.rows; ++r)
    for (int h = 0; h < b.heads; ++h) {
      const std::size_t head = std::size_t(h) * n * dh;
      const float* q = la.q.data() + r * nd + head;
      const float* k = la.k.data() + r * nd + head;
      const float* v = la.v.data() + r * nd + head;
      const float* A = la.att.data() + (std::size_t(r) * b.heads + h) * nn;
      std::fill(dq, dq + std::size_t(n) * dh, 0.0f);
      std::fill(dk, dk + std::size_t(n) * dh, 0.0f);
      for (int i = 0; i < n; ++i) {
        const float* doi = dout + (std::size_t(r) * n + i) * d + std::size_t(h) * dh;
        const int lo = b.keys.lo[i], hi = b.keys.hi[i];
        float dot_sum = 0;
        for (int j = lo; j <= hi; ++j) {
          const float* vj = v + std::size_t(j) * dh;
          float* dvj = dqkv + (std::size_t(r) * n + j) * 3 * d + 2 * d + std::size_t(h) * dh;
          const float a = A[std::size_t(i) * n + j];
          float da = 0;
          for (int c = 0; c < dh; ++c) {
            da += doi[c] * vj[c];
            dvj[c] += a * doi[c];
          }
          dS[std::size_t(i) * n + j] = da;
          dot_sum += a * da;
        }
        for (int j = lo; j <= hi; ++j) {
          const float ds = A[std::size_t(i) * n + j] * (dS[std::size_t(i) * n + j] - dot_sum) * scale;
          const float* kj = k + std::size_t(j) * dh;
          const float* qi = q + std::size_t(i) * dh;
          float* dqi = dq + std::size_t(i) * dh;
          float* dkj = dk + std::size_t(j) * dh;
          for (int c = 0; c < dh; ++c) {
            dqi[c] += ds * kj[c];
            dkj[c] += ds * qi[c];
          }
        }
      }
      for (int i = 0; i < n; ++i) {
        float* dqo = dqkv + (std::size_t(r) * n + i) * 3 * d + std::size_t(h) * dh;
        float* dko = dqo + d;
        const float* dqi = dq + std::size_t(i) * dh;
        const float* dki = dk + std::size_t(i) * dh;
        if (!b.args.rope) {
          std::memcpy(dqo, dqi, sizeof(float) * std::size_t(dh));
          std::memcpy(dko, dki, sizeof(float) * std::size_t(dh));
          continue;
        }
        // q = R y per pair: (a0 ca - a1 sa, a0 sb + a1 cb); dy = R^T dq.
        const RopeTables& t = b.rope;
        const std::size_t at = std::size_t(i) * t.half;
        for (int p = 0; p < t.half; ++p) {
          const float ca = t.cos_a[at + p], sa = t.sin_a[at + p], cb = t.cos_b[at + p], sb = t.sin_b[at + p];
          dqo[2 * p] = dqi[2 * p] * ca + dqi[2 * p + 1] * sb;
          dqo[2 * p + 1] = -dqi[2 * p] * sa + dqi[2 * p + 1] * cb;
          dko[2 * p] = dki[2 * p] * ca + dki[2 * p + 1] * sb;
          dko[2 * p + 1] = -dki[2 * p] * sa + dki[2 * p + 1] * cb;
        }
      }
    }
}

MASKSCOPE_KERNEL_CLONES void gelu_forward(Activation act, const float* u, float* g, std::size_t count) {
  std::memcpy(g, u, sizeof(float) * count);
  if (act == Activation::gelu_tanh) rw::gelu_tanh_inplace(g, count);
  else rw::gelu_inplace(g, count);
}

// dg *= GELU'(u). The erf form on 8 lanes with the forward pass's erf (A&S 7.1.28) and the kernel's exp: it took
// 6% of a step with libm's erf and exp per entry.
MASKSCOPE_KERNEL_CLONES void gelu_backward(Activation act, const float* u, float* dg, std::size_t count) {
  std::size_t e = 0;
  if (act == Activation::gelu_erf)
    for (; e + 8 <= count; e += 8) {
      const simd::f8 x = simd::load(u + e);
      const simd::f8 cdf = 0.5f * (1.0f + rw::erf8(x * 0.70710678118654752f));
      const simd::f8 pdf = 0.3989422804014327f * simd::exp_nonpositive(-0.5f * x * x);
      const simd::f8 d = simd::load(dg + e) * (cdf + x * pdf);
      std::memcpy(dg + e, &d, sizeof d);
    }
  for (; e < count; ++e) dg[e] *= gelu_derivative(act, u[e]);
}

}  // namespace

TrainPass::TrainPass(const Settings& s, int max_rows) : b_(std::make_unique<Buffers>()) {
  Buffers& b = *b_;
  b.n = s.n;
  b.d = s.d;
  b.layers = s.layers;
  b.heads = s.heads;
  b.dh = s.head_width();
  b.vocab_rows = int(s.vocab) + (s.fixed_first_token() ? 1 : 0);
  b.max_rows = max_rows;
  b.norm = s.norm;
  b.gamma = float(s.gamma);
  b.mlp = s.mlp;
  b.positions = s.learned_positions();
  b.keys = key_ranges(s);
  for (int i = 0; i < s.n; ++i)
    if (b.keys.hi[i] > i) throw std::invalid_argument("training needs a mask without future keys (causal or window)");
  if (s.rope()) b.rope = rope_tables(s.n, b.dh, s.rope_base, s.rope_scramble);
  rw::RwArgs& k = b.args;
  k.n = s.n;
  k.d = s.d;
  k.layers = s.layers;
  k.heads = s.heads;
  k.dh = b.dh;
  k.norm = s.norm;
  k.gamma = b.gamma;
  k.scale = float(1.0 / std::sqrt(double(b.dh)));
  k.rope = s.rope();
  k.mlp = s.mlp;
  k.lo = b.keys.lo.data();
  k.hi = b.keys.hi.data();
  k.rope_tables = &b.rope;
  const std::size_t N = std::size_t(max_rows) * s.n, d = std::size_t(s.d);
  const std::size_t nn = std::size_t(s.n) * s.n;
  b.tokens.resize(N);
  b.targets.resize(N);
  b.x.resize((std::size_t(s.layers) + 1) * N * d);
  b.acts.resize(std::size_t(s.layers));
  for (LayerActs& la : b.acts) {
    for (auto* v : {&la.xhat1, &la.y1, &la.o, &la.h, &la.q, &la.k, &la.v}) v->resize(N * d);
    la.qkv.resize(3 * N * d);
    la.att.resize(std::size_t(max_rows) * s.heads * nn + 8);
    if (s.mlp) {
      for (auto* v : {&la.xhat2, &la.y2}) v->resize(N * d);
      for (auto* v : {&la.u, &la.g}) v->resize(4 * N * d);
    }
  }
  b.xhatf.resize(N * d);
  b.yf.resize(N * d);
  b.probs.resize(N * std::size_t(b.vocab_rows));
  b.S.resize(nn + 8);
  b.zeros.assign(std::size_t(b.dh), 0.0f);
  for (auto* v : {&b.dx, &b.dres, &b.dy, &b.dout}) v->resize(N * d);
  b.dqkv.resize(3 * N * d);
  b.dg.resize(s.mlp ? 4 * N * d : 0);
  b.dq.resize(std::size_t(s.n) * b.dh);
  b.dk.resize(std::size_t(s.n) * b.dh);
}

TrainPass::~TrainPass() = default;

std::size_t TrainPass::floats(const Settings& s, int max_rows) {
  const std::size_t N = std::size_t(max_rows) * s.n, d = std::size_t(s.d), L = std::size_t(s.layers);
  const std::size_t nn = std::size_t(s.n) * s.n;
  const std::size_t per_layer = 11 * N * d + std::size_t(max_rows) * s.heads * nn + (s.mlp ? 10 * N * d : 0);
  const std::size_t vocab_rows = std::size_t(s.vocab) + 1;
  return (L + 1) * N * d + L * per_layer + 2 * N * d + N * vocab_rows + 7 * N * d + (s.mlp ? 4 * N * d : 0);
}

LossSum TrainPass::forward(const Network& net, const std::int32_t* tokens, const std::int32_t* targets, int rows,
                           std::int32_t* predicted) {
  Buffers& b = *b_;
  if (rows < 1 || rows > b.max_rows) throw std::invalid_argument("TrainPass::forward: rows out of range");
  b.rows = rows;
  const int n = b.n, d = b.d, V = b.vocab_rows;
  const std::size_t N = b.N(), Nd = N * std::size_t(d);
  std::copy(tokens, tokens + N, b.tokens.begin());
  std::copy(targets, targets + N, b.targets.begin());
  // x^(0)_i = E[t_i] (+ P[i])
  float* x0 = b.x.data();
  for (std::size_t t = 0; t < N; ++t) {
    const std::int32_t id = tokens[t];
    if (id < 0 || id >= V) throw std::invalid_argument("TrainPass::forward: token id out of range");
    std::memcpy(x0 + t * d, net.embed.data() + std::size_t(id) * d, sizeof(float) * std::size_t(d));
    if (b.positions) {
      const float* p = net.pos.data() + (t % std::size_t(n)) * d;
      for (int c = 0; c < d; ++c) x0[t * d + c] += p[c];
    }
  }
  for (int l = 0; l < b.layers; ++l) {
    const Network::Block& blk = net.blocks[std::size_t(l)];
    LayerActs& la = b.acts[std::size_t(l)];
    const float* x = b.x.data() + std::size_t(l) * Nd;
    float* x_next = b.x.data() + std::size_t(l + 1) * Nd;
    // h = gamma x + concat_h(softmax(mask(q_h k_h^T / sqrt(d_h))) v_h) W_O + b_O, q | k | v = ln_1(x) W_QKV + b
    norm_forward(b, x, la.xhat1.data(), la.y1.data(), blk.ln1_gain, blk.ln1_bias);
    matmul(la.y1.data(), int(N), d, blk.wqkv.data(), 3 * d, la.qkv.data());
    rw::add_bias(blk.bqkv, la.qkv.data(), N, 3 * d);
    attention_forward(b, la);
    matmul(la.o.data(), int(N), d, blk.wo.data(), d, la.h.data());
    rw::add_bias(blk.bo, la.h.data(), N, d);
    for (std::size_t e = 0; e < Nd; ++e) la.h[e] += b.gamma * x[e];
    // x' = h + GELU(ln_2(h) W_1 + b_1) W_2 + b_2
    if (!b.mlp) {
      std::copy(la.h.begin(), la.h.begin() + std::ptrdiff_t(Nd), x_next);
      continue;
    }
    norm_forward(b, la.h.data(), la.xhat2.data(), la.y2.data(), blk.ln2_gain, blk.ln2_bias);
    matmul(la.y2.data(), int(N), d, blk.w1.data(), 4 * d, la.u.data());
    rw::add_bias(blk.b1, la.u.data(), N, 4 * d);
    gelu_forward(net.activation, la.u.data(), la.g.data(), 4 * Nd);
    matmul(la.g.data(), int(N), 4 * d, blk.w2.data(), d, x_next);
    rw::add_bias(blk.b2, x_next, N, d);
    for (std::size_t e = 0; e < Nd; ++e) x_next[e] += la.h[e];
  }
  // logits = ln_f(x^(L)) E^T (the head tied to the embedding), softmax where a target is
  norm_forward(b, b.x.data() + std::size_t(b.layers) * Nd, b.xhatf.data(), b.yf.data(), net.lnf_gain, net.lnf_bias);
  matmul_nt(b.yf.data(), int(N), d, net.embed.data(), V, b.probs.data());
  LossSum loss;
  for (std::size_t t = 0; t < N; ++t) {
    float* row = b.probs.data() + t * std::size_t(V);
    if (predicted) predicted[t] = std::int32_t(std::max_element(row, row + V) - row);
    const std::int32_t target = targets[t];
    if (target < 0) continue;
    if (target >= V) throw std::invalid_argument("TrainPass::forward: target id out of range");
    const float m = *std::max_element(row, row + V);
    double z = 0;
    for (int c = 0; c < V; ++c) z += double(row[c] = std::exp(row[c] - m));
    const float inv = float(1.0 / z);
    loss.sum -= std::log(double(row[target]) / z);
    for (int c = 0; c < V; ++c) row[c] *= inv;
    ++loss.count;
  }
  return loss;
}

void TrainPass::backward(const Network& net, float loss_scale, Network& grad) {
  Buffers& b = *b_;
  const int n = b.n, d = b.d, V = b.vocab_rows;
  const std::size_t N = b.N(), Nd = N * std::size_t(d);
  // d loss / d logits = scale (p - onehot(target)) where a target is, 0 elsewhere
  for (std::size_t t = 0; t < N; ++t) {
    float* row = b.probs.data() + t * std::size_t(V);
    const std::int32_t target = b.targets[t];
    if (target < 0) {
      std::fill(row, row + V, 0.0f);
      continue;
    }
    row[target] -= 1.0f;
    for (int c = 0; c < V; ++c) row[c] *= loss_scale;
  }
  // the tied head: dE += dlogits^T yf; d yf = dlogits E
  matmul_tn_add(b.probs.data(), int(N), V, b.yf.data(), d, grad.embed.data());
  matmul(b.probs.data(), int(N), V, net.embed.data(), d, b.dy.data());
  float* dx = b.dx.data();
  std::fill(dx, dx + Nd, 0.0f);
  norm_backward(b, b.x.data() + std::size_t(b.layers) * Nd, b.xhatf.data(), b.dy.data(), net.lnf_gain, grad.lnf_gain,
                grad.lnf_bias, dx);
  for (int l = b.layers - 1; l >= 0; --l) {
    const Network::Block& blk = net.blocks[std::size_t(l)];
    Network::Block& gb = grad.blocks[std::size_t(l)];
    const LayerActs& la = b.acts[std::size_t(l)];
    const float* x = b.x.data() + std::size_t(l) * Nd;
    float* dres = b.dres.data();  // d loss / d h
    std::copy(dx, dx + Nd, dres);
    if (b.mlp) {  // x' = h + GELU(ln_2(h) W_1 + b_1) W_2 + b_2
      if (!gb.b2.empty()) add_column_sums(dx, N, d, gb.b2.data());
      matmul_tn_add(la.g.data(), int(N), 4 * d, dx, d, gb.w2.data());
      matmul_nt(dx, int(N), d, blk.w2.data(), 4 * d, b.dg.data());
      gelu_backward(net.activation, la.u.data(), b.dg.data(), 4 * Nd);
      if (!gb.b1.empty()) add_column_sums(b.dg.data(), N, 4 * d, gb.b1.data());
      matmul_tn_add(la.y2.data(), int(N), d, b.dg.data(), 4 * d, gb.w1.data());
      matmul_nt(b.dg.data(), int(N), 4 * d, blk.w1.data(), d, b.dy.data());
      norm_backward(b, la.h.data(), la.xhat2.data(), b.dy.data(), blk.ln2_gain, gb.ln2_gain, gb.ln2_bias, dres);
    }
    // h = gamma x + o W_O + b_O
    for (std::size_t e = 0; e < Nd; ++e) dx[e] = b.gamma * dres[e];
    if (!gb.bo.empty()) add_column_sums(dres, N, d, gb.bo.data());
    matmul_tn_add(la.o.data(), int(N), d, dres, d, gb.wo.data());
    matmul_nt(dres, int(N), d, blk.wo.data(), d, b.dout.data());
    attention_backward(b, la, b.dout.data(), b.dqkv.data());
    // q | k | v = ln_1(x) W_QKV + b
    if (!gb.bqkv.empty()) add_column_sums(b.dqkv.data(), N, 3 * d, gb.bqkv.data());
    matmul_tn_add(la.y1.data(), int(N), d, b.dqkv.data(), 3 * d, gb.wqkv.data());
    matmul_nt(b.dqkv.data(), int(N), 3 * d, blk.wqkv.data(), d, b.dy.data());
    norm_backward(b, x, la.xhat1.data(), b.dy.data(), blk.ln1_gain, gb.ln1_gain, gb.ln1_bias, dx);
  }
  // x^(0)_i = E[t_i] + P[i]: rows added in token order
  for (std::size_t t = 0; t < N; ++t) {
    float* de = grad.embed.data() + std::size_t(b.tokens[t]) * d;
    for (int c = 0; c < d; ++c) de[c] += dx[t * d + c];
    if (b.positions) {
      float* dp = grad.pos.data() + (t % std::size_t(n)) * d;
      for (int c = 0; c < d; ++c) dp[c] += dx[t * d + c];
    }
  }
}

}  // namespace maskscope::train
