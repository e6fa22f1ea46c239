// One sample's Gram matrices of the forward pass's stages (stages.hpp, docs/model.md section 12), into
// the block sums: shared by both families' kernels (simulator.cpp, the lane kernel, random_weights*.cpp)
// and the tensors' analysis, so every source goes through the same rounding. Internal to core/.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "core/kernel/kernel_steps.hpp"
#include "core/stats/accumulator.hpp"

namespace maskscope::kernel {

// G (n x n, its lower triangle j <= i) = the inner products <s_i, s_j> of rows stored as `parts`
// consecutive blocks of n x width (head-major heads: <s_i, s_j> = sum_h <s_h,i, s_h,j>, the heads
// concatenated; parts 1: plain rows of width d).
[[gnu::always_inline]] inline void stage_gram(const float* rows, int n, int width, int parts, float* G) {
  const std::size_t block = std::size_t(n) * std::size_t(width);
  for (int p = 0; p < parts; ++p) {
    const float* r = rows + std::size_t(p) * block;
    for (int i = 0; i < n; ++i) {
      float* Gi = G + std::size_t(i) * n;
      if (p == 0) {
        dot_row(r + std::size_t(i) * width, r, width, 0, i, 1.0f, Gi);
        continue;
      }
      float part[8];
      for (int j0 = 0; j0 <= i; j0 += 8) {
        const int j1 = std::min(i, j0 + 7);
        dot_row(r + std::size_t(i) * width, r, width, j0, j1, 1.0f, part);
        for (int j = j0; j <= j1; ++j) Gi[j] += part[j - j0];
      }
    }
  }
}

// C (lower triangle) = G_ij / sqrt(G_ii G_jj), cos(s, s) = 1 (0 for a zero row, as output_cosines).
[[gnu::always_inline]] inline void stage_cosines(int n, const float* G, float* inv_norm, float* C) {
  for (int i = 0; i < n; ++i) {
    const float g = G[std::size_t(i) * n + i];
    inv_norm[i] = g > 0.0f ? 1.0f / std::sqrt(g) : 0.0f;
  }
  for (int i = 0; i < n; ++i) {
    const float* Gi = G + std::size_t(i) * n;
    float* Ci = C + std::size_t(i) * n;
    for (int j = 0; j < i; ++j) Ci[j] = Gi[j] * inv_norm[i] * inv_norm[j];
    Ci[i] = inv_norm[i] > 0.0f ? 1.0f : 0.0f;
  }
}

// Scratch of one sample's stage Gram matrices: G and C (n x n each) and n inverse norms.
struct StageScratch {
  float* gram;
  float* cosine;
  float* inv_norm;
};

// Stage `stage` of layer l (rows as stage_gram takes them) into the sums, when the layout has it: its
// inner products and cosines, lower triangles (AccumLayout::stage_gram, stage_cosine).
template <bool kFirst = false, bool kSquares = true>
[[gnu::always_inline]] inline void add_stage(const AccumLayout& L, int l, int stage, const float* rows, int width,
                                             int parts, const StageScratch& w, double* sum, double* sq) {
  if (!L.has_stage(stage)) return;
  const int n = L.n;
  stage_gram(rows, n, width, parts, w.gram);
  stage_cosines(n, w.gram, w.inv_norm, w.cosine);
  add_lower<kFirst, kSquares>(sum, sq, L.stage_gram(l, stage), n, w.gram);
  add_lower<kFirst, kSquares>(sum, sq, L.stage_cosine(l, stage), n, w.cosine);
}

}  // namespace maskscope::kernel
