// The random-weight kernel's vector arithmetic (random_weights.cpp): the register-blocked matrix
// product and GELU on 8-lane vectors (simd.hpp), always inlined into each of its clones. Internal to core/.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstring>

#include "core/kernel/simd.hpp"

namespace maskscope::rw {

using simd::f8;
using simd::load;

[[gnu::always_inline]] inline void store(float* p, f8 v) { std::memcpy(p, &v, sizeof v); }

// C[0..R) x [j, j + 16) of C = A B for R rows of A (row-major, `inner` columns).
template <int R>
[[gnu::always_inline]] inline void gemm_block(const float* A, int inner, const float* B, int cols, int j, float* C) {
  f8 acc0[R], acc1[R];
  for (int r = 0; r < R; ++r) acc0[r] = acc1[r] = f8{};
  for (int p = 0; p < inner; ++p) {
    const float* b = B + std::size_t(p) * cols + j;
    const f8 b0 = load(b), b1 = load(b + 8);
    for (int r = 0; r < R; ++r) {
      const float a = A[std::size_t(r) * inner + p];
      acc0[r] += a * b0;
      acc1[r] += a * b1;
    }
  }
  for (int r = 0; r < R; ++r) {
    store(C + std::size_t(r) * cols + j, acc0[r]);
    store(C + std::size_t(r) * cols + j + 8, acc1[r]);
  }
}

// C (rows x cols) = A (rows x inner) B (inner x cols), all row-major. Panels of 16 columns are
// the outer loop, so a panel of B stays in L1 while blocks of 4 rows of A pass over it.
[[gnu::always_inline]] inline void gemm(const float* A, int rows, int inner, const float* B, int cols, float* C) {
  int j = 0;
  for (; j + 16 <= cols; j += 16) {
    int i = 0;
    for (; i + 4 <= rows; i += 4)
      gemm_block<4>(A + std::size_t(i) * inner, inner, B, cols, j, C + std::size_t(i) * cols);
    for (; i < rows; ++i) gemm_block<1>(A + std::size_t(i) * inner, inner, B, cols, j, C + std::size_t(i) * cols);
  }
  for (; j < cols; ++j)
    for (int i = 0; i < rows; ++i) {
      float acc = 0.0f;
      for (int p = 0; p < inner; ++p) acc += A[std::size_t(i) * inner + p] * B[std::size_t(p) * cols + j];
      C[std::size_t(i) * cols + j] = acc;
    }
}

// Rows [i0, i0 + R) x columns [j, j + 8 V) of out = C Z for C lower triangular (n x n, row-major, zeros
// above the diagonal) and Z (n rows of stride zs): the sums stop at the block's last row, p < i0 + R.
template <int R, int V>
[[gnu::always_inline]] inline void lower_block(const float* C, int n, const float* Z, std::size_t zs, int i0, int j,
                                               float* out, std::size_t os) {
  f8 acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = f8{};
  for (int p = 0; p < i0 + R; ++p) {
    const float* z = Z + std::size_t(p) * zs + j;
    f8 zv[V];
    for (int v = 0; v < V; ++v) zv[v] = load(z + 8 * v);
    for (int r = 0; r < R; ++r) {
      const float c = C[std::size_t(i0 + r) * n + p];
      for (int v = 0; v < V; ++v) acc[r][v] += c * zv[v];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) store(out + std::size_t(i0 + r) * os + j + 8 * v, acc[r][v]);
}

// The rows n % 6 left over from blocks of 6 are the first ones, whose sums are the shortest: the long
// sums of the last rows run in whole blocks (n 22: rows 0-3 in a block of 4, then 4-9, 10-15, 16-21; with the
// leftover rows last, a quarter of the products ran in blocks of 2 at about half the speed). A block's
// extra products are by the zeros above the diagonal, exact in a fused multiply-add: the same bits.
template <int V>
[[gnu::always_inline]] inline void lower_panel(const float* C, int n, const float* Z, std::size_t zs, int j, float* out,
                                               std::size_t os) {
  int i = 0;
  const int rest = n % 6;
  if (rest >= 4) {
    lower_block<4, V>(C, n, Z, zs, i, j, out, os);
    i += 4;
  }
  if (rest - i >= 2) {
    lower_block<2, V>(C, n, Z, zs, i, j, out, os);
    i += 2;
  }
  if (rest - i == 1) lower_block<1, V>(C, n, Z, zs, i++, j, out, os);
  for (; i + 6 <= n; i += 6) lower_block<6, V>(C, n, Z, zs, i, j, out, os);
}

// out (n x cols, row stride os) = C Z for C lower triangular (n x n) and Z (n x cols, row stride zs): the
// per-sample draws' factor times their normals (random_weights.cpp), about half the products of a dense
// one. Panels of 16 columns (then 8), blocks of 6 rows in registers.
[[gnu::always_inline]] inline void lower_gemm(const float* C, int n, const float* Z, std::size_t zs, int cols,
                                              float* out, std::size_t os) {
  int j = 0;
  for (; j + 16 <= cols; j += 16) lower_panel<2>(C, n, Z, zs, j, out, os);
  for (; j + 8 <= cols; j += 8) lower_panel<1>(C, n, Z, zs, j, out, os);
  for (; j < cols; ++j)
    for (int i = 0; i < n; ++i) {
      float acc = 0.0f;
      for (int p = 0; p <= i; ++p) acc += C[std::size_t(i) * n + p] * Z[std::size_t(p) * zs + j];
      out[std::size_t(i) * os + j] = acc;
    }
}

// erf (Abramowitz & Stegun 7.1.28, |error| <= 3e-7): 1 - 1 / (1 + a1 x + ... + a6 x^6)^16 for x >= 0, odd.
// A polynomial, four squarings and one division, about 20 operations a vector against 7.1.26's 45 with its
// exponential (GELU took 14% of the per-sample kernel). For large |x| the 16th power overflows to
// infinity and the result is exactly 1.
[[gnu::always_inline]] inline f8 erf8(f8 x) {
  const f8 ax = x < 0.0f ? -x : x;
  f8 p = 4.30638e-5f * ax + 2.765672e-4f;
  p = p * ax + 1.520143e-4f;
  p = p * ax + 9.2705272e-3f;
  p = p * ax + 4.22820123e-2f;
  p = p * ax + 7.05230784e-2f;
  p = p * ax + 1.0f;
  p = p * p;
  p = p * p;
  p = p * p;
  p = p * p;
  const f8 e = 1.0f - 1.0f / p;
  return x < 0.0f ? -e : e;
}

[[gnu::always_inline]] inline void gelu_inplace(float* u, std::size_t count) {
  std::size_t k = 0;
  for (; k + 8 <= count; k += 8) {
    const f8 x = load(u + k);
    store(u + k, 0.5f * x * (1.0f + erf8(x * 0.70710678118654752f)));
  }
  if (k < count) {
    float tail[8] = {};
    std::memcpy(tail, u + k, sizeof(float) * (count - k));
    const f8 x = load(tail);
    store(tail, 0.5f * x * (1.0f + erf8(x * 0.70710678118654752f)));
    std::memcpy(u + k, tail, sizeof(float) * (count - k));
  }
}

// GELU's tanh form, 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))): GPT-2's "gelu_new", the activation of
// networks trained with it (Network::activation). Scalar: only loaded and trained networks use it.
inline void gelu_tanh_inplace(float* u, std::size_t count) {
  for (std::size_t k = 0; k < count; ++k) {
    const float x = u[k];
    u[k] = 0.5f * x * (1.0f + std::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
  }
}

}  // namespace maskscope::rw
