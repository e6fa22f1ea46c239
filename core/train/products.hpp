// The training engine's matrix products (docs/model.md, "Training"): Eigen's GEMM with its fixed blocking
// (core/kernel/network/eigen_gemm.hpp, the one file that includes Eigen's products) on processors with AVX2 and
// FMA, plain loops elsewhere. Row-major, dense; the bits depend on the shapes and values only, never on threads.
#pragma once

#include "core/kernel/network/eigen_gemm.hpp"

namespace maskscope::train {

// C (rows x cols) = A (rows x inner) B (inner x cols).
inline void matmul(const float* A, int rows, int inner, const float* B, int cols, float* C) {
  if (rw::eigen_gemm_available()) return rw::eigen_gemm(A, rows, inner, B, cols, C);
  for (long i = 0; i < rows; ++i)
    for (long j = 0; j < cols; ++j) {
      float acc = 0.0f;
      for (long p = 0; p < inner; ++p) acc += A[i * inner + p] * B[p * cols + j];
      C[i * cols + j] = acc;
    }
}

// C (rows x cols) = A (rows x inner) B^T for B (cols x inner).
inline void matmul_nt(const float* A, int rows, int inner, const float* B, int cols, float* C) {
  if (rw::eigen_gemm_available()) return rw::eigen_gemm_nt(A, rows, inner, B, cols, C, false);
  for (long i = 0; i < rows; ++i)
    for (long j = 0; j < cols; ++j) {
      float acc = 0.0f;
      for (long p = 0; p < inner; ++p) acc += A[i * inner + p] * B[j * inner + p];
      C[i * cols + j] = acc;
    }
}

// C (rows x cols) += A^T B for A (inner x rows), B (inner x cols): a weight's gradient from its layer's inputs
// and output gradients over `inner` token rows.
inline void matmul_tn_add(const float* A, int inner, int rows, const float* B, int cols, float* C) {
  if (rw::eigen_gemm_available()) return rw::eigen_gemm_tn_add(A, inner, rows, B, cols, C);
  for (long i = 0; i < rows; ++i)
    for (long j = 0; j < cols; ++j) {
      float acc = 0.0f;
      for (long p = 0; p < inner; ++p) acc += A[p * rows + i] * B[p * cols + j];
      C[i * cols + j] += acc;
    }
}

}  // namespace maskscope::train
