// The lane kernel (16 or 8 samples across SIMD lanes, core/lane_kernel.hpp) against the per-sample
// kernel, across instruction-set levels and batch widths (baseline x86-64 runs 16 lanes, AVX2 8),
// and against its own batches.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/run/kernel_info.hpp"
#include "core/kernel/lane/lane_kernel.hpp"
#include "core/random/random_stream.hpp"
#include "core/kernel/simd.hpp"
#include "core/kernel/sample_metrics.hpp"
#include "core/kernel/simulator.hpp"
#include "helpers.hpp"

using namespace maskscope;

namespace {

std::vector<Settings> lane_cases() {
  std::vector<Settings> v;
  Settings a = test::ln_recency(64, 0.5, 100);  // reduced basis, LayerNorm's all-ones coordinate
  v.push_back(a);
  Settings b = test::behind_rope(17, 24, 0.2, 100);  // l2, unit input, residual; rows not a multiple of 4
  b.layers = 3;
  v.push_back(b);
  Settings c = test::behind_rope(13, 16, 0.5, 100);  // RoPE: explicit basis, scrambled bands, window mask
  c.rope_base = 10000;
  c.rope_scramble = 3;
  c.mask = MaskKind::window;
  c.window = 4;
  v.push_back(c);
  Settings e = test::ln_recency(12, 0.0, 100);  // rows above d - 1, RMSNorm, partial residual, bidirectional
  e.n = 23;
  e.norm = Norm::rmsnorm;
  e.gamma = 0.5;
  e.mask = MaskKind::bidirectional;
  v.push_back(e);
  Settings f = test::ln_recency(7, 0.3, 100);  // explicit LayerNorm (d odd, RoPE off, n + 1 > d), scale 1/d
  f.n = 5;
  f.scale = Scale::d;
  f.layers = 3;
  v.push_back(f);
  Settings big = test::ln_recency(24, 0.5, 100);  // n above 64 (rows not a multiple of 4), residual
  big.n = 70;
  big.gamma = 1.0;
  v.push_back(big);
  // Rows whose widths grow with i (row_widths): a window mask over a common direction v, and tokens
  // without v under RMSNorm (the sums stop at each row's width; too narrow a width fails here).
  Settings wv = test::behind_rope(19, 32, 0.3, 100);
  wv.mask = MaskKind::window;
  wv.window = 6;
  wv.gamma = 0.5;
  v.push_back(wv);
  Settings w0 = test::ln_recency(48, 0.0, 100);
  w0.n = 29;
  w0.norm = Norm::rmsnorm;
  v.push_back(w0);
  Settings g = test::ln_recency(32, 1.0, 100);  // alpha 1: every token the same, no norm, exact ties
  g.norm = Norm::none;
  g.n = 3;
  v.push_back(g);
  return v;
}

double rel_gap(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    worst = std::max(worst, std::fabs(double(a[i]) - b[i]) / (1.0 + std::fabs(double(b[i]))));
  }
  return worst;
}

}  // namespace

TEST_CASE("the lane kernel computes every sample as the per-sample kernel does, to float rounding") {
  for (const Settings& s : lane_cases()) {
    REQUIRE(validate(s).empty());
    REQUIRE(use_lane_kernel(s, input_basis(s)));
    Simulator lanes(s, false, Simulator::Kernel::lanes), one(s, false, Simulator::Kernel::per_sample);
    // 37 samples from 5: two whole batches and a partial one, none aligned to 16.
    const auto a = lanes.trace_block(5, 37), b = one.trace_block(5, 37);
    REQUIRE(a.size() == b.size());
    CAPTURE(s.n);
    CAPTURE(s.d);
    CAPTURE(int(s.norm));
    for (std::size_t t = 0; t < a.size(); ++t) {
      CHECK(rel_gap(a[t].input, b[t].input) < 1e-6);  // the same draws (unit input rounds its own way)
      for (int l = 0; l < s.layers; ++l) {
        const LayerTrace &x = a[t].layers[std::size_t(l)], &y = b[t].layers[std::size_t(l)];
        CAPTURE(l);
        // Float rounding, grown through the layers' softmax and norms: 2^-23 a few hundred times over.
        CHECK(rel_gap(x.normalized, y.normalized) < 1e-4);
        CHECK(rel_gap(x.scores, y.scores) < 1e-4);
        CHECK(rel_gap(x.weights, y.weights) < 1e-4);
        CHECK(rel_gap(x.output, y.output) < 1e-4);
        // Metrics count comparisons; a near-tie may flip one of them.
        const auto same = [](double u, double v, double tol) {
          return (std::isnan(u) && std::isnan(v)) || std::fabs(u - v) <= tol;
        };
        CHECK(same(x.rp, y.rp, 0.02));
        CHECK(same(x.rp_ties, y.rp_ties, 0.02));
        CHECK(same(x.adjacency, y.adjacency, 0.05));
        CHECK(same(x.norm_adjacency, y.norm_adjacency, 0.05));
      }
    }
  }
}

