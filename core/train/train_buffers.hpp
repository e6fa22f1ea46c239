// The training pass's buffers (train_pass.hpp): the activations the backward pass reads again and its scratch.
// Internal to core/train/ (train_pass.cpp and train_steps.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "core/kernel/network/random_weights_steps.hpp"
#include "core/model/key_ranges.hpp"
#include "core/model/rope.hpp"
#include "core/train/train_pass.hpp"

namespace maskscope::train {

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

}  // namespace maskscope::train
