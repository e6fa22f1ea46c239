// Exact segment sums: any grouping of segments gives the same bits, and a run split into ranges of
// segments (threads, MPI ranks, shard files) adds up to the one-process run exactly.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#include "core/stats/exact_sums.hpp"
#include "core/stats/sample_grid.hpp"
#include "core/stats/snapshot.hpp"
#include "helpers.hpp"

using namespace maskscope;

namespace {

BlockSums random_segment(std::mt19937_64& rng, std::size_t size, double scale) {
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_int_distribution<int> exponent(-60, 20);
  BlockSums b(size);
  b.count = 1 + std::int64_t(rng() % 1000);
  for (std::size_t k = 0; k < size; ++k) {
    // Mixed magnitudes, signs, a subnormal and zeros, so that carries and borrows cross every word.
    const double x = normal(rng) * std::ldexp(scale, exponent(rng));
    b.sum[k] = k % 7 == 3 ? 0.0 : k % 11 == 5 ? 4.9e-324 : x;
    b.sumsq[k] = 3 * std::fabs(x);  // within the range (|x| < 2^48) like every value
  }
  return b;
}

bool same_bits(const ExactSums& a, const ExactSums& b) {
  return a.count() == b.count() && std::memcmp(a.words(), b.words(), a.word_count() * 8) == 0 &&
         a.invalid() == b.invalid();
}

}  // namespace

TEST_CASE("exact_add: adding then subtracting leaves zero; values read back within long double rounding") {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> e(-90, 46);
  for (int t = 0; t < 2000; ++t) {
    std::uint64_t w[3] = {0, 0, 0};
    const double a = std::ldexp(u(rng), e(rng)), b = std::ldexp(u(rng), e(rng));
    REQUIRE(exact_add(w, a));
    REQUIRE(exact_add(w, b));
    // Exact: a + b in long double is exact when the exponents are within 64 bits, else check loosely.
    const long double want = static_cast<long double>(a) + static_cast<long double>(b);
    CHECK(std::fabs(static_cast<double>(exact_value(w) - want)) <=
          std::ldexp(1.0, -99) + 1e-18 * std::fabs(double(want)));
    REQUIRE(exact_add(w, -a));
    REQUIRE(exact_add(w, -b));
    CHECK(w[0] == 0);
    CHECK(w[1] == 0);
    CHECK(w[2] == 0);
  }
  std::uint64_t w[3] = {0, 0, 0};
  CHECK_FALSE(exact_add(w, std::ldexp(1.0, 48)));  // out of range: refused, nothing added
  CHECK_FALSE(exact_add(w, INFINITY));
  CHECK_FALSE(exact_add(w, NAN));
  CHECK(exact_add(w, std::ldexp(1.0, 48) * 0.999));
  CHECK(static_cast<double>(exact_value(w)) == std::ldexp(1.0, 48) * 0.999);
  CHECK(exact_add(w, -std::ldexp(1.0, 48) * 0.999));
  CHECK(exact_add(w, -0.75));
  CHECK(static_cast<double>(exact_value(w)) == -0.75);
}

TEST_CASE("ExactSums: the same bits for any order and grouping of segments") {
  std::mt19937_64 rng(11);
  const std::size_t size = 257;
  std::vector<BlockSums> segs;
  for (int g = 0; g < 24; ++g) segs.push_back(random_segment(rng, size, g % 3 == 0 ? 1e6 : 1.0));
  ExactSums forward(size), backward(size), grouped(size);
  for (const auto& b : segs) forward.add(b);
  for (auto it = segs.rbegin(); it != segs.rend(); ++it) backward.add(*it);
  // Three "ranks" of uneven sizes, each summed separately, then added in reverse rank order.
  ExactSums r1(size), r2(size), r3(size);
  for (int g = 0; g < 5; ++g) r1.add(segs[g]);
  for (int g = 5; g < 6; ++g) r2.add(segs[g]);
  for (int g = 6; g < 24; ++g) r3.add(segs[g]);
  grouped.add(r3);
  grouped.add(r1);
  grouped.add(r2);
  CHECK(same_bits(forward, backward));
  CHECK(same_bits(forward, grouped));
  // Moments: the mean agrees with a long double sum to long double precision.
  RunMoments m(size);
  forward.moments(m, 0);
  const std::int64_t total = std::accumulate(segs.begin(), segs.end(), std::int64_t(0),
                                             [](std::int64_t a, const BlockSums& b) { return a + b.count; });
  CHECK(m.count == total);
  for (std::size_t k = 0; k < size; k += 17) {
    long double s = 0;
    for (const auto& b : segs) s += b.sum[k];
    CHECK(m.mean[k] == doctest::Approx(double(s / total)).epsilon(1e-12));
  }
}

