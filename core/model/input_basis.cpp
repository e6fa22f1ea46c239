// The reduced basis (input_basis.hpp).
#include "core/model/input_basis.hpp"

#include <algorithm>

namespace maskscope {

InputBasis input_basis(const Settings& s, bool explicit_inputs) {
  InputBasis b;
  b.dim = s.d;
  if (explicit_inputs || s.random_weights() || s.rope()) return b;  // RoPE turns coordinate pairs: it needs all d
  b.reduced = true;
  b.special = s.norm == Norm::layernorm ? 1 : 0;
  b.k = s.d - b.special;
  const bool has_v = s.alpha > 0.0 || s.fixed_first_token();  // a fixed first token is v / sqrt(d)
  b.token_rows = s.alpha >= 1.0 ? 0 : s.n;
  b.rows = b.token_rows + (has_v ? 1 : 0);
  b.m = std::min(b.rows, b.k);
  b.dim = (b.special + b.m + 7) / 8 * 8;
  if (b.dim > s.d) b.dim = std::max(b.special + b.m, 1);  // special + m <= d always
  for (int r = 0; r < b.rows; ++r) b.normals += std::size_t(b.special + std::min(r, b.m));
  b.normals += std::size_t(b.m);
  return b;
}

}  // namespace maskscope
