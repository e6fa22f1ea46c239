// dR^2 from per-cell moments (see leakage.hpp).
#include "core/stats/leakage.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace maskscope {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The sums of a fit over the unmasked cells whose query position lies in one range of rows.
struct Fit {
  double sst = 0, sse_base = 0, q = 0, sxy = 0, b = 0;
  bool ok = false;
  void finish() {
    if (q > 0) b = sxy / q;
    ok = sst > 0;
  }
};

double delta_r2(const Fit& f, double N) { return f.ok && f.q > 0 ? N * f.b * f.b * f.q / f.sst : kNaN; }

// docs/model.md section 4.1 for a fit over `cells` cells of N samples whose values reach magnitude `scale`:
// constant when the values spread about their grand mean by no more than float resolution (SST's share per
// value; SST 0 included), i.e. SST is not significantly above 0 and dR^2 = (...) / SST is a ratio to rounding.
bool constant_at_resolution(const Fit& f, double N, double cells, double scale) {
  return cells > 0 && f.sst >= 0 && at_float_resolution(std::sqrt(f.sst / (N * cells)), scale);
}

// Per offset o = i - j + n - 1: cells, sum of the map, sum of i; and the grand total.
struct OffsetSums {
  std::vector<double> cells, sum_m, sum_i;
  double total = 0, count = 0;
  std::vector<double> mo, io;  // per offset: the mean of the map and of i (after prepare)
  double grand = 0;
  double scale = 0;  // the largest |value| (the magnitude float resolution is relative to)
  explicit OffsetSums(int n)
      : cells(std::size_t(2 * n), 0.0), sum_m(std::size_t(2 * n), 0.0), sum_i(std::size_t(2 * n), 0.0) {}
  void add(int i, std::size_t o, double v) {
    cells[o] += 1;
    sum_m[o] += v;
    sum_i[o] += i;
    total += v;
    count += 1;
  }
  void prepare() {
    grand = total / count;
    mo.resize(cells.size());
    io.resize(cells.size());
    for (std::size_t o = 0; o < cells.size(); ++o) {
      mo[o] = sum_m[o] / cells[o];
      io[o] = sum_i[o] / cells[o];
    }
  }
  // One cell's terms of SST, SSE_base, Q and S_xy (weights `within`, N of leakage.hpp).
  void add_terms(Fit& f, int i, std::size_t o, double v, double within, double N) const {
    const double di = i - io[o];
    f.sst += within + N * (v - grand) * (v - grand);
    f.sse_base += within + N * (v - mo[o]) * (v - mo[o]);
    f.q += di * di;
    f.sxy += di * (v - mo[o]);
  }
};

// Every fit of leakage.hpp in two passes over the cells: the whole map pooled over samples
// (weights m2, N), the same map's means alone (no m2, N 1) and each query-position bin pooled.
// Each sum runs over the cells in row-major order, as one fit per range would.
// `cell(i, j)` is where cell (i, j) lives in mean and m2.
template <class Cell>
Leakage fits(int n, const KeyRanges& keys, const double* mean, const double* m2, Cell cell, double N, double slope_se) {
  Leakage out;
  out.bins = leakage_bins(n);
  const std::size_t B = out.bins.size();
  std::vector<int> bin_of(std::size_t(n), 0);
  for (std::size_t k = 0; k < B; ++k)
    for (int i = out.bins[k].from; i < out.bins[k].to; ++i) bin_of[std::size_t(i)] = int(k);
  OffsetSums all(n);
  std::vector<OffsetSums> bins(B, OffsetSums(n));
  // Row by row: a row's cells all fall in one bin, so the running sums of its fits live in
  // registers for the row instead of in memory, where every cell would wait for the previous
  // cell's store (at n 512 that was a third of a snapshot's time). Each sum still takes its terms
  // in row-major order: the same bits.
  for (int i = 0; i < n; ++i) {
    OffsetSums& b = bins[std::size_t(bin_of[std::size_t(i)])];
    double all_total = all.total, all_count = all.count, b_total = b.total, b_count = b.count;
    double scale = all.scale;
    for (int j = keys.lo[std::size_t(i)]; j <= keys.hi[std::size_t(i)]; ++j) {
      const double v = mean[cell(i, j)];
      if (!std::isfinite(v)) continue;
      scale = std::max(scale, std::fabs(v));
      const std::size_t o = std::size_t(i - j + n - 1);
      all.cells[o] += 1;
      all.sum_m[o] += v;
      all.sum_i[o] += i;
      all_total += v;
      all_count += 1;
      b.cells[o] += 1;
      b.sum_m[o] += v;
      b.sum_i[o] += i;
      b_total += v;
      b_count += 1;
    }
    all.total = all_total;
    all.count = all_count;
    all.scale = scale;
    b.total = b_total;
    b.count = b_count;
  }
  Fit pooled, map;
  std::vector<Fit> bin_fit(B);
  if (all.count > 0) {
    all.prepare();
    for (OffsetSums& b : bins)
      if (b.count > 0) b.prepare();
    for (int i = 0; i < n; ++i) {
      const std::size_t k = std::size_t(bin_of[std::size_t(i)]);
      const OffsetSums& b = bins[k];
      Fit p = pooled, m = map, f = bin_fit[k];
      for (int j = keys.lo[std::size_t(i)]; j <= keys.hi[std::size_t(i)]; ++j) {
        const std::size_t e = cell(i, j);
        const double v = mean[e];
        if (!std::isfinite(v)) continue;
        const std::size_t o = std::size_t(i - j + n - 1);
        const double within = m2 ? m2[e] : 0.0;
        all.add_terms(p, i, o, v, within, N);
        all.add_terms(m, i, o, v, 0.0, 1.0);
        b.add_terms(f, i, o, v, within, N);
      }
      pooled = p;
      map = m;
      bin_fit[k] = f;
    }
    pooled.finish();
    map.finish();
    for (std::size_t k = 0; k < B; ++k)
      if (bins[k].count > 0) bin_fit[k].finish();
  }
  out.slope = pooled.b;
  out.slope_se = slope_se;
  out.r2_base = pooled.ok ? 1.0 - pooled.sse_base / pooled.sst : kNaN;
  out.delta_r2.mean = delta_r2(pooled, N);
  out.delta_r2.se = pooled.ok ? N * pooled.q / pooled.sst *
                                    std::sqrt(4 * pooled.b * pooled.b * slope_se * slope_se + 2 * std::pow(slope_se, 4))
                              : kNaN;
  out.delta_r2_mean_map = delta_r2(map, 1.0);
  for (std::size_t k = 0; k < B; ++k) out.bins[k].delta_r2 = delta_r2(bin_fit[k], N);
  // Float resolution (docs/model.md section 4.1). A map constant up to it has no variance to explain: every
  // share of it is null. Else, with per-sample slopes known (m2 and 2 samples or more): when they spread by
  // no more than float resolution (the position's effect on a value, |b_s| sqrt(Q / cells), the same in
  // every sample up to rounding) the SE is 0, and when the common slope's effect is below it too, dR^2 is
  // 0: what the regression would find is rounding.
  const double cells = all.count;
  if (constant_at_resolution(pooled, N, cells, all.scale)) {
    out.delta_r2 = {kNaN, kNaN, 0, 0, EstimateNote::constant_at_float_resolution};
    out.r2_base = out.slope = kNaN;
    for (LeakageBin& b : out.bins) b.delta_r2 = kNaN;
  } else if (pooled.ok && pooled.q > 0 && m2 && N >= 2 &&
             at_float_resolution(slope_se * std::sqrt(N) * std::sqrt(pooled.q / cells), all.scale)) {
    if (out.delta_r2.se != 0) out.delta_r2.note = EstimateNote::exact_at_float_resolution;
    out.delta_r2.se = 0.0;
    if (at_float_resolution(std::fabs(pooled.b) * std::sqrt(pooled.q / cells), all.scale)) {
      out.delta_r2.mean = 0.0;
      out.delta_r2.note = EstimateNote::below_float_resolution;
    }
  }
  if (constant_at_resolution(map, 1.0, cells, all.scale)) out.delta_r2_mean_map = kNaN;
  return out;
}

}  // namespace

