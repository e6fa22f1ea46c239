// Key ranges of the masks (key_ranges.hpp).
#include "core/model/key_ranges.hpp"

#include <algorithm>

namespace maskscope {

KeyRanges key_ranges(const Settings& s) {
  KeyRanges r;
  const int n = s.n;
  r.lo.resize(n);
  r.hi.resize(n);
  for (int i = 0; i < n; ++i) {
    switch (s.mask) {
      case MaskKind::causal:
        r.lo[i] = 0;
        r.hi[i] = i;
        break;
      case MaskKind::bidirectional:
        r.lo[i] = 0;
        r.hi[i] = n - 1;
        break;
      case MaskKind::window:
        r.lo[i] = std::max(0, i - s.window + 1);
        r.hi[i] = i;
        break;
    }
    const std::int64_t m = i - r.lo[i];  // keys strictly below the diagonal
    r.recency_triples += m * (m - 1) / 2;
  }
  r.adjacency_rows = std::max(0, n - 2);
  // Mean query position of each offset o = i - j (index o + n - 1), then the centred positions.
  std::vector<double> sum_i(std::size_t(2 * n), 0.0), cells(std::size_t(2 * n), 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = r.lo[i]; j <= r.hi[i]; ++j) {
      sum_i[std::size_t(i - j + n - 1)] += i;
      cells[std::size_t(i - j + n - 1)] += 1;
    }
  std::vector<double> mean_i(std::size_t(2 * n), 0.0);  // once per offset, not per cell (n 512: 2 x 131,328 cells)
  for (std::size_t o = 0; o < mean_i.size(); ++o)
    if (cells[o] > 0) mean_i[o] = sum_i[o] / cells[o];
  double q = 0;
  for (int i = 0; i < n; ++i)
    for (int j = r.lo[i]; j <= r.hi[i]; ++j) {
      const double c = i - mean_i[std::size_t(i - j + n - 1)];
      q += c * c;
    }
  r.slope_coef.assign(std::size_t(n) * n + 8, 0.0f);  // 8 floats of slack (kernel::offset_slope)
  if (q > 0)
    for (int i = 0; i < n; ++i)
      for (int j = r.lo[i]; j <= r.hi[i]; ++j)
        r.slope_coef[std::size_t(i) * n + j] = static_cast<float>((i - mean_i[std::size_t(i - j + n - 1)]) / q);
  return r;
}

}  // namespace maskscope
