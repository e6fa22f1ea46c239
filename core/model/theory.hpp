// Closed forms of the papers (docs/model.md section 5), 1-based indices as in the papers.
#pragma once

#include <vector>

namespace maskscope::theory {

// Behind RoPE Sec. 3.2 (l2 norm, unit inputs with <x_i, x_j> = alpha exactly, scale 1).
// Layer-1 attention weight A_ij for j <= i: e / (e + (i-1) e^alpha) on the diagonal,
// e^alpha / (e + (i-1) e^alpha) below it.
double behind_rope_layer1_weight(int i, int j, double alpha);
// g(i) = <x_i^(1), x_j^(1)> for i > j (Eq. 3 for gamma = 1; App. A.2's g'(i) for gamma = 0;
// derived here for any gamma in [0, 1]).
double behind_rope_g(int i, double alpha, double gamma);
// h(i) = ||x_i^(1)|| (Eq. 3 for gamma = 1; App. A.2's h'(i) for gamma = 0).
double behind_rope_h(int i, double alpha, double gamma);
// Layer-2 score <y_i^(2), y_j^(2)> = g(i) / (h(i) h(j)) for i > j, 1 for i = j (Eq. 4).
double behind_rope_layer2_score(int i, int j, double alpha, double gamma);

// LayerNorm Induces Recency Bias, Eq. 11 (alpha = 0, gamma = 0, scale 1/sqrt(d), d >> 1):
// S^(2)_ij for i > j, sqrt(d) on the diagonal.
double ln_recency_s2(int i, int j, int d);

// LN-recency Eq. 42: h(j) with D_j = e^sqrt(d) + (j-1) e^(alpha sqrt(d)). The paper's plots
// (Fig. 2, 7) drop the 1/sqrt(d) factor; pass with_inv_sqrt_d = false for them.
// Evaluated with everything divided by e^sqrt(d), so it stays finite for any d.
double ln_recency_h_of_j(int j, int d, double alpha, double gamma, bool with_inv_sqrt_d = true);

// Convenience: h(1..n).
std::vector<double> ln_recency_h_curve(int n, int d, double alpha, double gamma, bool with_inv_sqrt_d = true);

}  // namespace maskscope::theory
