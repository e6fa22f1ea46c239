// The training pass's attention and GELU steps (train_steps.hpp).
#include "core/train/train_steps.hpp"

#include <algorithm>

namespace maskscope::train::steps {

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

}  // namespace maskscope::train::steps
