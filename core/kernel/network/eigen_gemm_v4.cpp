// Eigen's GEMM for x86-64-v4 (AVX-512): eigen_gemm_level.inc, compiled with -march=x86-64-v4.
#define Eigen maskscope_eigen_x86_64_v4
#define MASKSCOPE_GEMM_LEVEL v4
#include "core/kernel/network/eigen_gemm_level.inc"
