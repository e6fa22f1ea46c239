// The coordinates the parameter-free kernel draws and works in (the reduced basis).
#pragma once

#include <cstddef>

#include "core/model/settings.hpp"

namespace maskscope {

// The coordinates the parameter-free kernel works in. Without RoPE every quantity of the model
// (scores, weights, cosines, norms and their metrics) is unchanged by a rotation of R^d (one that
// keeps the all-ones direction, with LayerNorm), so the n token rows and v need only
// m = min(rows, k) coordinates of a Gaussian QR factor instead of d (draw_inputs in simulator.cpp):
// the same law of every result, with fewer draws and shorter vectors when n + 1 < d.
struct InputBasis {
  bool reduced = false;
  int special = 0;          // coordinates drawn as they are: LayerNorm's all-ones direction (1) or none
  int k = 0;                // the dimension of the rest: d - special
  int token_rows = 0;       // n, or 0 when alpha = 1 (every token is v)
  int rows = 0;             // token rows, plus v when alpha > 0 or the first token is fixed (x_0 = v / sqrt(d))
  int m = 0;                // coordinates of the factor: min(rows, k)
  int dim = 0;              // coordinates per row in the kernel (special + m, padded to 8 within d; d if not reduced)
  std::size_t normals = 0;  // normals per sample: special coordinates and entries below the diagonal, then one per chi
};
// `explicit_inputs` asks for all d coordinates even where the reduced basis applies (tests).
InputBasis input_basis(const Settings& s, bool explicit_inputs = false);

}  // namespace maskscope
