// A snapshot's maps and the metric helpers: diagonal normalization, quantiles, and the packed maps
// of every mask read as full arrays.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

#include "core/stats/map.hpp"
#include "core/stats/metrics.hpp"
#include "helpers.hpp"

using namespace maskscope;

TEST_CASE("diagonal_normalized turns a purely relative map into zeros, keeps the rest") {
  const int n = 5;
  const double nan = std::nan("");
  std::vector<double> toeplitz(n * n, nan), absolute(n * n, nan);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) {
      toeplitz[i * n + j] = 1.0 / (1 + i - j);
      absolute[i * n + j] = j;  // depends on the key's absolute position
    }
  for (double v : diagonal_normalized(toeplitz, n))
    if (!std::isnan(v)) CHECK(v == doctest::Approx(0.0));
  const auto dn = diagonal_normalized(absolute, n);
  CHECK(std::isnan(dn[0 * n + 1]));
  // Diagonal offset 1 holds j = 0..3, mean 1.5: entry (1, 0) becomes -1.5.
  CHECK(dn[1 * n + 0] == doctest::Approx(-1.5));
  CHECK(dn[4 * n + 3] == doctest::Approx(1.5));
}

TEST_CASE("quantile interpolates over finite values only") {
  const double nan = std::nan("");
  CHECK(quantile(std::vector<double>{nan, 1, 2, 3, 4, 5}, 0.5) == doctest::Approx(3.0));
  CHECK(quantile(std::vector<double>{0, 10}, 0.01) == doctest::Approx(0.1));
  CHECK(std::isnan(quantile(std::vector<double>{nan, nan}, 0.5)));
}

TEST_CASE("quantiles gives what quantile gives for each of its two levels") {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal;
  for (int size : {1, 2, 7, 100, 1001}) {
    std::vector<double> v(static_cast<std::size_t>(size));
    for (double& x : v) x = std::round(normal(rng) * 4) / 4;  // many ties
    if (size > 3) v[1] = v[2] = std::nan("");
    for (auto [lo, hi] : {std::pair{0.01, 0.99}, {0.5, 0.5}, {0.0, 1.0}, {0.3, 0.7}}) {
      const auto q = quantiles(v, lo, hi);
      CAPTURE(size);
      CHECK(q[0] == quantile(v, lo));
      CHECK(q[1] == quantile(v, hi));
    }
  }
  const auto none = quantiles(std::vector<double>{std::nan(""), std::nan("")}, 0.01, 0.99);
  CHECK(std::isnan(none[0]));
  CHECK(std::isnan(none[1]));
}

namespace {
// LN-recency at d 16 with n tokens under `mask` (a --mask text), for the tests of map packing.
Settings masked_settings(const char* mask, int n) {
  Settings s = test::ln_recency(16, 0.5, 1);
  s.n = n;
  REQUIRE(parse_mask(mask, s));
  return s;
}
}  // namespace

TEST_CASE("packed maps: row i holds exactly its open keys, right after row i - 1, for every mask") {
  for (const char* mask : {"causal", "bidirectional", "window:1", "window:3", "window:9"}) {
    const Settings s = masked_settings(mask, 9);
    const AccumLayout L = accum_layout(s);
    const KeyRanges keys = key_ranges(s);
    CAPTURE(mask);
    std::size_t cells = 0;
    for (int i = 0; i < s.n; ++i) {
      CHECK(L.map_row(i) == cells);
      CHECK(L.map_lo(i) == keys.lo[std::size_t(i)]);
      CHECK(L.map_cell(i, keys.hi[std::size_t(i)]) ==
            cells + std::size_t(keys.hi[std::size_t(i)] - keys.lo[std::size_t(i)]));
      cells += std::size_t(keys.hi[std::size_t(i)] - keys.lo[std::size_t(i)] + 1);
      CHECK(AccumLayout::cosine_row(i + 1) - AccumLayout::cosine_row(i) == std::size_t(i + 1));
    }
    CHECK(L.map_row(s.n) == cells);
    CHECK(L.map_cells == cells);
    CHECK(L.per_layer == 2 * cells + 45 + 9 + 9);  // two maps, the cosines' triangle, norms, nine per-sample metrics
  }
}

