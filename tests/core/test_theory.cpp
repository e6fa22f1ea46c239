// Closed forms: agreement with the papers' printed formulas and their stated monotonicity.
#include <doctest/doctest.h>

#include <cmath>

#include "core/model/theory.hpp"

using namespace maskscope::theory;

TEST_CASE("Behind RoPE g(i), h(i) at gamma = 1 equal Eq. 3 as printed") {
  const double e = std::exp(1.0);
  for (double alpha : {0.0, 0.2, 0.5, 0.9})
    for (int i = 1; i <= 50; ++i) {
      const double ea = std::exp(alpha), D = e + (i - 1) * ea;
      const double g_paper = 2.0 * (2.0 * alpha * e + ea * (1.0 + alpha * (2 * i - 3))) / D;
      const double a = 2 * e + (i - 1) * ea;
      const double h2_paper =
          (a * a + 2 * a * ea * alpha * (i - 1) + ea * ea * (i - 1) * (1 + (i - 2) * alpha)) / (D * D);
      CHECK(behind_rope_g(i, alpha, 1.0) == doctest::Approx(g_paper).epsilon(1e-12));
      CHECK(behind_rope_h(i, alpha, 1.0) == doctest::Approx(std::sqrt(h2_paper)).epsilon(1e-12));
    }
}

TEST_CASE("Behind RoPE g'(i), h'(i) at gamma = 0 equal App. A.2 as printed") {
  const double e = std::exp(1.0);
  for (double alpha : {0.0, 0.3, 0.7})
    for (int i = 1; i <= 30; ++i) {
      const double ea = std::exp(alpha), D = e + (i - 1) * ea;
      const double g_paper = (e * alpha + ea * (1 + alpha * (i - 2))) / D;
      const double h2_paper =
          (e * e + 2 * std::exp(1 + alpha) * alpha * (i - 1) + ea * ea * (i - 1) * (1 + alpha * (i - 2))) / (D * D);
      CHECK(behind_rope_g(i, alpha, 0.0) == doctest::Approx(g_paper).epsilon(1e-12));
      CHECK(behind_rope_h(i, alpha, 0.0) == doctest::Approx(std::sqrt(h2_paper)).epsilon(1e-12));
    }
}

TEST_CASE("Behind RoPE layer-2 scores increase strictly in j below the diagonal (App. A.1)") {
  for (double gamma : {0.0, 1.0})
    for (double alpha : {0.0, 0.2, 0.6})
      for (int i = 3; i <= 20; ++i)
        for (int j = 1; j + 1 < i; ++j) {
          CHECK(behind_rope_layer2_score(i, j + 1, alpha, gamma) > behind_rope_layer2_score(i, j, alpha, gamma));
          CHECK(behind_rope_layer2_score(i, j, alpha, gamma) < 1.0);
        }
}

TEST_CASE("Behind RoPE layer-1 weights are a distribution over j <= i") {
  for (double alpha : {0.0, 0.4})
    for (int i = 1; i <= 12; ++i) {
      double total = 0;
      for (int j = 1; j <= i; ++j) total += behind_rope_layer1_weight(i, j, alpha);
      CHECK(total == doctest::Approx(1.0).epsilon(1e-12));
      CHECK(behind_rope_layer1_weight(i, i + 1, alpha) == 0.0);
    }
}

TEST_CASE("LN-recency Eq. 11: sqrt(d) on the diagonal, strictly increasing in j, finite at large d") {
  for (int d : {4, 16, 64}) {
    CHECK(ln_recency_s2(5, 5, d) == doctest::Approx(std::sqrt(d)));
    for (int i = 3; i <= 10; ++i)
      for (int j = 1; j + 1 < i; ++j) CHECK(ln_recency_s2(i, j + 1, d) > ln_recency_s2(i, j, d));
  }
  // Compare with the formula evaluated directly where it does not overflow.
  const int d = 16, i = 7, j = 3;
  const double E = std::exp(4.0);
  const double direct = 4.0 * (E + j - 1) / (std::sqrt(E * E + i - 1) * std::sqrt(E * E + j - 1));
  CHECK(ln_recency_s2(i, j, d) == doctest::Approx(direct).epsilon(1e-12));
  CHECK(std::isfinite(ln_recency_s2(10, 2, 1 << 20)));
}

TEST_CASE("LN-recency Eq. 42 h(j) matches the printed form and increases strictly in j") {
  // Direct evaluation of Eq. 42 at d = 16 (no overflow there).
  const int d = 16;
  const double sd = 4.0, E = std::exp(sd);
  for (double alpha : {0.0, 0.2, 0.5, 0.8})
    for (double gamma : {0.0, 1.0})
      for (int j = 1; j <= 10; ++j) {
        const double Ea = std::exp(alpha * sd), D = E + (j - 1) * Ea;
        const double inner = D * D * (gamma * gamma + 2 * alpha * gamma + alpha) +
                             D * (1 - alpha) * (2 * gamma * E + Ea) + (1 - alpha) * (E * E - std::exp(sd + sd * alpha));
        const double direct = D / (sd * std::sqrt(inner));
        CHECK(ln_recency_h_of_j(j, d, alpha, gamma) == doctest::Approx(direct).epsilon(1e-10));
        CHECK(ln_recency_h_of_j(j, d, alpha, gamma, false) == doctest::Approx(direct * sd).epsilon(1e-10));
      }
  for (double alpha : {0.2, 0.4, 0.6, 0.8})
    for (double gamma : {0.0, 1.0}) {
      const auto h = ln_recency_h_curve(10, 64, alpha, gamma);
      for (int j = 0; j + 1 < 10; ++j) CHECK(h[j + 1] > h[j]);
    }
  CHECK(std::isfinite(ln_recency_h_of_j(10, 1 << 20, 0.5, 1.0)));
}