std::vector<LeakageBin> leakage_bins(int n) {
  static const int edges[] = {0, 5, 12, 25, 50, 100, 200, 256};
  std::vector<LeakageBin> bins;
  for (std::size_t k = 0; k + 1 < std::size(edges) && edges[k] < n; ++k)
    bins.push_back({edges[k], std::min(edges[k + 1], n), kNaN});
  if (n > 256) bins.push_back({256, n, kNaN});
  return bins;
}

Leakage leakage_of(int n, const KeyRanges& keys, const std::vector<double>& mean, const std::vector<double>& m2,
                   std::int64_t count, double slope_se) {
  const auto square = [n](int i, int j) { return std::size_t(i) * n + std::size_t(j); };
  Leakage out =
      fits(n, keys, mean.data(), m2.empty() ? nullptr : m2.data(), square, m2.empty() ? 1.0 : double(count), slope_se);
  out.delta_r2.samples = count;
  return out;
}

Leakage leakage_of(const AccumLayout& L, const KeyRanges& keys, const RunMoments& m, std::size_t map,
                   std::size_t slope) {
  const int n = L.n;
  if (m.count == 0) {
    Leakage none;
    none.delta_r2 = {kNaN, kNaN, 0, 0};
    none.delta_r2_mean_map = none.r2_base = none.slope = none.slope_se = kNaN;
    none.bins = leakage_bins(n);
    return none;
  }
  const auto packed = [&L](int i, int j) { return L.map_cell(i, j); };
  // One sample has no spread within a cell (M2 0): its M2 are not read (a new run's first picture
  // leaves them unset, make_snapshot).
  const double* m2 = m.count >= 2 ? m.m2.data() + map : nullptr;
  Leakage out = fits(n, keys, m.mean.data() + map, m2, packed, double(m.count), m.standard_error(slope));
  out.delta_r2.samples = m.count;
  return out;
}

double leakage_ratio(double a, double b) { return std::isfinite(a) && std::isfinite(b) && b > 0 ? a / b : kNaN; }

double leakage_ratio_se(double a, double sa, double b, double sb) {
  const double r = leakage_ratio(a, b);
  if (!std::isfinite(r) || a <= 0) return kNaN;
  return r * std::sqrt((sa / a) * (sa / a) + (sb / b) * (sb / b));
}

Ratio significant_ratio(const Estimate& a, const Estimate& b) {
  if (!(b.mean > 3 * b.se)) return {kNaN, kNaN, EstimateNote::denominator_not_significant};
  return {leakage_ratio(a.mean, b.mean), leakage_ratio_se(a.mean, a.se, b.mean, b.se)};
}

Ratio residual_stream_share(const Leakage& bidirectional, const Leakage& causal) {
  return significant_ratio(bidirectional.delta_r2, causal.delta_r2);
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