TEST_CASE("Map: packed cells read as the full array (NaN where masked, mirrored when symmetric), for every mask") {
  for (const char* mask : {"causal", "bidirectional", "window:1", "window:4"}) {
    const Settings s = masked_settings(mask, 9);
    const KeyRanges keys = key_ranges(s);
    const AccumLayout L = accum_layout(s);
    CAPTURE(mask);
    const auto masked = masked_shape(keys);
    const auto symmetric = symmetric_shape(s.n);
    REQUIRE(masked->cells() == L.map_cells);
    REQUIRE(symmetric->cells() == L.triangle());
    // Cell values that say where they are: 100 i + j, stored where AccumLayout puts them.
    auto cells = std::shared_ptr<double[]>(new double[L.map_cells]);
    auto tri = std::shared_ptr<double[]>(new double[L.triangle()]);
    for (int i = 0; i < s.n; ++i) {
      for (int j = keys.lo[std::size_t(i)]; j <= keys.hi[std::size_t(i)]; ++j) cells[L.map_cell(i, j)] = 100.0 * i + j;
      for (int j = 0; j <= i; ++j) tri[AccumLayout::cosine_cell(i, j)] = 100.0 * i + j;
    }
    const Map m(masked, std::shared_ptr<const double>(cells, cells.get()));
    const Map c(symmetric, std::shared_ptr<const double>(tri, tri.get()));
    const std::vector<double> full = m.unpacked(), cfull = c.unpacked();
    REQUIRE(full.size() == std::size_t(s.n) * std::size_t(s.n));
    for (int i = 0; i < s.n; ++i)
      for (int j = 0; j < s.n; ++j) {
        const std::size_t e = std::size_t(i) * std::size_t(s.n) + std::size_t(j);
        const bool open = j >= keys.lo[std::size_t(i)] && j <= keys.hi[std::size_t(i)];
        if (open) {
          CHECK(m(i, j) == 100.0 * i + j);
          CHECK(full[e] == 100.0 * i + j);
        } else {
          CHECK(std::isnan(m(i, j)));
          CHECK(std::isnan(full[e]));
        }
        CHECK(std::memcmp(&full[e], &m.unpacked()[e], sizeof(double)) == 0);
        if (open) CHECK(m[e] == m(i, j));  // the flat index e = i n + j
        else CHECK(std::isnan(m[e]));
        CHECK(c(i, j) == 100.0 * std::max(i, j) + std::min(i, j));
        CHECK(cfull[e] == c(i, j));
        CHECK(std::isnan(m.all_nan()(i, j)));
      }
    CHECK(same_bits(m, m));
    CHECK(same_bits(m, Map(masked, std::shared_ptr<const double>(cells, cells.get()))));
    CHECK_FALSE(same_bits(m, m.all_nan()));
  }
}

TEST_CASE("diagonal_normalized of a Map reads the same bits as of its full array, NaN cells included") {
  for (const char* mask : {"causal", "bidirectional", "window:3"}) {
    const Settings s = masked_settings(mask, 23);
    const KeyRanges keys = key_ranges(s);
    const auto shape = masked_shape(keys);
    std::mt19937_64 rng(7);
    std::normal_distribution<double> normal;
    auto cells = std::shared_ptr<double[]>(new double[shape->cells()]);
    for (std::size_t k = 0; k < shape->cells(); ++k)
      cells[k] = k % 17 == 5 ? std::nan("") : normal(rng) + 0.01 * double(k);
    const Map m(shape, std::shared_ptr<const double>(cells, cells.get()));
    const Map d = diagonal_normalized(m);
    const std::vector<double> expect = diagonal_normalized(m.unpacked(), s.n);
    const std::vector<double> got = d.unpacked();
    CAPTURE(mask);
    REQUIRE(got.size() == expect.size());
    CHECK(std::memcmp(got.data(), expect.data(), got.size() * sizeof(double)) == 0);
    CHECK(std::isnan(d(0, s.n - 1)) == std::isnan(expect[std::size_t(s.n - 1)]));
    CHECK(m(3, 2) == cells[shape->cell(3, 2)]);  // the map normalized is untouched
  }
  CHECK_THROWS_AS(diagonal_normalized(Map(symmetric_shape(4), nullptr)), std::invalid_argument);
}

TEST_CASE("a one-sample snapshot unpacks the packed sums into that sample's maps, for every mask") {
  for (const char* mask : {"causal", "bidirectional", "window:4"}) {
    Settings s = masked_settings(mask, 11);
    s.layers = 2;
    const SampleTrace t = Simulator(s).trace_sample(0);
    const auto snap = run_to_completion(s);
    const KeyRanges keys = key_ranges(s);
    CAPTURE(mask);
    for (int l = 0; l < s.layers; ++l)
      for (int i = 0; i < s.n; ++i)
        for (int j = 0; j < s.n; ++j) {
          const std::size_t e = std::size_t(i) * s.n + j;
          const bool open = j >= keys.lo[std::size_t(i)] && j <= keys.hi[std::size_t(i)];
          const LayerStats& ls = snap->layers[std::size_t(l)];
          const LayerTrace& lt = t.layers[std::size_t(l)];
          CHECK(std::isnan(ls.score_mean[e]) == !open);
          if (open) {
            CHECK(ls.score_mean[e] == doctest::Approx(lt.scores[e]).epsilon(1e-5));
            CHECK(ls.weight_mean[e] == doctest::Approx(lt.weights[e]).epsilon(1e-5));
          }
          CHECK(ls.cosine_mean[e] == ls.cosine_mean[std::size_t(j) * s.n + i]);  // symmetric
        }
  }
}
