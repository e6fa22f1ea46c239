// Diagonal-normalized maps (Behind RoPE Fig. 4 and 5) and quantiles.
#include "metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace maskscope {

std::vector<double> diagonal_normalized(const std::vector<double>& map, int n) {
  const int offsets = 2 * n - 1;  // i - j in [-(n-1), n-1]
  std::vector<double> sum(offsets, 0.0);
  std::vector<int> count(offsets, 0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double v = map[i * n + j];
      if (std::isnan(v)) continue;
      sum[i - j + n - 1] += v;
      count[i - j + n - 1] += 1;
    }
  std::vector<double> out(map.size(), std::numeric_limits<double>::quiet_NaN());
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double v = map[i * n + j];
      if (std::isnan(v)) continue;
      const int o = i - j + n - 1;
      out[i * n + j] = v - sum[o] / count[o];
    }
  return out;
}

double quantile(const std::vector<double>& values, double q) {
  std::vector<double> finite;
  finite.reserve(values.size());
  for (double v : values)
    if (std::isfinite(v)) finite.push_back(v);
  if (finite.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(finite.begin(), finite.end());
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(finite.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, finite.size() - 1);
  return finite[lo] + (pos - static_cast<double>(lo)) * (finite[hi] - finite[lo]);
}

}  // namespace maskscope
