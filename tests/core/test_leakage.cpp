// Absolute-position leakage dR^2 (docs/model.md section 8, Ruscio et al. Eq. 4): closed cases, an
// explicit least-squares fit on stored samples, and the papers' ablations (bidirectional, RoPE).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "core/stats/leakage.hpp"
#include "core/model/rope.hpp"
#include "core/run/runner.hpp"
#include "core/kernel/simulator.hpp"
#include "core/model/cost.hpp"

using namespace maskscope;

namespace {

Settings parameter_free(int n, int d, int layers, std::int64_t samples) {
  Settings s;
  s.n = n;
  s.d = d;
  s.layers = layers;
  s.samples = samples;
  s.seed = 99;
  s.threads = 2;
  return s;
}

// Least squares by the normal equations, solved by Gaussian elimination with partial pivoting:
// returns the residual sum of squares of y on the columns of X (rows of X are the data points).
double rss(const std::vector<std::vector<double>>& X, const std::vector<double>& y) {
  const std::size_t p = X[0].size();
  std::vector<std::vector<double>> A(p, std::vector<double>(p + 1, 0.0));
  for (std::size_t r = 0; r < X.size(); ++r)
    for (std::size_t a = 0; a < p; ++a) {
      for (std::size_t b = 0; b < p; ++b) A[a][b] += X[r][a] * X[r][b];
      A[a][p] += X[r][a] * y[r];
    }
  for (std::size_t c = 0; c < p; ++c) {
    std::size_t piv = c;
    for (std::size_t r = c + 1; r < p; ++r)
      if (std::abs(A[r][c]) > std::abs(A[piv][c])) piv = r;
    std::swap(A[c], A[piv]);
    for (std::size_t r = 0; r < p; ++r) {
      if (r == c) continue;
      const double f = A[r][c] / A[c][c];
      for (std::size_t k = c; k <= p; ++k) A[r][k] -= f * A[c][k];
    }
  }
  double sse = 0;
  for (std::size_t r = 0; r < X.size(); ++r) {
    double fit = 0;
    for (std::size_t a = 0; a < p; ++a) fit += X[r][a] * A[a][p] / A[a][a];
    sse += (y[r] - fit) * (y[r] - fit);
  }
  return sse;
}

struct Explicit {
  double r2_base, delta_r2;
};

// The paper's regression on explicit data points (i, j, y): one dummy per offset i - j (base), plus
// the query position i (full).
Explicit explicit_fit(const std::vector<int>& is, const std::vector<int>& js, const std::vector<double>& y) {
  std::map<int, std::size_t> offset_column;
  for (std::size_t r = 0; r < y.size(); ++r) offset_column.emplace(is[r] - js[r], offset_column.size());
  const std::size_t K = offset_column.size();
  std::vector<std::vector<double>> base(y.size(), std::vector<double>(K, 0.0)),
      full(y.size(), std::vector<double>(K + 1, 0.0));
  double mean = 0;
  for (double v : y) mean += v / double(y.size());
  double sst = 0;
  for (std::size_t r = 0; r < y.size(); ++r) {
    const std::size_t c = offset_column[is[r] - js[r]];
    base[r][c] = full[r][c] = 1.0;
    full[r][K] = is[r];
    sst += (y[r] - mean) * (y[r] - mean);
  }
  const double r2_base = 1 - rss(base, y) / sst;
  return {r2_base, 1 - rss(full, y) / sst - r2_base};
}

}  // namespace

