// One-sample properties of the forward pass and the per-sample metric counts.
#include <doctest/doctest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "core/kernel/sample_metrics.hpp"
#include "core/kernel/simulator.hpp"
#include "helpers.hpp"

using namespace maskscope;

namespace {
bool all_finite(const std::vector<float>& v) {
  for (float x : v)
    if (!std::isfinite(x)) return false;
  return true;
}
}  // namespace

TEST_CASE("ordered_pairs counts strict wins of the later entry and ties, across vector widths") {
  std::vector<float> up(40), down(40), flat(40, 1.0f);
  std::iota(up.begin(), up.end(), 0.0f);
  for (int k = 0; k < 40; ++k) down[k] = -static_cast<float>(k);
  up.resize(48);  // slack the vector loop may read
  down.resize(48);
  flat.resize(48);
  for (int m : {0, 1, 2, 3, 7, 8, 9, 16, 17, 40}) {
    const std::int64_t pairs = std::int64_t(m) * (m - 1) / 2;
    CHECK(ordered_pairs(up.data(), 0, m).wins == pairs);
    CHECK(ordered_pairs(up.data(), 0, m).ties == 0);
    CHECK(ordered_pairs(down.data(), 0, m).wins == 0);
    CHECK(ordered_pairs(flat.data(), 0, m).wins == 0);              // ties are not wins...
    CHECK(ordered_pairs(flat.data(), 0, m).ties == pairs);          // ...they count 1/2 (docs/model.md section 4)
    CHECK(ordered_pairs(flat.data(), 0, m).half_units() == pairs);  // a constant row scores exactly 1/2
  }
  std::vector<float> row = {3, 1, 2, 5, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  // pairs (a<b, row[b] > row[a]): (1,2) (0,3) (1,3) (2,3) (0,4) (1,4) (2,4) = 7
  CHECK(ordered_pairs(row.data(), 0, 5).wins == 7);
  CHECK(ordered_pairs(row.data(), 1, 5).wins == 5);  // drop the pairs that start at 0
  std::vector<float> tied = {2, 1, 2, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  // equal pairs: (0,2) (0,4) (2,4) (1,3); wins (later larger): (1,2) (1,4) (3,4) = 3
  CHECK(ordered_pairs(tied.data(), 0, 5).ties == 4);
  CHECK(ordered_pairs(tied.data(), 0, 5).wins == 3);
}

TEST_CASE("layer 1 with LayerNorm: diagonal scores equal sqrt(d); weights are a distribution") {
  for (int d : {16, 64, 256}) {
    Settings s = test::ln_recency(d, 0.5, 1);
    Simulator sim(s);
    const SampleTrace t = sim.trace_sample(305);
    const auto& S = t.layers[0].scores;
    const auto& A = t.layers[0].weights;
    for (int i = 0; i < s.n; ++i) {
      CHECK(S[i * s.n + i] == doctest::Approx(std::sqrt(d)).epsilon(1e-5));
      double row = 0;
      for (int j = 0; j < s.n; ++j) {
        if (j > i) {
          CHECK(std::isnan(S[i * s.n + j]));  // masked
          CHECK(A[i * s.n + j] == 0.0f);
        }
        row += A[i * s.n + j];
      }
      CHECK(row == doctest::Approx(1.0).epsilon(1e-5));
    }
  }
}

TEST_CASE("trace and block agree: the recency metric of one sample equals its definition") {
  Settings s = test::ln_recency(16, 0.5, 1);
  Simulator sim(s);
  const SampleTrace t = sim.trace_sample(0);
  const auto& S = t.layers[1].scores;
  const int n = s.n;
  std::int64_t wins = 0, ties = 0, triples = 0;
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < i; ++k)
      for (int j = 0; j < k; ++j) {
        ++triples;
        if (S[i * n + k] > S[i * n + j]) ++wins;
        if (S[i * n + k] == S[i * n + j]) ++ties;
      }
  CHECK(triples == sim.recency_triples());
  CHECK(t.layers[1].rp == doctest::Approx((double(wins) + 0.5 * double(ties)) / double(triples)));
  CHECK(t.layers[1].rp_ties == doctest::Approx(double(ties) / double(triples)));
}

TEST_CASE("adjacency of one sample: rows k >= 2, pairs i < j < k, diagonal left out (Zuo et al. App. A)") {
  Settings s = test::ln_recency(16, 0.5, 1);
  s.n = 9;
  Simulator sim(s);
  const SampleTrace t = sim.trace_sample(201);
  const int n = s.n, d = t.dim;
  const auto& X = t.layers[0].output;
  auto cosine = [&](int a, int b) {
    double ab = 0, aa = 0, bb = 0;
    for (int e = 0; e < d; ++e) {
      ab += double(X[a * d + e]) * X[b * d + e];
      aa += double(X[a * d + e]) * X[a * d + e];
      bb += double(X[b * d + e]) * X[b * d + e];
    }
    return ab / std::sqrt(aa * bb);
  };
  double rows = 0;
  for (int k = 2; k < n; ++k) {
    double nearer = 0, pairs = 0;
    for (int j = 1; j < k; ++j)
      for (int i = 0; i < j; ++i) {
        ++pairs;
        nearer += cosine(k, i) < cosine(k, j) ? 1.0 : 0.0;
      }
    rows += nearer / pairs;
  }
  // Float32 cosines against double ones: a near-tie may flip; one flip moves the score by < 0.01.
  CHECK(t.layers[0].adjacency == doctest::Approx(rows / (n - 2)).epsilon(0.01));
  CHECK(t.layers[0].adjacency_ties == 0.0);
}

TEST_CASE("the residual adds gamma X; without it the output is A Y exactly") {
  Settings s = test::behind_rope(6, 32, 0.3, 1);
  Simulator sim(s);
  const SampleTrace t = sim.trace_sample(102);
  const auto& L1 = t.layers[0];
  for (int i = 0; i < s.n; ++i)
    for (int e = 0; e < t.dim; ++e) {
      double expect = s.gamma * t.input[i * t.dim + e];
      for (int j = 0; j <= i; ++j) expect += L1.weights[i * s.n + j] * L1.normalized[j * t.dim + e];
      CHECK(L1.output[i * t.dim + e] == doctest::Approx(expect).epsilon(1e-5));
    }
}

TEST_CASE("masks: bidirectional scores are symmetric; a window hides keys at distance >= w") {
  Settings s = test::ln_recency(16, 0.2, 1);
  s.mask = MaskKind::bidirectional;
  s.rope_base = 10000;
  Simulator bi(s);
  const auto S = bi.trace_sample(0).layers[1].scores;
  for (int i = 0; i < s.n; ++i)
    for (int j = 0; j < s.n; ++j) CHECK(S[i * s.n + j] == S[j * s.n + i]);

  s.mask = MaskKind::window;
  s.window = 3;
  Simulator win(s);
  const auto t = win.trace_sample(0);
  for (int i = 0; i < s.n; ++i)
    for (int j = 0; j < s.n; ++j) {
      const bool visible = j <= i && i - j < 3;
      CHECK(std::isnan(t.layers[0].scores[i * s.n + j]) == !visible);
    }
}

TEST_CASE("edge settings give finite numbers: alpha = 1, n = 1, d = 1, every norm") {
  for (Norm norm : {Norm::none, Norm::l2, Norm::layernorm, Norm::rmsnorm}) {
    Settings s;
    s.norm = norm;
    s.layers = 3;
    for (auto [n, d, alpha] :
         {std::tuple{10, 8, 1.0}, std::tuple{1, 8, 0.5}, std::tuple{10, 1, 0.5}, std::tuple{4, 1, 1.0}}) {
      s.n = n;
      s.d = d;
      s.alpha = alpha;
      REQUIRE(validate(s).empty());
      Simulator sim(s);
      const SampleTrace t = sim.trace_sample(0);
      for (const auto& L : t.layers) {
        CHECK(all_finite(L.weights));
        CHECK(all_finite(L.output));
        for (int i = 0; i < n; ++i) CHECK(std::isfinite(L.scores[i * n + i]));
      }
    }
  }
}

TEST_CASE("key_ranges: each mask's keys and the comparisons RP and adjacency count") {
  Settings s;
  s.n = 6;
  s.mask = MaskKind::causal;
  KeyRanges k = key_ranges(s);
  CHECK(k.recency_triples == 0 + 0 + 1 + 3 + 6 + 10);  // C(i, 2) for i = 0..5
  CHECK(k.adjacency_rows == 4);                        // rows 2..5
  for (int i = 0; i < 6; ++i) CHECK((k.lo[i] == 0 && k.hi[i] == i));
  s.mask = MaskKind::window;
  s.window = 3;
  k = key_ranges(s);
  for (int i = 0; i < 6; ++i) CHECK((k.lo[i] == std::max(0, i - 2) && k.hi[i] == i));
  CHECK(k.recency_triples == 0 + 0 + 1 + 1 + 1 + 1);
  s.mask = MaskKind::bidirectional;
  k = key_ranges(s);
  for (int i = 0; i < 6; ++i) CHECK((k.lo[i] == 0 && k.hi[i] == 5));
  s.n = 2;
  CHECK(key_ranges(s).adjacency_rows == 0);
}
