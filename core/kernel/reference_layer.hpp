// One layer of the parameter-free model (docs/model.md section 2) in plain scalar double precision,
// written to be read: the specification the fast kernels (lane_kernel_body.inc, simulator.cpp) are
// held to by tests/core/test_reference_layer.cpp. Not used by runs.
#pragma once

#include <vector>

#include "core/model/input_basis.hpp"
#include "core/model/settings.hpp"

namespace maskscope::reference {

// What one layer needs from the settings. Rows hold `dim` coordinates: the model's d, or the reduced
// basis of input_basis.hpp, a rotation of R^d that none of the layer's quantities sees, except that
// LayerNorm's mean must be found in it: there coordinate 0 is the all-ones direction.
struct LayerSpec {
  int n = 0;    // tokens
  int dim = 0;  // coordinates per row
  int d = 0;    // the model's width: the divisor of LayerNorm and RMSNorm, RoPE's and the scale's d
  Norm norm = Norm::layernorm;
  bool mean_is_coordinate_0 = false;  // the reduced basis with LayerNorm
  Scale scale = Scale::sqrt_d;
  double rope_base = 0;  // 0: no RoPE (unscrambled RoPE only)
  MaskKind mask = MaskKind::causal;
  int window = 4;
  double gamma = 0;
};
LayerSpec layer_spec(const Settings& s, const InputBasis& basis);

using Matrix = std::vector<double>;  // row-major: n x dim, or n x n

// The steps, each one equation of docs/model.md section 2.
Matrix normalize(const LayerSpec& spec, const Matrix& x);                              // Y = Norm(X)
Matrix rope(const LayerSpec& spec, const Matrix& y);                                   // Q = K = Rope(Y)
bool attends(const LayerSpec& spec, int i, int j);                                     // Mask: query i sees key j
double score_scale(const LayerSpec& spec);                                             // 1, 1 / sqrt(d) or 1 / d
Matrix scores(const LayerSpec& spec, const Matrix& q);                                 // S = Mask(scale Q K^T)
Matrix softmax_rows(const LayerSpec& spec, const Matrix& s);                           // A = softmax_rows(S)
Matrix mix(const LayerSpec& spec, const Matrix& a, const Matrix& y, const Matrix& x);  // X' = A Y + gamma X

// Every intermediate, laid out as LayerTrace: scores NaN and weights 0 where masked.
struct Layer {
  Matrix normalized, scores, weights, output;
};
Layer layer(const LayerSpec& spec, const Matrix& x);

}  // namespace maskscope::reference
