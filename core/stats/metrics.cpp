// Diagonal-normalized maps (Behind RoPE Fig. 4 and 5) and quantiles.
#include "core/stats/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace maskscope {

std::vector<double> diagonal_normalized(const std::vector<double>& map, int n) {
  std::vector<double> out;
  diagonal_normalized(map, n, out);
  return out;
}

void diagonal_normalized(const std::vector<double>& map, int n, std::vector<double>& out) {
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
  out.assign(map.size(), std::numeric_limits<double>::quiet_NaN());
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double v = map[i * n + j];
      if (std::isnan(v)) continue;
      const int o = i - j + n - 1;
      out[i * n + j] = v - sum[o] / count[o];
    }
}

namespace {
// Where the q-quantile of `size` sorted values lies (linear interpolation between ranks).
double quantile_position(std::size_t size, double q) { return std::clamp(q, 0.0, 1.0) * static_cast<double>(size - 1); }

// The q-quantile of `finite` (not empty), by selection in [from, end): every element before `from`
// is at most every element from it on (so `from` must not exceed the lower order statistic).
double select_quantile(std::vector<double>& finite, std::size_t from, double q) {
  // The lower order statistic by nth_element, the next one is the smallest of what lies above it.
  const double pos = quantile_position(finite.size(), q);
  const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
  std::nth_element(finite.begin() + std::ptrdiff_t(from), finite.begin() + std::ptrdiff_t(lo), finite.end());
  const double a = finite[lo];
  const double b =
      lo + 1 < finite.size() ? *std::min_element(finite.begin() + std::ptrdiff_t(lo) + 1, finite.end()) : a;
  return a + (pos - static_cast<double>(lo)) * (b - a);
}

void finite_values(std::span<const double> values, std::vector<double>& finite) {
  finite.clear();
  finite.reserve(values.size());
  for (double v : values)
    if (std::isfinite(v)) finite.push_back(v);
}
}  // namespace

double quantile(std::span<const double> values, double q) {
  std::vector<double> finite;
  finite_values(values, finite);
  if (finite.empty()) return std::numeric_limits<double>::quiet_NaN();
  return select_quantile(finite, 0, q);
}

std::array<double, 2> quantiles(std::span<const double> values, double q_lo, double q_hi) {
  std::vector<double> scratch;
  return quantiles(values, q_lo, q_hi, scratch);
}

std::array<double, 2> quantiles(std::span<const double> values, double q_lo, double q_hi, std::vector<double>& finite) {
  finite_values(values, finite);
  return quantiles_of_finite(finite, q_lo, q_hi);
}

std::array<double, 2> quantiles_of_finite(std::vector<double>& finite, double q_lo, double q_hi) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (finite.empty()) return {nan, nan};
  const double lo = select_quantile(finite, 0, q_lo);
  // Selection of q_lo left its order statistic at its place and the smaller ones before it.
  const std::size_t from = static_cast<std::size_t>(std::floor(quantile_position(finite.size(), q_lo)));
  return {lo, select_quantile(finite, from, q_hi)};
}

}  // namespace maskscope
