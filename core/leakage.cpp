// dR^2 from per-cell moments (see leakage.hpp).
#include "leakage.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace maskscope {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The fit over the unmasked cells whose query position lies in [from, to).
struct Fit {
  double sst = 0, sse_base = 0, q = 0, b = 0;
  bool ok = false;
};

Fit fit(int n, const KeyRanges& keys, const std::vector<double>& mean, const std::vector<double>& m2, double N,
        int from, int to) {
  Fit f;
  const std::size_t offsets = std::size_t(2 * n);
  std::vector<double> cells(offsets, 0.0), sum_m(offsets, 0.0), sum_i(offsets, 0.0);
  double total = 0, count = 0;
  auto each = [&](auto&& visit) {
    for (int i = std::max(0, from); i < std::min(n, to); ++i)
      for (int j = keys.lo[std::size_t(i)]; j <= keys.hi[std::size_t(i)]; ++j) {
        const std::size_t e = std::size_t(i) * n + j;
        if (!std::isfinite(mean[e])) continue;
        visit(i, std::size_t(i - j + n - 1), e);
      }
  };
  each([&](int i, std::size_t o, std::size_t e) {
    cells[o] += 1;
    sum_m[o] += mean[e];
    sum_i[o] += i;
    total += mean[e];
    count += 1;
  });
  if (count == 0) return f;
  const double grand = total / count;
  double sxy = 0;
  each([&](int i, std::size_t o, std::size_t e) {
    const double within = m2.empty() ? 0.0 : m2[e];
    const double mo = sum_m[o] / cells[o], io = i - sum_i[o] / cells[o];
    f.sst += within + N * (mean[e] - grand) * (mean[e] - grand);
    f.sse_base += within + N * (mean[e] - mo) * (mean[e] - mo);
    f.q += io * io;
    sxy += io * (mean[e] - mo);
  });
  if (f.q > 0) f.b = sxy / f.q;
  f.ok = f.sst > 0;
  return f;
}

double delta_r2(const Fit& f, double N) { return f.ok && f.q > 0 ? N * f.b * f.b * f.q / f.sst : kNaN; }

}  // namespace

std::vector<LeakageBin> leakage_bins(int n) {
  static const int edges[] = {0, 5, 12, 25, 50, 100, 200, 256};
  std::vector<LeakageBin> bins;
  for (std::size_t k = 0; k + 1 < std::size(edges) && edges[k] < n; ++k) bins.push_back({edges[k], std::min(edges[k + 1], n), kNaN});
  if (n > 256) bins.push_back({256, n, kNaN});
  return bins;
}

Leakage leakage_of(int n, const KeyRanges& keys, const std::vector<double>& mean, const std::vector<double>& m2,
                   std::int64_t count, double slope_se) {
  Leakage out;
  const double N = m2.empty() ? 1.0 : double(count);
  const Fit all = fit(n, keys, mean, m2, N, 0, n);
  out.slope = all.b;
  out.slope_se = slope_se;
  out.r2_base = all.ok ? 1.0 - all.sse_base / all.sst : kNaN;
  out.delta_r2 = delta_r2(all, N);
  out.delta_r2_se = all.ok ? N * all.q / all.sst * std::sqrt(4 * all.b * all.b * slope_se * slope_se + 2 * std::pow(slope_se, 4))
                           : kNaN;
  const Fit map = fit(n, keys, mean, {}, 1.0, 0, n);
  out.delta_r2_mean_map = delta_r2(map, 1.0);
  out.bins = leakage_bins(n);
  for (LeakageBin& bin : out.bins) bin.delta_r2 = delta_r2(fit(n, keys, mean, m2, N, bin.from, bin.to), N);
  return out;
}

Leakage leakage_of(int n, const KeyRanges& keys, const RunMoments& m, std::size_t map, std::size_t slope) {
  const std::size_t nn = std::size_t(n) * n;
  std::vector<double> mean(nn, kNaN), m2(nn, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = keys.lo[std::size_t(i)]; j <= keys.hi[std::size_t(i)]; ++j) {
      const std::size_t e = std::size_t(i) * n + j;
      mean[e] = m.mean[map + e];
      m2[e] = m.m2[map + e];
    }
  if (m.count == 0) {
    Leakage none;
    none.delta_r2 = none.delta_r2_se = none.delta_r2_mean_map = none.r2_base = none.slope = none.slope_se = kNaN;
    none.bins = leakage_bins(n);
    return none;
  }
  return leakage_of(n, keys, mean, m2, m.count, m.standard_error(slope));
}

std::vector<double> offset_means(int n, const KeyRanges& keys, const std::vector<double>& map) {
  std::vector<double> sum(std::size_t(2 * n), 0.0), cells(std::size_t(2 * n), 0.0), out(map.size(), kNaN);
  for (int i = 0; i < n; ++i)
    for (int j = keys.lo[std::size_t(i)]; j <= keys.hi[std::size_t(i)]; ++j)
      if (std::isfinite(map[std::size_t(i) * n + j])) {
        sum[std::size_t(i - j + n - 1)] += map[std::size_t(i) * n + j];
        cells[std::size_t(i - j + n - 1)] += 1;
      }
  for (int i = 0; i < n; ++i)
    for (int j = keys.lo[std::size_t(i)]; j <= keys.hi[std::size_t(i)]; ++j)
      if (std::isfinite(map[std::size_t(i) * n + j]))
        out[std::size_t(i) * n + j] = sum[std::size_t(i - j + n - 1)] / cells[std::size_t(i - j + n - 1)];
  return out;
}

}  // namespace maskscope
