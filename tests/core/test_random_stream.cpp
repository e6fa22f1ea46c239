// Per-sample random streams (random_stream.hpp): Philox4x32-10 against Random123's reference, the
// normal sampler checked statistically at 10^7 draws, the chi draws of the reduced input basis, and
// the reduced basis against explicit d-dimensional inputs.
#include <doctest/doctest.h>

#include <Random123/philox.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/stats/accumulator.hpp"
#include "core/random/random_stream.hpp"
#include "core/kernel/simulator.hpp"
#include "helpers.hpp"

using namespace maskscope;

TEST_CASE("Philox4x32-10 equals Random123's reference and its published known answer") {
  // Random123's kat_vectors: philox4x32 10, counter 0, key 0.
  const auto zero = philox4x32_10({0, 0, 0, 0}, {0, 0});
  CHECK(zero == std::array<std::uint32_t, 4>{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u});
  r123::Philox4x32 reference;
  std::uint64_t state = 99;
  for (int t = 0; t < 1000; ++t) {
    std::array<std::uint32_t, 4> c;
    std::array<std::uint32_t, 2> k;
    for (auto& w : c) w = static_cast<std::uint32_t>(splitmix64(state));
    for (auto& w : k) w = static_cast<std::uint32_t>(splitmix64(state));
    const r123::Philox4x32::ctr_type rc = {{c[0], c[1], c[2], c[3]}};
    const r123::Philox4x32::key_type rk = {{k[0], k[1]}};
    const auto want = reference(rc, rk);
    const auto got = philox4x32_10(c, k);
    for (int w = 0; w < 4; ++w) CHECK(got[std::size_t(w)] == want[std::size_t(w)]);
  }
}

TEST_CASE("a sample's normals are the same from the stream, from a group and from the 16-lane form") {
  const std::uint64_t seed = 0x1234'5678'9abc'def0ull;
  // First sample just below a carry of the counter's low word.
  const std::uint64_t first = (std::uint64_t(7) << 32) - 5;
  for (std::uint64_t m : {0ull, 15ull, 16ull, 63ull, 64ull, 200ull, 1000ull}) {
    float lanes[64];
    lane_normals(seed, first, normal_counter(m), lanes);
    for (int t = 0; t < 16; ++t) {
      SampleStream stream(seed, first + std::uint64_t(t));
      std::vector<float> all(m + 1);
      stream.normals(all.data(), all.size());
      CHECK(lanes[16 * normal_word(m) + t] == all[m]);
      float group[64];
      normal_group(seed, first + std::uint64_t(t), m / 64, group);
      CHECK(group[m % 64] == all[m]);
    }
  }
  // A short last group's head is the group's first 32 normals, bit for bit.
  for (std::uint64_t g : {0ull, 1ull, 77ull}) {
    float full[64], head[32];
    normal_group(seed, first, g, full);
    normal_group_head(seed, first, g, head);
    CHECK(std::memcmp(full, head, sizeof head) == 0);
  }
  // Each request starts at a group: 3 normals, then the next request's first is normal 64.
  SampleStream a(seed, 3), b(seed, 3);
  float three[3], next[1], ref[65];
  a.normals(three, 3);
  a.normals(next, 1);
  b.normals(ref, 65);
  CHECK(three[2] == ref[2]);
  CHECK(next[0] == ref[64]);
}

TEST_CASE("the sampler gives the same bits on the baseline level as on the one in use") {
  MESSAGE("sampler level here: ", sampler_isa());
  const std::uint64_t seed = 0xfeed'beef'0123'4567ull;
  for (std::uint64_t sample : {0ull, 1ull, (1ull << 32) - 1, 123456789012345ull})
    for (std::uint64_t g : {0ull, 3ull, 1000ull}) {
      float best[64], base[64];
      normal_group_at(sampler_isa(), seed, sample, g, best);
      normal_group_at("x86-64", seed, sample, g, base);
      CAPTURE(sample);
      CAPTURE(g);
      CHECK(std::memcmp(best, base, sizeof best) == 0);
      // And both are Philox's words through Box-Muller: word pair (0, 1) of counter 16 g gives normals 0, 16.
      const auto w = philox4x32_10({std::uint32_t(sample), std::uint32_t(sample >> 32), std::uint32_t(16 * g), 0},
                                   {std::uint32_t(seed), std::uint32_t(seed >> 32)});
      const double u = (double(w[0] >> 1) + 0.5) * 0x1.0p-31;
      const double r = std::sqrt(-2.0 * std::log(u));
      const double phi = double(w[1] >> 30) * (M_PI / 2) + (double(w[1] & 0x3FFFFFFFu) * 0x1.0p-30 - 0.5) * (M_PI / 2);
      CHECK(best[0] == doctest::Approx(r * std::cos(phi)).epsilon(1e-5));
      CHECK(best[16] == doctest::Approx(r * std::sin(phi)).epsilon(1e-5));
    }
}

