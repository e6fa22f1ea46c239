// One layer of the parameter-free model in plain double precision (reference_layer.hpp): each step
// as docs/model.md section 2 writes it, in loops over rows and coordinates, with no shortcut.
#include "core/kernel/reference_layer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace maskscope::reference {

namespace {
constexpr double kEps = 1e-12;  // docs/model.md section 2: LayerNorm's and RMSNorm's epsilon
}  // namespace

LayerSpec layer_spec(const Settings& s, const InputBasis& basis) {
  LayerSpec spec;
  spec.n = s.n;
  spec.dim = basis.dim;
  spec.d = s.d;
  spec.norm = s.norm;
  spec.mean_is_coordinate_0 = basis.reduced && s.norm == Norm::layernorm;
  spec.scale = s.scale;
  spec.rope_base = s.rope_base;
  spec.mask = s.mask;
  spec.window = s.window;
  spec.gamma = s.gamma;
  return spec;
}

// Y = Norm(X), row by row. l2: x / ||x|| (0 for x = 0); rmsnorm: x / sqrt(mean(x^2) + eps);
// layernorm: (x - mean(x)) / sqrt(var(x) + eps), no affine. Means are over the model's d coordinates.
Matrix normalize(const LayerSpec& spec, const Matrix& x) {
  const std::size_t n = std::size_t(spec.n), dim = std::size_t(spec.dim);
  Matrix y(n * dim);
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> row(&x[i * dim], &x[i * dim] + dim);
    if (spec.norm == Norm::layernorm) {  // centre: remove the component along the all-ones direction
      if (spec.mean_is_coordinate_0) {
        row[0] = 0;
      } else {
        double sum = 0;
        for (double v : row) sum += v;
        for (double& v : row) v -= sum / spec.d;
      }
    }
    double squares = 0;
    for (double v : row) squares += v * v;
    double factor = 1;
    switch (spec.norm) {
      case Norm::none: break;
      case Norm::l2: factor = squares > 0 ? 1 / std::sqrt(squares) : 0; break;
      case Norm::rmsnorm:
      case Norm::layernorm: factor = 1 / std::sqrt(squares / spec.d + kEps); break;  // mean of squares (centred)
    }
    for (std::size_t e = 0; e < dim; ++e) y[i * dim + e] = row[e] * factor;
  }
  return y;
}

// Q = K = Rope(Y) (RoFormer Eq. 34): pair (2p, 2p + 1) of token i turned by the angle i base^(-2p / d).
Matrix rope(const LayerSpec& spec, const Matrix& y) {
  if (spec.rope_base <= 0) return y;
  const std::size_t dim = std::size_t(spec.dim);
  Matrix q = y;
  for (int i = 0; i < spec.n; ++i)
    for (std::size_t p = 0; 2 * p + 1 < dim; ++p) {
      const double angle = i * std::pow(spec.rope_base, -2.0 * double(p) / spec.d);
      const double a = y[std::size_t(i) * dim + 2 * p], b = y[std::size_t(i) * dim + 2 * p + 1];
      q[std::size_t(i) * dim + 2 * p] = a * std::cos(angle) - b * std::sin(angle);
      q[std::size_t(i) * dim + 2 * p + 1] = a * std::sin(angle) + b * std::cos(angle);
    }
  return q;
}

// The mask: causal j <= i; bidirectional every j; sliding window i - w < j <= i.
bool attends(const LayerSpec& spec, int i, int j) {
  switch (spec.mask) {
    case MaskKind::causal: return j <= i;
    case MaskKind::bidirectional: return true;
    case MaskKind::window: return i - spec.window < j && j <= i;
  }
  return false;
}

double score_scale(const LayerSpec& spec) {
  switch (spec.scale) {
    case Scale::one: return 1;
    case Scale::sqrt_d: return 1 / std::sqrt(double(spec.d));
    case Scale::d: return 1.0 / spec.d;
  }
  return 1;
}

// S = Mask(scale Q K^T); masked entries NaN (the softmax skips them: docs/model.md's -inf).
Matrix scores(const LayerSpec& spec, const Matrix& q) {
  const double scale = score_scale(spec);
  const std::size_t n = std::size_t(spec.n), dim = std::size_t(spec.dim);
  Matrix s(n * n, std::numeric_limits<double>::quiet_NaN());
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      if (!attends(spec, int(i), int(j))) continue;
      double dot = 0;
      for (std::size_t e = 0; e < dim; ++e) dot += q[i * dim + e] * q[j * dim + e];
      s[i * n + j] = scale * dot;
    }
  return s;
}

// A = softmax_rows(S) over each row's unmasked keys: A_ij = e^(S_ij - max_k S_ik) / sum_k e^(S_ik - max_k S_ik).
Matrix softmax_rows(const LayerSpec& spec, const Matrix& s) {
  const std::size_t n = std::size_t(spec.n);
  Matrix a(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    double top = -std::numeric_limits<double>::infinity(), z = 0;
    for (std::size_t j = 0; j < n; ++j)
      if (attends(spec, int(i), int(j))) top = std::max(top, s[i * n + j]);
    for (std::size_t j = 0; j < n; ++j)
      if (attends(spec, int(i), int(j))) {
        a[i * n + j] = std::exp(s[i * n + j] - top);
        z += a[i * n + j];
      }
    for (std::size_t j = 0; j < n; ++j) a[i * n + j] /= z;
  }
  return a;
}

// X' = A Y + gamma X: values are the normalized rows, not rotated (docs/model.md section 2).
Matrix mix(const LayerSpec& spec, const Matrix& a, const Matrix& y, const Matrix& x) {
  const std::size_t n = std::size_t(spec.n), dim = std::size_t(spec.dim);
  Matrix out(n * dim);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t e = 0; e < dim; ++e) {
      double sum = spec.gamma * x[i * dim + e];
      for (std::size_t j = 0; j < n; ++j) sum += a[i * n + j] * y[j * dim + e];
      out[i * dim + e] = sum;
    }
  return out;
}

Layer layer(const LayerSpec& spec, const Matrix& x) {
  Layer l;
  l.normalized = normalize(spec, x);
  l.scores = scores(spec, rope(spec, l.normalized));
  l.weights = softmax_rows(spec, l.scores);
  l.output = mix(spec, l.weights, l.normalized, x);
  return l;
}

}  // namespace maskscope::reference
