// Which level of Eigen's GEMM runs (eigen_gemm.hpp): the processor's best, or the one MASKSCOPE_GEMM names.
// Compiled for baseline x86-64; it includes no Eigen header.
#include "core/kernel/network/eigen_gemm.hpp"

#include <cstdlib>
#include <cstring>
#include <iostream>

#include "core/kernel/network/eigen_gemm_levels.hpp"

namespace maskscope::rw {

namespace {

enum class Level { none, v3, v4 };

Level best_level() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v4")) return Level::v4;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Level::v3;
  return Level::none;
}

// MASKSCOPE_GEMM=x86-64-v3 runs the AVX2 products on an AVX-512 processor: that level's bits (docs/numerics.md),
// for comparing with results of AVX2 machines. A level the processor lacks, or another value, is named on
// standard error and the best level runs.
Level chosen_level() {
  const Level best = best_level();
  const char* want = std::getenv("MASKSCOPE_GEMM");
  if (!want || !*want) return best;
  if (std::strcmp(want, "x86-64-v3") == 0 && best != Level::none) return Level::v3;
  if (std::strcmp(want, "x86-64-v4") == 0 && best == Level::v4) return Level::v4;
  std::cerr << "maskscope: MASKSCOPE_GEMM='" << want
            << "' is not a level this processor runs (x86-64-v3 with AVX2 and FMA, x86-64-v4 with AVX-512); "
               "using its best, "
            << (best == Level::v4   ? "x86-64-v4"
                : best == Level::v3 ? "x86-64-v3"
                                    : "none")
            << "\n";
  return best;
}

Level level() {
  static const Level l = chosen_level();
  return l;
}

}  // namespace

bool eigen_gemm_available() { return level() != Level::none; }

const char* eigen_gemm_level() {
  switch (level()) {
    case Level::v4: return "x86-64-v4";
    case Level::v3: return "x86-64-v3";
    case Level::none: break;
  }
  return "none";
}

void eigen_gemm(const float* A, int rows, int inner, const float* B, int cols, float* C) {
  if (level() == Level::v4) return v4::gemm(A, rows, inner, B, cols, C);
  v3::gemm(A, rows, inner, B, cols, C);
}

void eigen_gemm_nt(const float* A, int rows, int inner, const float* B, int cols, float* C, bool accumulate) {
  if (level() == Level::v4) return v4::gemm_nt(A, rows, inner, B, cols, C, accumulate);
  v3::gemm_nt(A, rows, inner, B, cols, C, accumulate);
}

void eigen_gemm_tn_add(const float* A, int inner, int rows, const float* B, int cols, float* C) {
  if (level() == Level::v4) return v4::gemm_tn_add(A, inner, rows, B, cols, C);
  v3::gemm_tn_add(A, inner, rows, B, cols, C);
}

}  // namespace maskscope::rw