TEST_CASE("ExactSums: an out-of-range segment marks only that value NaN, whatever the grouping") {
  BlockSums a(3), b(3);
  a.count = b.count = 2;
  a.sum = {1.0, 2.0, 3.0};
  a.sumsq = {1.0, 4.0, 9.0};
  b.sum = {1.0, INFINITY, 1e300};
  b.sumsq = {1.0, 1.0, 1.0};
  ExactSums x(3), y(3);
  x.add(a);
  x.add(b);
  ExactSums part(3);
  part.add(b);
  y.add(part);
  y.add(a);
  CHECK(same_bits(x, y));
  RunMoments m(3);
  x.moments(m, 0);
  CHECK(m.mean[0] == 0.5);
  CHECK(std::isnan(m.mean[1]));
  CHECK(std::isnan(m.mean[2]));
}

TEST_CASE("shard ranges tile the segments: near-equal, in order, none empty") {
  Settings s = test::ln_recency(16, 0.5, 1'000'003);
  const SampleGrid g = sample_grid(s);
  REQUIRE(g.segments() > 7);
  for (std::int64_t count : {std::int64_t(1), std::int64_t(3), std::int64_t(7), g.segments()}) {
    std::int64_t at = 0;
    for (std::int64_t k = 1; k <= count; ++k) {
      CHECK(shard_error(g, k, count).empty());
      const SegmentRange r = shard_segments(g, k, count);
      CHECK(r.begin == at);
      CHECK(r.end > r.begin);
      CHECK(r.end - r.begin <= g.segments() / count + 1);
      at = r.end;
    }
    CHECK(at == g.segments());
  }
  CHECK(g.first_sample(g.segments()) == s.samples);
  CHECK(shard_error(g, 0, 3).find("K = 0") != std::string::npos);
  CHECK(shard_error(g, 4, 3).find("[1, 3]") != std::string::npos);
  CHECK(shard_error(g, 1, g.segments() + 1).find("segments") != std::string::npos);
}

TEST_CASE("a run split into segment ranges adds up to the one-process run, bit for bit") {
  for (Settings s : {test::ln_recency(16, 0.5, 40'000), test::behind_rope(40, 64, 0.3, 6'000)}) {
    s.layers = 3;
    if (s.norm == Norm::l2) s.rope_base = 100;
    const SampleGrid g = sample_grid(s);
    REQUIRE(g.segments() >= 3);
    if (s.n == 40) CHECK(g.segment_blocks >= 2);  // segments of several blocks too
    s.threads = 2;
    Run whole(s);
    whole.wait();
    ExactSums merged(whole.exact().size());
    const std::int64_t cuts[] = {0, 1, g.segments() / 2, g.segments()};
    for (int p = 2; p >= 0; --p) {  // in reverse order, with 1, 2 and 3 threads
      RunOptions o;
      o.segments = {cuts[p], cuts[p + 1]};
      Settings t = s;
      t.threads = p + 1;
      Run part(t, o);
      part.wait();
      CHECK(part.samples_done() == g.first_sample(cuts[p + 1]) - g.first_sample(cuts[p]));
      merged.add(part.exact());
    }
    CHECK(same_bits(whole.exact(), merged));
    RunMoments m(merged.size());
    merged.moments(m, 0);
    const Snapshot a = *whole.snapshot(), b = make_snapshot(s, m, key_ranges(s));
    for (int l = 0; l < s.layers; ++l) {
      CHECK(a.layers[l].rp.mean == b.layers[l].rp.mean);
      CHECK(a.layers[l].rp.se == b.layers[l].rp.se);
      for (std::size_t e = 0; e < a.layers[l].score_mean.size(); ++e)
        if (!std::isnan(a.layers[l].score_mean[e])) {
          CHECK(a.layers[l].score_mean[e] == b.layers[l].score_mean[e]);
          CHECK(a.layers[l].weight_se[e] == b.layers[l].weight_se[e]);
        }
    }
  }
}