TEST_CASE("a map that depends on i - j only has dR^2 0; a*i + f(i - j) has the hand-computed dR^2") {
  for (MaskKind mask : {MaskKind::causal, MaskKind::bidirectional}) {
    Settings s = parameter_free(9, 8, 1, 1);
    s.mask = mask;
    const KeyRanges keys = key_ranges(s);
    const int n = s.n;
    std::vector<double> relative(std::size_t(n) * n, NAN), mixed = relative;
    const double a = 0.3;
    std::vector<int> is, js;
    std::vector<double> y;
    for (int i = 0; i < n; ++i)
      for (int j = keys.lo[std::size_t(i)]; j <= keys.hi[std::size_t(i)]; ++j) {
        const double f = std::sin(1.7 * (i - j)) + 0.1 * (i - j) * (i - j);
        relative[std::size_t(i) * n + j] = f;
        mixed[std::size_t(i) * n + j] = a * i + f;
        is.push_back(i);
        js.push_back(j);
        y.push_back(a * i + f);
      }
    const Leakage r = leakage_of(n, keys, relative, {}, 1, 0.0);
    CHECK(std::abs(r.delta_r2.mean) < 1e-12);
    CHECK(r.r2_base == doctest::Approx(1.0).epsilon(1e-12));
    CHECK(std::abs(r.delta_r2_mean_map) < 1e-12);
    // By hand: the base model leaves a (i - mean i of the offset), which the full model explains.
    std::map<int, std::pair<double, double>> offset;  // offset -> (sum i, cells)
    for (std::size_t k = 0; k < is.size(); ++k) {
      offset[is[k] - js[k]].first += is[k];
      offset[is[k] - js[k]].second += 1;
    }
    double q = 0, mean = 0, sst = 0;
    for (std::size_t k = 0; k < is.size(); ++k) {
      const auto& [si, c] = offset[is[k] - js[k]];
      q += (is[k] - si / c) * (is[k] - si / c);
      mean += y[k] / double(y.size());
    }
    for (double v : y) sst += (v - mean) * (v - mean);
    const Leakage m = leakage_of(n, keys, mixed, {}, 1, 0.0);
    CHECK(m.delta_r2.mean == doctest::Approx(a * a * q / sst).epsilon(1e-12));
    CHECK(m.r2_base == doctest::Approx(1 - a * a * q / sst).epsilon(1e-12));
    CHECK(m.slope == doctest::Approx(a).epsilon(1e-12));
    const Explicit e = explicit_fit(is, js, y);
    CHECK(m.delta_r2.mean == doctest::Approx(e.delta_r2).epsilon(1e-9));
  }
}

TEST_CASE("pooled dR^2 from the core's sums equals an explicit least-squares fit on the stored samples") {
  Settings s = parameter_free(6, 16, 3, 2000);
  s.alpha = 0.5;
  REQUIRE(samples_per_block(s) >= s.samples);  // one block: the stored samples are the run's
  const auto snap = run_to_completion(s);
  Simulator sim(s);
  const auto traces = sim.trace_block(0, s.samples);
  const KeyRanges keys = key_ranges(s);
  for (int l : {1, 2}) {  // layers 2 and 3 (layer 1 has no leakage to speak of)
    std::vector<int> is, js;
    std::vector<double> y, w;
    for (const SampleTrace& t : traces)
      for (int i = 0; i < s.n; ++i)
        for (int j = keys.lo[std::size_t(i)]; j <= keys.hi[std::size_t(i)]; ++j) {
          is.push_back(i);
          js.push_back(j);
          y.push_back(t.layers[std::size_t(l)].scores[std::size_t(i) * s.n + j]);
          w.push_back(t.layers[std::size_t(l)].weights[std::size_t(i) * s.n + j]);
        }
    const Explicit e = explicit_fit(is, js, y);
    const LayerStats& ls = snap->layers[std::size_t(l)];
    INFO("layer ", l + 1, ": core ", ls.leakage.delta_r2.mean, ", explicit ", e.delta_r2);
    CHECK(ls.leakage.delta_r2.mean > 1e-4);
    CHECK(std::abs(ls.leakage.delta_r2.mean - e.delta_r2) < 1e-9);
    CHECK(std::abs(ls.leakage.r2_base - e.r2_base) < 1e-9);
    const Explicit ew = explicit_fit(is, js, w);
    CHECK(std::abs(ls.weight_leakage.delta_r2.mean - ew.delta_r2) < 1e-9);
  }
}

