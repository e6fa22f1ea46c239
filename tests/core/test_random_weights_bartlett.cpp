// Bartlett attention (core/kernel/network/random_weights_bartlett.hpp, docs/numerics.md): one head's n x n rows
// q', k', v' against the closed-form moments of the direct draws q = sigma L Z_q, k = sigma L Z_k,
// v = sigma L Z_v (Z: n x d_h standard normal, L L^T = Y Y^T), and the whole per-sample run at mean 0
// against explicitly drawn networks.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/run/kernel_info.hpp"
#include "core/kernel/lane/lane_kernel.hpp"
#include "core/kernel/network/random_weights.hpp"
#include "core/run/runner.hpp"
#include "random_weights_helpers.hpp"

using namespace maskscope;
using maskscope::test::random_weights;

namespace {

// Running mean and standard error of one quantity over samples.
struct Moment {
  double sum = 0, sumsq = 0;
  int count = 0;
  void add(double v) {
    sum += v;
    sumsq += v * v;
    ++count;
  }
  double mean() const { return sum / count; }
  double se() const { return std::sqrt((sumsq / count - mean() * mean()) / (count - 1)); }
};

void check_moment(const Moment& m, double expected, const std::string& what) {
  const double z = (m.mean() - expected) / m.se();
  INFO(what, ": ", m.mean(), " against ", expected, " (SE ", m.se(), ", z = ", z, ")");
  CHECK(std::abs(z) < 4.0);
}

}  // namespace

TEST_CASE("Bartlett scores and values have the direct draws' moments (z within 4, 40,000 draws)") {
  // n 5 rows of width 12 (row 4 repeats row 1: a repeated token, a singular Gram matrix), d_h 8.
  const int n = 5, inner = 12, dh = 8, draws = 40000;
  const float sigma = 0.7f;
  std::vector<float> Y(std::size_t(n) * inner);
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < inner; ++c)
      Y[std::size_t(i) * inner + c] =
          i == 4 ? Y[std::size_t(inner) + c] : float(std::sin(1.3 * i + 0.7 * c + 0.1 * i * c));
  std::vector<double> G(std::size_t(n) * n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int c = 0; c < inner; ++c)
        G[std::size_t(i) * n + j] += double(Y[std::size_t(i) * inner + c]) * Y[std::size_t(j) * inner + c];
  auto g = [&](int i, int j) { return G[std::size_t(i) * n + j]; };
  const double s2 = double(sigma) * sigma, s4 = s2 * s2;

  // S_ij = q_i . k_j / sqrt(d_h): q_i ~ N(0, sigma^2 G_ii I) and k_j ~ N(0, sigma^2 G_jj I) independent, so
  // E S_ij = 0, E S_ij S_ik = sigma^4 G_ii G_jk, E S_ij S_lj = sigma^4 G_il G_jj and
  // E S_ij^4 = 3 sigma^8 G_ii^2 G_jj^2 (d_h + 2) / d_h (given k_j, S_ij is normal; E |k_j|^4 = (sigma^2 G_jj)^2 d_h
  // (d_h + 2)). W = v v^T is Wishart(d_h, sigma^2 G): E W_ij = d_h sigma^2 G_ij, Var W_ij = d_h sigma^4 (G_ij^2 + G_ii
  // G_jj).
  const int pairs[][2] = {{0, 0}, {2, 1}, {3, 0}, {4, 1}, {1, 3}, {4, 4}};
  std::vector<Moment> s1(6), sq(6), row_cross(6), col_cross(6), fourth(6), w1(6), wvar(6);
  double max_repeat = 0;
  for (int t = 0; t < draws; ++t) {
    const BartlettHeadRows r = bartlett_head_rows(Y, n, inner, dh, sigma, 77, std::uint64_t(t));
    auto S = [&](int i, int j) {
      double acc = 0;
      for (int c = 0; c < n; ++c) acc += double(r.q[std::size_t(i) * n + c]) * r.k[std::size_t(j) * n + c];
      return acc / std::sqrt(double(dh));
    };
    auto W = [&](int i, int j) {
      double acc = 0;
      for (int c = 0; c < n; ++c) acc += double(r.v[std::size_t(i) * n + c]) * r.v[std::size_t(j) * n + c];
      return acc;
    };
    for (int p = 0; p < 6; ++p) {
      const int i = pairs[p][0], j = pairs[p][1], j2 = (j + 2) % n, i2 = (i + 3) % n;
      const double sij = S(i, j);
      s1[std::size_t(p)].add(sij);
      sq[std::size_t(p)].add(sij * sij);
      row_cross[std::size_t(p)].add(sij * S(i, j2));
      col_cross[std::size_t(p)].add(sij * S(i2, j));
      fourth[std::size_t(p)].add(sij * sij * sij * sij);
      const double wij = W(i, j);
      w1[std::size_t(p)].add(wij);
      wvar[std::size_t(p)].add(wij * wij);
    }
    for (int c = 0; c < n; ++c)
      for (const auto* m : {&r.q, &r.k, &r.v})
        max_repeat = std::max(max_repeat, double(std::abs((*m)[std::size_t(4) * n + c] - (*m)[std::size_t(n) + c])));
  }
  CHECK(max_repeat < 1e-5);  // the repeated token's rows of q', k', v' equal row 1's
  for (int p = 0; p < 6; ++p) {
    const int i = pairs[p][0], j = pairs[p][1], j2 = (j + 2) % n, i2 = (i + 3) % n;
    std::string at = "(";  // built step by step: GCC 12 warns (-Wrestrict) on a chain of + here
    at += std::to_string(i);
    at += ", ";
    at += std::to_string(j);
    at += ")";
    check_moment(s1[std::size_t(p)], 0.0, "E S" + at);
    check_moment(sq[std::size_t(p)], s4 * g(i, i) * g(j, j), "E S^2" + at);
    check_moment(row_cross[std::size_t(p)], s4 * g(i, i) * g(j, j2), "E S_ij S_ik" + at);
    check_moment(col_cross[std::size_t(p)], s4 * g(i, i2) * g(j, j), "E S_ij S_lj" + at);
    check_moment(fourth[std::size_t(p)], 3 * s4 * s4 * g(i, i) * g(i, i) * g(j, j) * g(j, j) * (dh + 2.0) / dh,
                 "E S^4" + at);
    const double ew = dh * s2 * g(i, j);
    check_moment(w1[std::size_t(p)], ew, "E W" + at);
    check_moment(wvar[std::size_t(p)], ew * ew + dh * s4 * (g(i, j) * g(i, j) + g(i, i) * g(j, j)), "E W^2" + at);
  }
}

TEST_CASE("Bartlett attention runs exactly where it is exact: mean 0, no RoPE, d_h >= n, per-sample weights") {
  Settings s = random_weights(6, 16, 2, 2, 100);  // d_h 8 >= n 6
  CHECK(kernel_name(s).find("bartlett") != std::string::npos);
  Settings other = s;
  other.init_mean = 0.3;
  CHECK(kernel_name(other).find("bartlett") == std::string::npos);
  other = s;
  other.rope_base = 10000;
  CHECK(kernel_name(other).find("bartlett") == std::string::npos);
  other = s;
  other.n = 9;  // d_h 8 < n 9
  CHECK(kernel_name(other).find("bartlett") == std::string::npos);
  other = s;
  other.weights = WeightsMode::fixed;
  CHECK(kernel_name(other).find("bartlett") == std::string::npos);
}
