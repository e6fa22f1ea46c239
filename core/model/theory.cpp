// Closed forms of Behind RoPE (Sec. 3.2, App. A) and LayerNorm Induces Recency Bias (Eq. 11, 42).
#include "core/model/theory.hpp"

#include <cmath>

namespace maskscope::theory {

namespace {
// D_i = e + (i-1) e^alpha, the layer-1 softmax denominator (Behind RoPE Sec. 3.2).
double denominator(int i, double alpha) { return std::exp(1.0) + (i - 1) * std::exp(alpha); }
}  // namespace

double behind_rope_layer1_weight(int i, int j, double alpha) {
  if (j > i) return 0.0;
  const double num = (i == j) ? std::exp(1.0) : std::exp(alpha);
  return num / denominator(i, alpha);
}

// x_i^(1) = a_i x_i + b sum_{k<i} x_k with a_i = e/D_i + gamma, b_i = e^alpha/D_i.
// For i > j the inner product factors as (1 + gamma) D_j * [alpha (e + gamma D_i) + e^alpha (1 + (i-2) alpha)]
// / (D_i D_j): independent of j, which is g(i). gamma = 1 gives Eq. 3's
// 2 (2 alpha e + e^alpha (1 + alpha (2i - 3))) / D_i; gamma = 0 gives App. A.2's g'(i).
double behind_rope_g(int i, double alpha, double gamma) {
  const double e = std::exp(1.0), ea = std::exp(alpha), D = denominator(i, alpha);
  return (1.0 + gamma) * (alpha * (e + gamma * D) + ea * (1.0 + (i - 2) * alpha)) / D;
}

// ||x_i^(1)||^2 = [(a_i D_i)^2 + 2 (a_i D_i) e^alpha alpha (i-1) + e^{2 alpha} (i-1)(1 + (i-2) alpha)] / D_i^2
// with a_i D_i = e + gamma D_i (= 2e + (i-1) e^alpha for gamma = 1, Eq. 3; = e for gamma = 0, App. A.2).
double behind_rope_h(int i, double alpha, double gamma) {
  const double e = std::exp(1.0), ea = std::exp(alpha), D = denominator(i, alpha);
  const double aD = e + gamma * D;
  const double h2 = (aD * aD + 2.0 * aD * ea * alpha * (i - 1) + ea * ea * (i - 1) * (1.0 + (i - 2) * alpha)) / (D * D);
  return std::sqrt(h2);
}

double behind_rope_layer2_score(int i, int j, double alpha, double gamma) {
  if (i == j) return 1.0;
  if (j > i) return behind_rope_layer2_score(j, i, alpha, gamma);
  return behind_rope_g(i, alpha, gamma) / (behind_rope_h(i, alpha, gamma) * behind_rope_h(j, alpha, gamma));
}

double ln_recency_s2(int i, int j, int d) {
  const double sd = std::sqrt(static_cast<double>(d));
  if (i == j) return sd;
  if (j > i) return ln_recency_s2(j, i, d);
  // Eq. 11 with E = e^sqrt(d) factored out: sqrt(d) E^-1 (1 + (j-1) E^-1) / sqrt((1 + (i-1) E^-2)(1 + (j-1) E^-2)).
  const double inv_e = std::exp(-sd);
  return sd * inv_e * (1.0 + (j - 1) * inv_e) /
         std::sqrt((1.0 + (i - 1) * inv_e * inv_e) * (1.0 + (j - 1) * inv_e * inv_e));
}

double ln_recency_h_of_j(int j, int d, double alpha, double gamma, bool with_inv_sqrt_d) {
  const double sd = std::sqrt(static_cast<double>(d));
  // With E = e^sqrt(d) and r = e^{(alpha-1) sqrt(d)}: D_j / E = 1 + (j-1) r, and Eq. 42 becomes
  // Dt / sqrt(Dt^2 (g^2 + 2 alpha g + alpha) + Dt (1-alpha)(2 g + r) + (1-alpha)(1 - r)).
  const double r = std::exp((alpha - 1.0) * sd);
  const double Dt = 1.0 + (j - 1) * r;
  const double inner = Dt * Dt * (gamma * gamma + 2.0 * alpha * gamma + alpha) +
                       Dt * (1.0 - alpha) * (2.0 * gamma + r) + (1.0 - alpha) * (1.0 - r);
  const double h = Dt / std::sqrt(inner);
  return with_inv_sqrt_d ? h / sd : h;
}

std::vector<double> ln_recency_h_curve(int n, int d, double alpha, double gamma, bool with_inv_sqrt_d) {
  std::vector<double> h(n);
  for (int j = 1; j <= n; ++j) h[j - 1] = ln_recency_h_of_j(j, d, alpha, gamma, with_inv_sqrt_d);
  return h;
}

}  // namespace maskscope::theory