TEST_CASE("normal_groups gives normal_group's bits for every group it covers, from any first group") {
  const std::uint64_t seed = 0x5eed'0000'0000'0042ull;
  for (std::uint64_t sample : {0ull, 7ull, (1ull << 32) + 5}) {
    for (std::uint64_t first : {0ull, 1ull, 999ull}) {
      for (std::uint64_t count = 1; count <= 5; ++count) {  // pairs of groups, and one left over
        std::vector<float> bulk(64 * count + 1, 7.0f), one(64);
        normal_groups(seed, sample, first, count, bulk.data());
        CAPTURE(sample);
        CAPTURE(first);
        CAPTURE(count);
        for (std::uint64_t g = 0; g < count; ++g) {
          normal_group(seed, sample, first + g, one.data());
          CHECK(std::memcmp(one.data(), bulk.data() + 64 * g, sizeof(float) * 64) == 0);
        }
        CHECK(bulk.back() == 7.0f);  // nothing written past the last group
      }
    }
  }
  // SampleStream::normals takes whole groups at once: a request of 3 groups and 5 normals equals
  // group-by-group draws.
  SampleStream a(seed, 11);
  std::vector<float> got(64 * 3 + 5), ref(64 * 4);
  a.normals(got.data(), got.size());
  for (std::uint64_t g = 0; g < 4; ++g) normal_group(seed, 11, g, ref.data() + 64 * g);
  CHECK(std::memcmp(got.data(), ref.data(), sizeof(float) * got.size()) == 0);
  CHECK(a.normal_position() == 256);
}

TEST_CASE("normals: moments, tails and Kolmogorov-Smirnov at 10^7 draws; no correlation across samples") {
  const std::size_t per_sample = 128, samples = 80'000;  // 1.024e7 draws
  std::vector<float> x(per_sample * samples);
  for (std::size_t s = 0; s < samples; ++s) {
    SampleStream stream(2024, s);
    stream.normals(x.data() + s * per_sample, per_sample);
  }
  const double N = double(x.size());
  double s1 = 0, s2 = 0, s3 = 0, s4 = 0, lag = 0;
  std::size_t tail = 0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    const double v = x[k];
    s1 += v;
    s2 += v * v;
    s3 += v * v * v;
    s4 += v * v * v * v;
    if (std::fabs(v) > 3.0) ++tail;
    if (k >= per_sample) lag += v * x[k - per_sample];  // normal m of sample s and of sample s - 1
  }
  const double mean = s1 / N;
  CHECK(std::fabs(mean) < 4.0 / std::sqrt(N));                    // SE 1 / sqrt(N)
  CHECK(std::fabs(s2 / N - 1.0) < 4.0 * std::sqrt(2.0 / N));      // var(x^2) = 2
  CHECK(std::fabs(s3 / N) < 4.0 * std::sqrt(15.0 / N));           // var(x^3) = 15
  CHECK(std::fabs(s4 / N - 3.0) < 4.0 * std::sqrt(96.0 / N));     // var(x^4) = 105 - 9
  CHECK(std::fabs(lag / (N - per_sample)) < 4.0 / std::sqrt(N));  // independent streams
  const double p3 = 2.699796063260207e-3;                         // P(|x| > 3)
  CHECK(std::fabs(double(tail) / N - p3) < 4.0 * std::sqrt(p3 * (1 - p3) / N));
  // Kolmogorov-Smirnov: sqrt(N) D below 1.95 (p = 0.001).
  std::sort(x.begin(), x.end());
  double D = 0;
  for (std::size_t k = 0; k < x.size(); k += 7) {  // every 7th order statistic: D within 7 / N of the full one
    const double F = 0.5 * std::erfc(-double(x[k]) / std::sqrt(2.0));
    D = std::max({D, std::fabs(F - double(k) / N), std::fabs(F - double(k + 1) / N)});
  }
  CHECK(std::sqrt(N) * D < 1.95);
}

