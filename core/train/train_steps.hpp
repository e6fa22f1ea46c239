// The training pass's row steps (train_pass.hpp) beside the kernel's (random_weights_steps.hpp): the norms' forward
// and backward, GELU's derivative, the bias gradients' column sums (inline here), and the attention heads' and
// GELU's forward and backward (train_steps.cpp, compiled for x86-64-v3 and baseline x86-64 and chosen at run time).
// Internal to core/train/.
#pragma once

#include <cmath>
#include <cstring>
#include <vector>

#include "core/kernel/network/random_weights_math.hpp"
#include "core/train/train_buffers.hpp"

namespace maskscope::train::steps {

using Buffers = TrainPass::Buffers;

// rows x cols of `in`, summed over rows into `out` (a bias's gradient), in row order.
inline void add_column_sums(const float* in, std::size_t rows, int cols, float* out) {
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
void attention_forward(Buffers& b, LayerActs& la);

// The backward of attention_forward: d o (N x d) to d qkv (N x 3d). Per sequence and head, with A = softmax(S):
// dV = A^T dO, dA = dO V^T, dS = A (dA - rowsum(A dA)), dQ = scale dS K, dK = scale dS^T Q, then RoPE's
// transpose on dQ and dK (a rotation's inverse).
void attention_backward(Buffers& b, const LayerActs& la, const float* dout, float* dqkv);

// g = GELU(u) (erf or tanh form).
void gelu_forward(Activation act, const float* u, float* g, std::size_t count);

// dg *= GELU'(u).
void gelu_backward(Activation act, const float* u, float* dg, std::size_t count);

}  // namespace maskscope::train::steps
