// Eigen's GEMM for x86-64-v3 (AVX2 + FMA): eigen_gemm_level.inc, compiled with -march=x86-64-v3.
#define Eigen maskscope_eigen_x86_64_v3
#define MASKSCOPE_GEMM_LEVEL v3
#include "core/kernel/network/eigen_gemm_level.inc"