TEST_CASE("bidirectional parameter-free stacks leak no absolute position; causal ones do, from layer 2") {
  Settings s = parameter_free(12, 32, 3, 20000);
  s.alpha = 0.5;
  s.mask = MaskKind::bidirectional;
  const auto bi = run_to_completion(s);
  for (const auto& l : bi->layers) {
    INFO("bidirectional layer ", l.layer, " slope ", l.leakage.slope, " +- ", l.leakage.slope_se);
    CHECK(std::abs(l.leakage.slope) < 4 * l.leakage.slope_se);
  }
  s.mask = MaskKind::causal;
  const auto causal = run_to_completion(s);
  CHECK(std::abs(causal->layers[0].leakage.slope) < 4 * causal->layers[0].leakage.slope_se);  // exchangeable inputs
  for (std::size_t l = 1; l < causal->layers.size(); ++l) {
    CHECK(std::abs(causal->layers[l].leakage.slope) > 8 * causal->layers[l].leakage.slope_se);
    CHECK(causal->layers[l].leakage.delta_r2.mean > 4 * causal->layers[l].leakage.delta_r2.se);
  }
}

TEST_CASE("RoPE: relative without the mask (Behind RoPE Fig. 10: dR^2 0), absolute with it (Fig. 4)") {
  Settings s = parameter_free(16, 32, 2, 20000);
  s.norm = Norm::l2;
  s.scale = Scale::one;
  s.gamma = 1.0;
  s.unit_input = true;
  s.alpha = 0.2;
  s.rope_base = 10000;
  s.mask = MaskKind::bidirectional;
  const auto bi = run_to_completion(s);
  for (const auto& l : bi->layers) CHECK(std::abs(l.leakage.slope) < 4 * l.leakage.slope_se);
  s.mask = MaskKind::causal;
  const auto causal = run_to_completion(s);
  CHECK(std::abs(causal->layers[1].leakage.slope) > 8 * causal->layers[1].leakage.slope_se);
}

TEST_CASE("scrambled RoPE keeps the rotation angles but breaks the relative property") {
  const int n = 6, d = 8;
  const RopeTables plain = rope_tables(n, d, 100.0, 0), scrambled = rope_tables(n, d, 100.0, 7);
  const std::vector<int> perm = rope_scramble_permutation(d, 7);
  std::vector<int> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (int e = 0; e < d; ++e) CHECK(sorted[std::size_t(e)] == e);  // a permutation
  CHECK(perm != rope_scramble_permutation(d, 0));
  // <R_i y, R_j z> depends on i - j only for plain RoPE.
  const float y[d] = {0.3f, -1.1f, 0.7f, 0.2f, -0.5f, 0.9f, 1.3f, -0.4f};
  const float z[d] = {-0.8f, 0.1f, 0.6f, -1.2f, 0.4f, 0.5f, -0.3f, 1.0f};
  auto inner = [&](const RopeTables& t, int i, int j) {
    float a[d], b[d];
    for (int p = 0; p < d / 2; ++p) {  // as kernel::rotate_row
      const std::size_t ai = std::size_t(i) * t.half + p, aj = std::size_t(j) * t.half + p;
      a[2 * p] = y[2 * p] * t.cos_a[ai] - y[2 * p + 1] * t.sin_a[ai];
      a[2 * p + 1] = y[2 * p] * t.sin_b[ai] + y[2 * p + 1] * t.cos_b[ai];
      b[2 * p] = z[2 * p] * t.cos_a[aj] - z[2 * p + 1] * t.sin_a[aj];
      b[2 * p + 1] = z[2 * p] * t.sin_b[aj] + z[2 * p + 1] * t.cos_b[aj];
    }
    double s = 0;
    for (int e = 0; e < d; ++e) s += double(a[e]) * b[e];
    return s;
  };
  CHECK(inner(plain, 3, 1) == doctest::Approx(inner(plain, 5, 3)).epsilon(1e-5));
  CHECK(std::abs(inner(scrambled, 3, 1) - inner(scrambled, 5, 3)) > 1e-3);
}

TEST_CASE("Ruscio's position bins, cut at n") {
  const auto b10 = leakage_bins(10);
  REQUIRE(b10.size() == 2);
  CHECK(b10[0].from == 0);
  CHECK(b10[0].to == 5);
  CHECK(b10[1].from == 5);
  CHECK(b10[1].to == 10);
  const auto b512 = leakage_bins(512);
  REQUIRE(b512.size() == 8);
  CHECK(b512[6].from == 200);
  CHECK(b512[6].to == 256);
  CHECK(b512[7].to == 512);
  CHECK(leakage_bins(3).size() == 1);
}
