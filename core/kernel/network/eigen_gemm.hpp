// The random-weight network's matrix products through Eigen's GEMM (docs/performance.md, "Random
// weights: batched products"). The fixed network's forward pass multiplies the rows of a whole block
// of samples, (B n) x d by d x m, so that the products run near the machine's GEMM peak. This is the
// only place in core/ that includes Eigen's GEMM, compiled for x86-64-v3 (AVX2 + FMA) and x86-64-v4
// (AVX-512, about 1.7x faster where the processor has full-width units; eigen_gemm_level.inc) and chosen at
// run time; processors without AVX2 keep the hand-written per-sample products (random_weights_math.hpp).
// Internal to core/.
#pragma once

namespace maskscope::rw {

// True when the processor has AVX2 and FMA, so eigen_gemm may run.
bool eigen_gemm_available();

// The level the products run at: "x86-64-v4" (AVX-512), "x86-64-v3" (AVX2 + FMA) or "none". The best the
// processor has, unless the environment variable MASKSCOPE_GEMM names a lower one (docs/numerics.md). The two
// levels round differently: a result's kernel name says which ran (kernel_info.hpp).
const char* eigen_gemm_level();

// C (rows x cols) = A (rows x inner) B (inner x cols), all row-major and dense. Single-threaded (the
// run's workers are the threads). Its cache blocking is fixed, not read off the processor, so the
// bits of a row of C depend only on that row of A, B, the row's index, the three sizes and the level:
// the same on every machine at that level and for any split of the samples over threads, processes or shards.
void eigen_gemm(const float* A, int rows, int inner, const float* B, int cols, float* C);

// The training engine's backward products (core/train/), with the same fixed blocking: C (rows x cols) = A B^T
// (or += with `accumulate`) for B (cols x inner), and C += A^T B for A (inner x rows), B (inner x cols).
void eigen_gemm_nt(const float* A, int rows, int inner, const float* B, int cols, float* C, bool accumulate);
void eigen_gemm_tn_add(const float* A, int inner, int rows, const float* B, int cols, float* C);

}  // namespace maskscope::rw
