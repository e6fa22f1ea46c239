// Eigen's GEMM at each x86-64 level the processor has (eigen_gemm_levels.hpp): every form (A B, A B^T, C += A^T B)
// within the float error bound of a double-precision product, at shapes of the training engine and odd ones.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/kernel/network/eigen_gemm.hpp"

#if defined(__x86_64__)
#include "core/kernel/network/eigen_gemm_levels.hpp"

using namespace maskscope;

namespace {

struct Level {
  const char* name;
  bool runs;
  void (*gemm)(const float*, int, int, const float*, int, float*);
  void (*gemm_nt)(const float*, int, int, const float*, int, float*, bool);
  void (*gemm_tn_add)(const float*, int, int, const float*, int, float*);
};

std::vector<float> values(std::size_t count, std::uint32_t seed) {
  std::vector<float> v(count);
  std::uint32_t x = seed * 2654435761u + 1u;
  for (float& e : v) {
    x = x * 1664525u + 1013904223u;
    e = float(x >> 8) / float(1u << 24) * 2.0f - 1.0f;
  }
  return v;
}

// |computed - exact| <= gamma_K sum_p |a_ip b_pj| with gamma_K = K u / (1 - K u), u = 2^-24 (Higham, Accuracy and
// Stability of Numerical Algorithms, 3.1), for any order of the K products' sums; the accumulation into a C that
// held a value adds one rounding more (K + 1).
void check_product(const std::vector<float>& c, const std::vector<double>& exact, const std::vector<double>& bound_sum,
                   int terms) {
  const double u = std::ldexp(1.0, -24), gamma = terms * u / (1.0 - terms * u);
  std::size_t worst = 0;
  double worst_ratio = 0.0;
  for (std::size_t e = 0; e < c.size(); ++e) {
    const double ratio = std::abs(double(c[e]) - exact[e]) / (gamma * bound_sum[e] + 1e-300);
    if (ratio > worst_ratio) worst_ratio = ratio, worst = e;
  }
  CAPTURE(worst);
  CHECK(worst_ratio <= 1.0);
}

}  // namespace

TEST_CASE("Eigen's GEMM: each level's three forms are within the float error bound of the exact product") {
  if (!rw::eigen_gemm_available()) return;  // processors without AVX2 and FMA take the per-sample products
  __builtin_cpu_init();
  const Level levels[] = {
      {"x86-64-v3", true, rw::v3::gemm, rw::v3::gemm_nt, rw::v3::gemm_tn_add},
      {"x86-64-v4", bool(__builtin_cpu_supports("x86-64-v4")), rw::v4::gemm, rw::v4::gemm_nt, rw::v4::gemm_tn_add},
  };
  const int shapes[][3] = {{1408, 384, 1152}, {1408, 1536, 384}, {22, 64, 22}, {37, 100, 13}, {1, 7, 1}};
  for (const Level& level : levels) {
    if (!level.runs) {
      MESSAGE("this processor has no " << level.name);
      continue;
    }
    for (const auto& shape : shapes) {
      const int rows = shape[0], inner = shape[1], cols = shape[2];
      CAPTURE(level.name);
      CAPTURE(rows);
      CAPTURE(inner);
      CAPTURE(cols);
      const std::vector<float> a = values(std::size_t(rows) * inner, 1), b = values(std::size_t(inner) * cols, 2);
      std::vector<double> exact(std::size_t(rows) * cols, 0.0), bound(exact.size(), 0.0);
      for (int i = 0; i < rows; ++i)
        for (int p = 0; p < inner; ++p)
          for (int j = 0; j < cols; ++j) {
            const double t = double(a[std::size_t(i) * inner + p]) * b[std::size_t(p) * cols + j];
            exact[std::size_t(i) * cols + j] += t;
            bound[std::size_t(i) * cols + j] += std::abs(t);
          }
      std::vector<float> c(exact.size(), 7.0f);  // overwritten
      level.gemm(a.data(), rows, inner, b.data(), cols, c.data());
      check_product(c, exact, bound, inner);

      // A B^T with B^T stored as B transposed (cols x inner).
      std::vector<float> bt(b.size());
      for (int p = 0; p < inner; ++p)
        for (int j = 0; j < cols; ++j) bt[std::size_t(j) * inner + p] = b[std::size_t(p) * cols + j];
      std::fill(c.begin(), c.end(), 7.0f);
      level.gemm_nt(a.data(), rows, inner, bt.data(), cols, c.data(), false);
      check_product(c, exact, bound, inner);

      // C += A^T B with A^T stored as A transposed (inner x rows), onto C = 0.5.
      std::vector<float> at(a.size());
      for (int i = 0; i < rows; ++i)
        for (int p = 0; p < inner; ++p) at[std::size_t(p) * rows + i] = a[std::size_t(i) * inner + p];
      std::fill(c.begin(), c.end(), 0.5f);
      level.gemm_tn_add(at.data(), inner, rows, b.data(), cols, c.data());
      std::vector<double> shifted(exact), shifted_bound(bound);
      for (std::size_t e = 0; e < exact.size(); ++e) shifted[e] += 0.5, shifted_bound[e] += 0.5;
      check_product(c, shifted, shifted_bound, inner + 1);
    }
  }
}

#endif
