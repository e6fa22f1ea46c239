// Eigen's single-precision GEMM for the random-weight network (eigen_gemm.hpp). Compiled with
// -march=x86-64-v3 (core/CMakeLists.txt): Eigen picks its AVX2 + FMA kernel at compile time, so this
// file is the one place that includes it, and eigen_gemm_available() keeps other processors out. It
// holds no other code, so no inline function of the standard library is compiled here for AVX2.
#include "core/kernel/eigen_gemm.hpp"

// Eigen's templates and inline functions compiled here use AVX2; under their own namespace name the
// linker cannot merge them with a baseline translation unit's copies of the same functions (which would
// run AVX2 code on any processor, or baseline code here).
#define Eigen maskscope_eigen_x86_64_v3
#include <Eigen/Core>

namespace maskscope::rw {

bool eigen_gemm_available() {
  static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return ok;
}

namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Eigen sizes its blocks from the cache sizes it reads off the processor; fixed sizes (those of the
// AMD EPYC Zen 3 of docs/performance.md: 32 KiB L1, 512 KiB L2, 32 MiB L3) make the summation order,
// and so the bits, the same on every machine.
void fix_blocking() {
  static const bool fixed = (Eigen::setCpuCacheSizes(32 * 1024, 512 * 1024, 32 * 1024 * 1024), true);
  (void)fixed;
}

}  // namespace

void eigen_gemm(const float* A, int rows, int inner, const float* B, int cols, float* C) {
  fix_blocking();
  Eigen::Map<const RowMajor> a(A, rows, inner), b(B, inner, cols);
  Eigen::Map<RowMajor> c(C, rows, cols);
  c.noalias() = a * b;
}

void eigen_gram(const float* Y, int rows, int inner, float* G) {
  fix_blocking();
  Eigen::Map<const RowMajor> y(Y, rows, inner);
  Eigen::Map<RowMajor> g(G, rows, rows);
  g.noalias() = y * y.transpose();
}

}  // namespace maskscope::rw