TEST_CASE("chi draws: chi^2_nu has mean nu and variance 2 nu, within 4 SE, for nu from 1 to 63") {
  for (double nu : {1.0, 2.0, 5.0, 63.0}) {
    const int N = 200'000;
    double s1 = 0, s2 = 0;
    for (int t = 0; t < N; ++t) {
      SampleStream stream(7, std::uint64_t(t));
      float z;
      stream.normals(&z, 1);
      const double c = stream.chi(nu, z, stream.uniform());
      s1 += c * c;
      s2 += c * c * c * c;
    }
    const double mean = s1 / N, var = s2 / N - mean * mean;
    CAPTURE(nu);
    CHECK(std::fabs(mean - nu) < 4.0 * std::sqrt(2.0 * nu / N));
    // var of the sample variance of chi^2: (E x^4 - var^2) / N, E (x - nu)^4 = 12 nu^2 + 48 nu
    CHECK(std::fabs(var - 2.0 * nu) < 4.0 * std::sqrt((12.0 * nu * nu + 48.0 * nu - 4.0 * nu * nu) / N));
  }
}

namespace {
// Means and standard errors of a block of samples, from the simulator directly.
RunMoments simulate(const Settings& s, bool explicit_inputs) {
  Simulator sim(s, explicit_inputs);
  BlockSums sums(sim.layout().total());
  REQUIRE(sim.simulate_block(0, s.samples, sums));
  RunMoments m(sim.layout().total());
  m.merge(sums);
  return m;
}
}  // namespace

TEST_CASE("the reduced input basis has the law of explicit d-dimensional inputs (every norm, alpha, mask)" *
          doctest::test_suite("slow")) {
  struct Case {
    Settings s;
  };
  std::vector<Settings> cases;
  Settings a = test::ln_recency(32, 0.5, 30'000);  // LayerNorm: the all-ones direction kept apart
  a.gamma = 0.5;
  cases.push_back(a);
  Settings b = test::behind_rope(8, 24, 0.3, 30'000);  // l2, unit input, residual; m = 9 < d
  cases.push_back(b);
  Settings c = test::ln_recency(6, 0.2, 30'000);  // rows (11) above d - 1 (5): m = k
  c.norm = Norm::rmsnorm;
  cases.push_back(c);
  Settings e = test::ln_recency(16, 0.0, 30'000);  // no common direction: n rows only
  e.mask = MaskKind::bidirectional;
  e.norm = Norm::none;
  cases.push_back(e);
  for (const Settings& s : cases) {
    REQUIRE(validate(s).empty());
    REQUIRE(input_basis(s).reduced);
    const RunMoments r = simulate(s, false), x = simulate(s, true);
    const AccumLayout L = accum_layout(s);
    CAPTURE(s.d);
    CAPTURE(int(s.norm));
    int checked = 0;
    for (int l = 0; l < s.layers; ++l) {
      std::vector<std::size_t> entries = {L.rp(l),
                                          L.adjacency(l),
                                          L.norm_adjacency(l),
                                          L.norm(l) + s.n - 1,
                                          L.score(l) + L.map_cell(s.n - 1, L.map_lo(s.n - 1)),
                                          L.cosine(l) + L.cosine_cell(s.n - 1, 0)};
      for (std::size_t k : entries) {
        const double se = std::hypot(r.standard_error(k), x.standard_error(k));
        if (!(se > 0)) continue;
        CAPTURE(l);
        CAPTURE(k);
        // Plus the float rounding of one sample's value (2^-23 relative, a few operations deep), which
        // no sample count averages away: it decides where a quantity barely varies (cosines of a
        // collapsed bidirectional stack vary by 1e-9).
        CHECK(std::fabs(r.mean[k] - x.mean[k]) < 4.5 * se + 4.0 * 0x1.0p-23 * std::fabs(x.mean[k]));
        ++checked;
      }
    }
    CHECK(checked >= 3 * s.layers);
  }
}