TEST_CASE("alpha 1 in lanes: identical tokens give exact ties, RP exactly 1/2") {
  Settings s = lane_cases().back();
  Simulator sim(s, false, Simulator::Kernel::lanes);
  REQUIRE(sim.uses_lanes());
  for (const SampleTrace& t : sim.trace_block(0, 20))
    for (const LayerTrace& l : t.layers) {
      CHECK(l.rp == 0.5);
      CHECK(l.rp_ties == 1.0);
    }
}

TEST_CASE("a sample's lane numbers do not depend on its batch") {
  for (const Settings& s : lane_cases()) {
    Simulator sim(s, false, Simulator::Kernel::lanes);
    REQUIRE(sim.uses_lanes());
    const auto block = sim.trace_block(100, 40);  // samples 100..139: lanes 0..15, 0..15, 0..7
    for (std::int64_t t : {0, 7, 15, 16, 31, 39}) {
      const SampleTrace alone = sim.trace_sample(std::uint64_t(100 + t));
      const SampleTrace& in = block[std::size_t(t)];
      CAPTURE(t);
      for (int l = 0; l < s.layers; ++l) {
        CHECK(alone.layers[std::size_t(l)].output == in.layers[std::size_t(l)].output);
        CHECK(std::memcmp(alone.layers[std::size_t(l)].scores.data(), in.layers[std::size_t(l)].scores.data(),
                          sizeof(float) * in.layers[std::size_t(l)].scores.size()) == 0);
        CHECK(alone.layers[std::size_t(l)].rp == in.layers[std::size_t(l)].rp);
      }
    }
  }
}

TEST_CASE("the lane kernel's fused exponential is e^x within 1e-7 relative on [-87, 0], and 0 below") {
  typedef float f16 __attribute__((vector_size(64)));
  typedef std::int32_t i16 __attribute__((vector_size(64)));
  double worst = 0;
  std::uint64_t state = 7;
  for (int it = 0; it < 200000; ++it) {
    f16 x;
    for (int t = 0; t < 16; ++t) {
      const double u = double(splitmix64(state) >> 11) * 0x1.0p-53;
      x[t] = float(it % 4 == 0 ? -87.0 * u : -3.0 * u);  // the whole range, and softmax's usual one
    }
    const f16 y = simd::exp_nonpositive_lanes<f16, i16, true>(x);
    for (int t = 0; t < 16; ++t) {
      const double e = std::exp(double(x[t]));
      worst = std::max(worst, std::fabs(double(y[t]) - e) / e);
    }
  }
  MESSAGE("largest relative error: ", worst);
  CHECK(worst < 1.0e-7);
  const f16 below = f16{} - 88.0f, zero = f16{} + 0.0f;
  const f16 under = simd::exp_nonpositive_lanes<f16, i16, true>(below),
            one = simd::exp_nonpositive_lanes<f16, i16, true>(zero);
  for (int t = 0; t < 16; ++t) {
    CHECK(under[t] == 0.0f);
    CHECK(one[t] == 1.0f);
  }
}

