// The machine's single-precision GEMM speed, measured with the same Eigen GEMM the fixed random-weight
// network uses (eigen_gemm.hpp): bench's reference for the forward pass's share of the peak.
#pragma once

namespace maskscope {

// GFLOP/s of `threads` threads each multiplying (rows x inner) by (inner x cols) for about `seconds`;
// 0 where the batched products do not run (no AVX2 + FMA).
double gemm_reference_gflops(int rows, int inner, int cols, int threads, double seconds);

}  // namespace maskscope
