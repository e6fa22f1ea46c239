// Eigen's single-precision GEMM for the random-weight network (eigen_gemm.hpp). Compiled with
// -march=x86-64-v3 (core/CMakeLists.txt): Eigen picks its AVX2 + FMA kernel at compile time, so this
// file is the one place that includes it, and eigen_gemm_available() keeps other processors out. It
// holds no other code, so no inline function of the standard library is compiled here for AVX2.
#include "core/kernel/network/eigen_gemm.hpp"

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

// Eigen sizes its blocks from the cache sizes it reads off the processor; fixed sizes (those of the
// AMD EPYC Zen 3 of docs/performance.md as Eigen reads them: 32 KiB L1, 1 MiB L2; 32 MiB L3) make the
// summation order, and so the bits, the same on every machine.
void fix_blocking() {
  static const bool fixed = (Eigen::setCpuCacheSizes(32 * 1024, 1024 * 1024, 32 * 1024 * 1024), true);
  (void)fixed;
}

// The blocking (panel sizes and packing buffers) of a row-major product, as `c.noalias() = a * b` makes
// it for each product. Made per call, its buffers (a few MB) are allocated and freed every time, which
// cost a quarter of the GEMM's speed in maskscope-cli (OpenMPI's memory hooks keep glibc from reusing
// them); each thread keeps the blockings of its last kSlots shapes instead.
using Blocking = Eigen::internal::gemm_blocking_space<Eigen::RowMajor, float, float, Eigen::Dynamic, Eigen::Dynamic,
                                                      Eigen::Dynamic, 1, false>;
constexpr int kSlots = 24;  // a forward pass uses four shapes; a training step about twenty
struct BlockingCache {
  struct Slot {
    int rows = -1, inner = -1, cols = -1;
    Blocking* blocking = nullptr;
  };
  Slot slots[kSlots];
  int next = 0;
  ~BlockingCache() {
    for (Slot& s : slots) delete s.blocking;
  }
  Blocking& get(int rows, int inner, int cols) {
    for (Slot& s : slots)
      if (s.blocking && s.rows == rows && s.inner == inner && s.cols == cols) return *s.blocking;
    Slot& s = slots[next];
    next = (next + 1) % kSlots;
    delete s.blocking;
    s = {rows, inner, cols, new Blocking(rows, cols, inner, 1, true)};
    s.blocking->allocateAll();
    return *s.blocking;
  }
};
thread_local BlockingCache cache;

}  // namespace

void eigen_gemm(const float* A, int rows, int inner, const float* B, int cols, float* C) {
  fix_blocking();
  // What `Map<RowMajor>(C) = Map(A) * Map(B)` does (GeneralMatrixMatrix.h: zero C, then C += A B), with
  // this thread's kept blocking.
  for (std::ptrdiff_t e = 0; e < std::ptrdiff_t(rows) * cols; ++e) C[e] = 0.0f;
  Eigen::internal::general_matrix_matrix_product<Eigen::Index, float, Eigen::RowMajor, false, float, Eigen::RowMajor,
                                                 false, Eigen::RowMajor, 1>::run(rows, cols, inner, A, inner, B, cols,
                                                                                 C, 1, cols, 1.0f,
                                                                                 cache.get(rows, inner, cols), nullptr);
}

void eigen_gemm_nt(const float* A, int rows, int inner, const float* B, int cols, float* C, bool accumulate) {
  fix_blocking();
  if (!accumulate)
    for (std::ptrdiff_t e = 0; e < std::ptrdiff_t(rows) * cols; ++e) C[e] = 0.0f;
  // B (cols x inner, row-major) is B^T (inner x cols) in column-major order.
  Eigen::internal::general_matrix_matrix_product<Eigen::Index, float, Eigen::RowMajor, false, float, Eigen::ColMajor,
                                                 false, Eigen::RowMajor, 1>::run(rows, cols, inner, A, inner, B, inner,
                                                                                 C, 1, cols, 1.0f,
                                                                                 cache.get(rows, inner, cols), nullptr);
}

void eigen_gemm_tn_add(const float* A, int inner, int rows, const float* B, int cols, float* C) {
  fix_blocking();
  // A (inner x rows, row-major) is A^T (rows x inner) in column-major order.
  Eigen::internal::general_matrix_matrix_product<Eigen::Index, float, Eigen::ColMajor, false, float, Eigen::RowMajor,
                                                 false, Eigen::RowMajor, 1>::run(rows, cols, inner, A, rows, B, cols, C,
                                                                                 1, cols, 1.0f,
                                                                                 cache.get(rows, inner, cols), nullptr);
}

}  // namespace maskscope::rw