TEST_CASE("the lane kernel: the same bits on every fused level and batch width; the portable level to float rounding") {
  // x86-64-v4 (16 lanes) and x86-64-v3 (8 lanes) fuse their multiply-adds: the same bits. The portable
  // level (baseline x86-64, and WebAssembly in the browser) multiplies, then adds: its own bits and kernel
  // name, within float rounding of the fused levels' (relative 1e-7 per operation, a few hundred in a
  // chain: 1e-4 here). (A near tie of two scores could order them the other way in one sample and move
  // a count by one; none does in these cases and samples.)
  const std::string best = lane_isa();
  const auto levels = lane_isas_available();
  MESSAGE("lane kernel levels here: ", levels.size(), ", best ", best);
  REQUIRE(!levels.empty());
  const std::string portable = levels.back();
  for (const Settings& s : lane_cases()) {
    std::vector<std::vector<double>> sums;
    for (const std::string& level : levels) {
      REQUIRE(set_lane_isa(level));
      CHECK(kernel_name(s, KernelChoice::lanes) == (level == portable ? "lanes-8 unfused" : "lanes-8"));
      Simulator sim(s, false, Simulator::Kernel::lanes);
      REQUIRE(sim.uses_lanes());
      BlockSums b(sim.layout().total());
      REQUIRE(sim.simulate_block(3, 45, b));
      CHECK(b.count == 45);
      sums.emplace_back(b.sum.begin(), b.sum.end());
      sums.back().insert(sums.back().end(), b.sumsq.begin(), b.sumsq.end());
    }
    for (std::size_t i = 1; i + 1 < sums.size(); ++i) {  // the fused levels
      CAPTURE(levels[i]);
      CHECK(std::memcmp(sums[i].data(), sums[0].data(), sizeof(double) * sums[0].size()) == 0);
    }
    if (sums.size() < 2) continue;  // a processor without AVX2 has the portable level only
    const std::vector<double>& fused = sums.front();
    const std::vector<double>& unfused = sums.back();
    std::size_t far = 0, different = 0;
    for (std::size_t e = 0; e < fused.size(); ++e) {
      if (std::isnan(fused[e]) && std::isnan(unfused[e])) continue;
      different += fused[e] != unfused[e];
      far += !(std::abs(fused[e] - unfused[e]) <= 1e-4 * (1 + std::abs(fused[e])));
    }
    MESSAGE("portable vs fused: ", different, " of ", fused.size(), " sums differ, ", far, " beyond 1e-4");
    CHECK(different > 0);  // really the other rounding
    CHECK(far == 0);
  }
  CHECK_FALSE(set_lane_isa("x86-64-v9"));
  REQUIRE(set_lane_isa(best));
}

TEST_CASE("lane block sums add the traced samples in trees of eight lanes, in sample order, bit for bit") {
  // The block runs the fast input path (draws written straight into the lanes) and the sums; the
  // traces take draw_inputs' path, sample by sample. Both must give the same values, and the sums must
  // be what the documented order gives: per batch of 8 from the block's first sample,
  // ((v0 + v4) + (v1 + v5)) + ((v2 + v6) + (v3 + v7)) with missing lanes 0, added batch after batch.
  // (Sums of a few floats in double are mostly exact whatever the order; the sums of squares, with
  // products of 48 bits, round now and then, and there a different tree shows: grouping lanes 0-3 as
  // ((0 + 1) + 2) + 3 fails at 29 samples.)
  std::vector<Settings> cases;
  cases.push_back(test::ln_recency(64, 0.5, 100));  // LayerNorm, reduced basis, v's row
  Settings r = test::ln_recency(16, 0.0, 100);      // no v, residual, window mask
  r.gamma = 0.5;
  r.mask = MaskKind::window;
  r.window = 3;
  cases.push_back(r);
  // l2 with scale 1: layers 2 and 3 take their scores' sums off the diagonal from the previous layer's
  // cosine sums (scores_are_cosines); causal and bidirectional.
  for (MaskKind mask : {MaskKind::causal, MaskKind::bidirectional}) {
    Settings c = test::behind_rope(13, 24, 0.2, 100);
    c.layers = 3;
    c.mask = mask;
    cases.push_back(c);
  }
  const std::string best = lane_isa();
  for (const std::string& level : lane_isas_available()) {
    REQUIRE(set_lane_isa(level));
    for (const Settings& s : cases)
      for (const int count : {29, 205}) {  // whole batches of 8 (and of 16) and a partial one
        Simulator sim(s, false, Simulator::Kernel::lanes);
        REQUIRE(sim.uses_lanes());
        const std::uint64_t first = 5;
        BlockSums b(sim.layout().total());
        REQUIRE(sim.simulate_block(first, count, b));
        const auto traces = sim.trace_block(first, count);
        const AccumLayout& L = sim.layout();
        CAPTURE(level);
        CAPTURE(int(s.mask));
        CAPTURE(count);
        int cells = 0, exact = 0;
        for (int l = 0; l < s.layers; ++l)
          for (int i = 0; i < s.n; ++i)
            for (int j = L.map_lo(i); j <= i; ++j) {
              for (int map = 0; map < 2; ++map) {
                double sum = 0, sq = 0;
                for (int t0 = 0; t0 < count; t0 += 8) {
                  double v[8] = {};
                  for (int u = 0; u < 8 && t0 + u < count; ++u) {
                    const LayerTrace& lt = traces[std::size_t(t0 + u)].layers[std::size_t(l)];
                    v[u] = double((map == 0 ? lt.scores : lt.weights)[std::size_t(i * s.n + j)]);
                  }
                  sum += ((v[0] + v[4]) + (v[1] + v[5])) + ((v[2] + v[6]) + (v[3] + v[7]));
                  sq += ((v[0] * v[0] + v[4] * v[4]) + (v[1] * v[1] + v[5] * v[5])) +
                        ((v[2] * v[2] + v[6] * v[6]) + (v[3] * v[3] + v[7] * v[7]));
                }
                const std::size_t at = (map == 0 ? L.score(l) : L.weight(l)) + L.map_cell(i, j);
                ++cells;
                exact += b.sum[at] == sum && b.sumsq[at] == sq;
              }
            }
        CHECK(cells > 0);
        CHECK(exact == cells);
      }
  }
  REQUIRE(set_lane_isa(best));
}

