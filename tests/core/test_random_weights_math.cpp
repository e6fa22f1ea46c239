// The random-weight kernel's vector arithmetic (core/kernel/network/random_weights_math.hpp): GELU against erf in
// double, and the per-sample draws' triangular product against sums in double.
#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <vector>

#include "core/kernel/network/random_weights.hpp"
#include "core/kernel/network/random_weights_math.hpp"

using namespace maskscope;

TEST_CASE("lower_gemm: C Z for a lower triangular C at every row remainder and column tail, nothing past the columns") {
  // The per-sample draws' product (random_weights_math.hpp): blocks of 6 rows with the n % 6 leftover rows
  // first, panels of 16 and 8 columns and a scalar tail; against sums in double.
  for (int n = 1; n <= 40; ++n)
    for (int cols : {1, 7, 8, 9, 16, 17, 24, 33, 64}) {
      CAPTURE(n);
      CAPTURE(cols);
      const std::size_t zs = std::size_t(cols) + 3, os = std::size_t(cols) + 5;
      std::vector<float> C(std::size_t(n) * n, 0.0f), Z(std::size_t(n) * zs), out(std::size_t(n) * os, -7.0f);
      for (int i = 0; i < n; ++i)
        for (int p = 0; p <= i; ++p) C[std::size_t(i) * n + p] = 0.01f * float((i * 31 + p * 17) % 23) - 0.1f;
      for (std::size_t e = 0; e < Z.size(); ++e) Z[e] = float((e * 7919) % 1000) * 1e-3f - 0.5f;
      rw::lower_gemm(C.data(), n, Z.data(), zs, cols, out.data(), os);
      int wrong = 0, touched = 0;
      for (int i = 0; i < n; ++i) {
        for (int j = 0; j < cols; ++j) {
          double exact = 0.0;
          for (int p = 0; p <= i; ++p) exact += double(C[std::size_t(i) * n + p]) * Z[std::size_t(p) * zs + j];
          // |C| <= 0.12, |Z| <= 0.5, at most 40 terms: float rounding stays far below 1e-5
          if (std::abs(exact - double(out[std::size_t(i) * os + j])) > 1e-5) ++wrong;
        }
        for (std::size_t j = std::size_t(cols); j < os; ++j) touched += out[std::size_t(i) * os + j] != -7.0f;
      }
      CHECK(wrong == 0);
      CHECK(touched == 0);
    }
}

TEST_CASE("GELU with erf: 0.5 x (1 + erf(x / sqrt 2)) within 3e-7 (1 + |x|)") {
  for (double x = -8.0; x <= 8.0; x += 0.0137) {
    const double exact = 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    CHECK(std::abs(gelu(float(x)) - exact) <= 3e-7 * (1.0 + std::abs(x)));
  }
  CHECK(gelu(0.0f) == 0.0f);
}
