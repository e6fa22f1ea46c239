// Eigen's GEMM compiled once per x86-64 level (eigen_gemm_level.inc): v3 (AVX2 + FMA) and v4 (AVX-512). The
// dispatcher (eigen_gemm.cpp) calls the processor's best level through eigen_gemm.hpp. Internal to core/.
#pragma once

namespace maskscope::rw {

#define MASKSCOPE_GEMM_LEVEL_FUNCTIONS                                                                    \
  void gemm(const float* A, int rows, int inner, const float* B, int cols, float* C);                     \
  void gemm_nt(const float* A, int rows, int inner, const float* B, int cols, float* C, bool accumulate); \
  void gemm_tn_add(const float* A, int inner, int rows, const float* B, int cols, float* C);

namespace v3 {
MASKSCOPE_GEMM_LEVEL_FUNCTIONS
}
namespace v4 {
MASKSCOPE_GEMM_LEVEL_FUNCTIONS
}

#undef MASKSCOPE_GEMM_LEVEL_FUNCTIONS

}  // namespace maskscope::rw
