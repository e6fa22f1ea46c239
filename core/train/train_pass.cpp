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

#include "core/kernel/network/random_weights_steps.hpp"
#include "core/model/key_ranges.hpp"
#include "core/model/rope.hpp"
#include "core/train/products.hpp"
#include "core/train/train_buffers.hpp"
#include "core/train/train_steps.hpp"

namespace maskscope::train {

using namespace steps;

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
  b.args = rw::network_args(s, b.keys, b.rope);
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
