// Bartlett attention for per-sample weights (docs/numerics.md, "Bartlett attention"): at mean 0
// without RoPE and with d_h >= n, a head's q' k'^T and the Gram matrix of its values have the law of the
// direct draws', from n x n factors (2 n^2 + n draws a head instead of 3 n d_h). Always inlined into the
// kernel's clones (random_weights.cpp). Internal to core/.
#pragma once

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/kernel/network/random_weights_init.hpp"
#include "core/kernel/network/random_weights_math.hpp"
#include "core/model/settings.hpp"
#include "core/random/random_stream.hpp"

namespace maskscope::rw {

// Whether a run's attention sublayers take the Bartlett draws: per-sample weights, W_QKV and W_O of
// mean 0 (a mean adds mu (Y 1) 1^T, which needs Y itself), no RoPE (it turns each q_i and k_j by its
// own position) and d_h >= n (the keys' QR factor is n x n), and without stage Gram matrices (the Gram of q'
// = C G is not the Gram of q = C Z_q in law, nor are the values' stages: those runs draw q, k, v directly).
inline bool bartlett_exact(const Settings& s) {
  return s.random_weights() && s.weights == WeightsMode::per_sample && s.init_mean == 0.0 && !s.rope() &&
         s.head_width() >= s.n && !s.stage_grams;
}

// The Bartlett factor's diagonal laws for W_n(d_h, I): chi_{d_h - i}, i = 0 .. n - 1.
inline std::vector<ChiLaw> bartlett_chi_laws(int n, int dh) {
  std::vector<ChiLaw> laws;
  for (int i = 0; i < n; ++i) laws.emplace_back(double(dh - i));
  return laws;
}

// Normals a head takes: G (n x n), the keys' and the values' factors below their diagonals
// (n (n - 1) / 2 each), then the first normal of each of their 2 n chi draws.
inline std::size_t bartlett_head_normals(int n) { return 2 * std::size_t(n) * n + std::size_t(n); }

// The H heads' draws (H bartlett_head_normals(n) normals at z, in head order), their chi entries drawn
// in place: head h's 2 n chi first attempts become chi_{d_h - i} (keys' factor, then the values'),
// each with a uniform from the words stream (32 bits, two a word, as draw_chis).
template <class Chi>
[[gnu::always_inline]] inline void bartlett_chis(SampleStream& rng, int n, int heads, const ChiLaw* laws, float* z,
                                                 Chi&& chi) {
  const std::size_t per_head = bartlett_head_normals(n), chis_at = per_head - 2 * std::size_t(n);
  for (int h = 0; h < heads; ++h) {
    float* cz = z + std::size_t(h) * per_head + chis_at;
    std::uint64_t u_word = 0;
    for (int r = 0; r < 2 * n; ++r) {
      if (r % 2 == 0) u_word = rng.next();
      const std::uint32_t u32 = static_cast<std::uint32_t>(r % 2 == 0 ? u_word : u_word >> 32);
      const double u = (double(u32) + 0.5) * 0x1.0p-32;
      cz[r] = static_cast<float>(chi(rng, laws[r % n], double(cz[r]), u));
    }
  }
}

// The heads' width on Bartlett rows: n rounded up to whole 8-lane vectors (the columns beyond n are zeros,
// which change no dot product), at most d_h (the buffers hold d_h columns a head).
inline int bartlett_width(int n, int dh) { return std::min((n + 7) / 8 * 8, dh); }

// One head's rows from its draws z (bartlett_head_normals(n), chis drawn) and C = sigma L (lower,
// L L^T = Y Y^T): q' = C G, k' = C B_k, v' = C B_v (n x n each; B lower with N(0, 1) below the diagonal,
// chi_{d_h - i} on it), written at q, k, v as rows of `width` >= n (zeros beyond n) with row stride `stride`.
// Then q' k'^T has the law of q k^T = sigma^2 L Z_q Z_k^T L^T, and v' v'^T the law of
// v v^T = sigma^2 L Z_v Z_v^T L^T, jointly (docs/numerics.md). `factor` is n x width scratch.
[[gnu::always_inline]] inline void bartlett_head(const float* C, const float* z, int n, int width, float* factor,
                                                 float* q, float* k, float* v, std::size_t stride) {
  const std::size_t nn = std::size_t(n) * n, below = nn / 2 - std::size_t(n) / 2;  // n (n - 1) / 2
  const float* chis = z + nn + 2 * below;
  for (int which = 0; which < 3; ++which) {  // G, then the keys' and the values' factors
    const float* off = z + nn + std::size_t(which - 1) * below;
    std::fill(factor, factor + std::size_t(n) * width, 0.0f);
    std::size_t at = 0;
    for (int i = 0; i < n; ++i) {
      float* f = factor + std::size_t(i) * width;
      if (which == 0) {
        std::copy(z + std::size_t(i) * n, z + std::size_t(i + 1) * n, f);
        continue;
      }
      std::copy(off + at, off + at + std::size_t(i), f);  // N(0, 1) below the diagonal
      at += std::size_t(i);
      f[i] = chis[std::size_t(which - 1) * n + i];
    }
    lower_gemm(C, n, factor, std::size_t(width), width, which == 0 ? q : which == 1 ? k : v, stride);
  }
}

}  // namespace maskscope::rw