TEST_CASE("lane block sums are the per-sample kernel's statistics: means agree within their standard errors") {
  Settings s = test::ln_recency(64, 0.5, 20'000);
  s.layers = 3;
  Simulator lanes(s, false, Simulator::Kernel::lanes), one(s, false, Simulator::Kernel::per_sample);
  BlockSums a(lanes.layout().total()), b(one.layout().total());
  // Different samples (so the two estimates are independent) through the two kernels.
  REQUIRE(lanes.simulate_block(0, s.samples, a));
  REQUIRE(one.simulate_block(std::uint64_t(s.samples), s.samples, b));
  RunMoments ma(a.sum.size()), mb(b.sum.size());
  ma.merge(a);
  mb.merge(b);
  const AccumLayout L = lanes.layout();
  int checked = 0;
  for (int l = 0; l < s.layers; ++l)
    for (std::size_t k :
         {L.rp(l), L.adjacency(l), L.norm_adjacency(l), L.score(l) + L.map_cell(9, 3), L.weight(l) + L.map_cell(9, 9),
          L.cosine(l) + L.cosine_cell(9, 0), L.norm(l) + 9, L.score_slope(l)}) {
      const double se = std::hypot(ma.standard_error(k), mb.standard_error(k));
      REQUIRE(se > 0);
      CAPTURE(l);
      CAPTURE(k);
      CHECK(std::fabs(ma.mean[k] - mb.mean[k]) < 4.5 * se);
      ++checked;
    }
  CHECK(checked == 8 * s.layers);
}

TEST_CASE("recency in lanes equals its definition on the traced scores, exactly, counted or carried") {
  // lane_pairs counts four keys against each loaded one (rows of 1 .. n - 1 keys: whole blocks and
  // remainders); with l2 and a power-of-two scale (1, 1/4 at d 16, 1/64 for scale d) layer l+1's
  // recency pairs are layer l's cosine pairs (counts_carry_over), which holds only if the scores
  // order exactly as those cosines. d 24 with 1/sqrt(d), LayerNorm and a window count their own.
  std::vector<Settings> cases;
  for (MaskKind mask : {MaskKind::causal, MaskKind::bidirectional}) {
    Settings s = test::behind_rope(17, 24, 0.2, 100);
    s.layers = 3;
    s.mask = mask;
    cases.push_back(s);
  }
  for (auto [d, scale] : {std::pair{16, Scale::sqrt_d}, std::pair{64, Scale::d}, std::pair{24, Scale::sqrt_d}}) {
    Settings s = test::behind_rope(21, d, 0.4, 100);
    s.layers = 3;
    s.scale = scale;
    cases.push_back(s);
  }
  Settings ln = test::ln_recency(32, 0.5, 100);
  ln.n = 19;
  ln.layers = 2;
  ln.mask = MaskKind::window;
  ln.window = 5;
  cases.push_back(ln);
  for (const Settings& s : cases) {
    REQUIRE(validate(s).empty());
    Simulator sim(s, false, Simulator::Kernel::lanes);
    REQUIRE(sim.uses_lanes());
    const KeyRanges keys = key_ranges(s);
    CAPTURE(s.n);
    CAPTURE(s.d);
    CAPTURE(int(s.mask));
    CAPTURE(int(s.scale));
    int checked = 0;
    for (const SampleTrace& t : sim.trace_block(0, 40))
      for (const LayerTrace& l : t.layers) {
        std::vector<float> S = l.scores;
        S.resize(S.size() + 8);  // ordered_pairs' slack
        PairCounts total;
        for (int i = 0; i < s.n; ++i) {
          const PairCounts c = ordered_pairs(S.data() + std::size_t(i) * s.n, keys.lo[std::size_t(i)], i);
          total.wins += c.wins;
          total.ties += c.ties;
        }
        CHECK(l.rp == 0.5 * double(total.half_units()) / double(keys.recency_triples));
        CHECK(l.rp_ties == double(total.ties) / double(keys.recency_triples));
        ++checked;
      }
    CHECK(checked == 40 * s.layers);
  }
}
