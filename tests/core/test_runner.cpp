// The runner: determinism across thread counts, cancellation, snapshots, metric helpers.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>

#include "core/stats/big_buffer.hpp"
#include "core/stats/map.hpp"
#include "core/stats/metrics.hpp"
#include "helpers.hpp"

using namespace maskscope;

TEST_CASE("bit-identical results for 1, 2 and 3 threads") {
  Settings s = test::ln_recency(16, 0.5, 20'000);
  s.layers = 3;
  s.rope_base = 100;
  s.threads = 1;
  auto a = run_to_completion(s);
  s.threads = 2;
  auto b = run_to_completion(s);
  s.threads = 3;
  auto c = run_to_completion(s);
  REQUIRE(a->samples_done == 20'000);
  for (int l = 0; l < s.layers; ++l) {
    const auto &A = a->layers[l], &B = b->layers[l], &C = c->layers[l];
    CHECK(A.recency == B.recency);
    CHECK(A.recency == C.recency);
    CHECK(A.adjacency == B.adjacency);
    for (std::size_t e = 0; e < A.score_mean.size(); ++e) {
      if (std::isnan(A.score_mean[e])) continue;
      CHECK(A.score_mean[e] == B.score_mean[e]);
      CHECK(A.score_mean[e] == C.score_mean[e]);
      CHECK(A.weight_se[e] == B.weight_se[e]);
    }
  }
}

TEST_CASE("per-sample streams: the same bits for 1, 2, 3 threads in the reduced basis, and layer 1 whatever follows") {
  Settings s = test::ln_recency(64, 0.5, 30'000);
  s.n = 12;
  s.layers = 2;
  s.gamma = 0.3;
  s.threads = 1;
  auto a = run_to_completion(s);
  s.threads = 3;
  auto b = run_to_completion(s);
  s.layers = 4;  // two more layers: layer 1 and 2 see the same samples and the same sums
  s.threads = 2;
  auto c = run_to_completion(s);
  for (int l = 0; l < 2; ++l) {
    const auto &A = a->layers[l], &B = b->layers[l], &C = c->layers[l];
    CHECK(A.recency == B.recency);
    CHECK(A.recency == C.recency);
    CHECK(A.recency_se == C.recency_se);
    CHECK(A.adjacency == C.adjacency);
    CHECK(A.norm_adjacency == C.norm_adjacency);
    for (std::size_t e = 0; e < A.score_mean.size(); ++e) {
      if (std::isnan(A.score_mean[e])) continue;
      CHECK(A.score_mean[e] == B.score_mean[e]);
      CHECK(A.score_mean[e] == C.score_mean[e]);
      CHECK(A.cosine_mean[e] == C.cosine_mean[e]);
    }
  }
}

TEST_CASE("a sample is the same in any block: a trace equals the run's sample at that index") {
  Settings s = test::ln_recency(32, 0.5, 1);
  Simulator sim(s);
  const auto block = sim.trace_block(40, 5);  // samples 40..44
  const SampleTrace one = sim.trace_sample(43);
  CHECK(block[3].layers[1].weights == one.layers[1].weights);  // (scores hold NaN where masked)
  CHECK(block[3].layers[1].output == one.layers[1].output);
  CHECK(block[3].input == one.input);
  CHECK(block[2].input != one.input);
}

TEST_CASE("a different seed gives different numbers") {
  Settings s = test::ln_recency(16, 0.5, 2000);
  auto a = run_to_completion(s);
  s.seed += 1;
  auto b = run_to_completion(s);
  CHECK(a->layers[1].recency != b->layers[1].recency);
}

TEST_CASE("cancel leaves a consistent snapshot: whole blocks, finite values, flagged") {
  Settings s = test::ln_recency(64, 0.5, 1'000'000'000);
  Run run(s);
  while (run.samples_done() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  run.cancel();
  run.wait();
  auto snap = run.snapshot();
  CHECK(run.done());
  CHECK(snap->cancelled);
  CHECK_FALSE(snap->finished);
  CHECK(snap->samples_done > 0);
  CHECK(snap->samples_done < s.samples);
  for (const auto& L : snap->layers) {
    CHECK(std::isfinite(L.recency));
    for (int i = 0; i < s.n; ++i) CHECK(std::isfinite(L.score_mean[i * s.n + i]));
  }
}

TEST_CASE("snapshots refine monotonically and the last one is complete") {
  Settings s = test::ln_recency(64, 0.5, 300'000);
  Run run(s);
  std::int64_t last = -1;
  while (!run.done()) {
    const auto snap = run.snapshot();
    CHECK(snap->samples_done >= last);
    last = snap->samples_done;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  auto snap = run.snapshot();
  CHECK(snap->finished);
  CHECK(snap->samples_done == 300'000);
  CHECK(snap->samples_per_s > 0);
}

TEST_CASE("pause holds the sample count; resume finishes") {
  Settings s = test::ln_recency(64, 0.5, 200'000);
  Run run(s);
  run.set_paused(true);
  // Each worker finishes the block it holds, then waits: the count settles within a block's time
  // (a few ms here; much longer under ThreadSanitizer), so wait until it has not moved for 1 s.
  auto held = run.samples_done();
  for (int i = 0; i < 60; ++i) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const auto now = run.samples_done();
    if (now == held) break;
    held = now;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK(run.samples_done() == held);
  run.set_paused(false);
  run.wait();
  CHECK(run.snapshot()->samples_done == 200'000);
}

TEST_CASE("invalid settings throw with every violation named") {
  Settings s;
  s.n = 0;
  s.alpha = 2;
  try {
    Run run(s);
    FAIL("expected an exception");
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    CHECK(what.find("--n") != std::string::npos);
    CHECK(what.find("--alpha") != std::string::npos);
  }
}

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
      CHECK(L.map_cell(i, keys.hi[std::size_t(i)]) == cells + std::size_t(keys.hi[std::size_t(i)] - keys.lo[std::size_t(i)]));
      cells += std::size_t(keys.hi[std::size_t(i)] - keys.lo[std::size_t(i)] + 1);
      CHECK(AccumLayout::cosine_row(i + 1) - AccumLayout::cosine_row(i) == std::size_t(i + 1));
    }
    CHECK(L.map_row(s.n) == cells);
    CHECK(L.map_cells == cells);
    CHECK(L.per_layer == 2 * cells + 45 + 9 + 8);  // two maps, the cosines' triangle, norms, per-sample metrics
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
    for (std::size_t k = 0; k < shape->cells(); ++k) cells[k] = k % 17 == 5 ? std::nan("") : normal(rng) + 0.01 * double(k);
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

TEST_CASE("a new run's first picture is its settings alone; an abandoned run lets go of its sums once stopped") {
  Settings s = test::ln_recency(64, 0.5, 1'000'000'000);
  s.n = 40;
  RunOptions o;
  o.start_paused = true;
  Run run(s, o);
  const auto first = run.snapshot();
  CHECK(first->samples_done == 0);
  CHECK(first->layers.empty());
  CHECK(first->settings == s);
  run.set_paused(false);
  while (run.samples_done() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  run.abandon();
  run.wait();
  CHECK(run.exact().size() == 0);
  CHECK(run.snapshot()->layers.empty());
}

TEST_CASE("first_picture_alone: the first picture is the first block alone, then every worker computes, same bits") {
  Settings s = test::ln_recency(64, 0.5, 400);
  s.n = 40;  // 22 samples a block: 19 blocks
  s.threads = 3;
  for (std::int64_t samples : {std::int64_t(400), std::int64_t(10)}) {  // many blocks; one block for three workers
    CAPTURE(samples);
    s.samples = samples;
    std::atomic<Run*> started{nullptr};
    std::atomic<std::int64_t> first{-1};
    RunOptions o;
    o.first_picture_alone = true;
    o.start_paused = true;  // so that `started` is set before any picture
    o.on_publish = [&] {    // on the publisher thread, right after it published
      if (Run* r = started.load(); r && first.load() < 0) first = r->snapshot()->samples_done;
    };
    Run run(s, o);
    started = &run;
    run.set_paused(false);
    run.wait();
    CHECK(first.load() == std::min(run.grid().block_size, samples));
    const auto together = run_to_completion(s);
    REQUIRE(run.snapshot()->samples_done == samples);
    for (int l = 0; l < s.layers; ++l) {
      CHECK(run.snapshot()->layers[l].recency == together->layers[l].recency);
      const auto &a = run.snapshot()->layers[l].weight_mean, &b = together->layers[l].weight_mean;
      REQUIRE(a.size() == b.size());
      CHECK(same_bits(a, b));  // NaN where masked, in both
    }
  }
}

TEST_CASE("first_picture_alone with one-sample blocks: the first picture is sample 0's values, and the run's bits stay") {
  // From n 300 at d 64 a block is one sample: the first picture is built from the open segment's
  // own values (borrowed, not copied) with M2 0, and the segment keeps its squares implied until
  // the next block is added. Both must leave the run's result as it is without them.
  Settings s = test::ln_recency(64, 0.5, 70);  // 70 samples: a segment of 64 and a part of one
  s.n = 300;
  s.layers = 2;
  s.threads = 3;
  std::atomic<Run*> started{nullptr};
  std::shared_ptr<const Snapshot> first;
  std::mutex m;
  RunOptions o;
  o.first_picture_alone = true;
  o.start_paused = true;
  o.on_publish = [&] {
    Run* r = started.load();
    std::lock_guard lock(m);
    if (r && !first) first = r->snapshot();
  };
  Run run(s, o);
  REQUIRE(run.grid().block_size == 1);
  started = &run;
  run.set_paused(false);
  run.wait();
  Settings one = s;
  one.samples = 1;
  const auto sample0 = run_to_completion(one), together = run_to_completion(s);
  std::lock_guard lock(m);
  REQUIRE(first);
  REQUIRE(first->samples_done == 1);
  REQUIRE(run.snapshot()->samples_done == 70);
  auto same = [](const Map& a, const Map& b) { return same_bits(a, b); };
  for (int l = 0; l < s.layers; ++l) {
    CAPTURE(l);
    const LayerStats &f = first->layers[l], &z = sample0->layers[l];
    CHECK(same(f.score_mean, z.score_mean));
    CHECK(same(f.weight_mean, z.weight_mean));
    CHECK(same(f.cosine_mean, z.cosine_mean));
    CHECK(f.recency == z.recency);
    const std::vector<double> se = f.score_se.unpacked();
    CHECK(std::count_if(se.begin(), se.end(), [](double v) { return v != 0.0 && !std::isnan(v); }) == 0);  // one sample: no SE
    const LayerStats &a = run.snapshot()->layers[l], &b = together->layers[l];
    CHECK(same(a.score_mean, b.score_mean));
    CHECK(same(a.score_se, b.score_se));  // the squares, implied then formed, are the stored ones
    CHECK(same(a.weight_se, b.weight_se));
    CHECK(same(a.cosine_se, b.cosine_se));
    CHECK(a.recency_se == b.recency_se);
    CHECK(a.leakage.delta_r2 == b.leakage.delta_r2);
  }
}

TEST_CASE("a paused run publishes nothing new until it has new samples") {
  Settings s = test::ln_recency(64, 0.5, 50'000);
  std::atomic<int> published{0};
  RunOptions o;
  o.start_paused = true;
  o.on_publish = [&] { ++published; };
  Run run(s, o);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // twelve publish intervals
  CHECK(published.load() == 0);
  CHECK(run.snapshot()->samples_done == 0);
  run.set_paused(false);
  run.wait();
  CHECK(published.load() >= 1);
  CHECK(run.snapshot()->samples_done == 50'000);
}

TEST_CASE("a released snapshot's maps serve the next one, which equals a snapshot in fresh memory") {
  Settings s = test::ln_recency(64, 0.5, 1);
  s.n = 300;  // 1.1 MB of moments a layer: pooled
  s.layers = 2;
  const KeyRanges keys = key_ranges(s);
  RunMoments m(accum_layout(s).total());
  m.count = 7;
  for (std::size_t k = 0; k < m.mean.size(); ++k) {
    m.mean[k] = std::sin(0.001 * double(k));
    m.m2[k] = 1.0 + 1e-4 * double(k % 1000);
  }
  const Snapshot fresh = make_snapshot(s, m, keys);
  auto shared = share_snapshot(make_snapshot(s, m, keys));
  std::set<const double*> released;
  for (const LayerStats& l : shared->layers)
    for (const auto* v : {&l.score_mean, &l.score_se, &l.weight_mean, &l.weight_se, &l.cosine_mean, &l.cosine_se})
      released.insert(v->cells());
  shared.reset();
  const Snapshot reused = make_snapshot(s, m, keys);
  int from_pool = 0;
  for (std::size_t l = 0; l < reused.layers.size(); ++l) {
    const LayerStats &a = fresh.layers[l], &b = reused.layers[l];
    for (auto [x, y] : {std::pair{&a.score_mean, &b.score_mean}, {&a.score_se, &b.score_se}, {&a.weight_mean, &b.weight_mean},
                        {&a.cosine_mean, &b.cosine_mean}, {&a.cosine_se, &b.cosine_se}, {&a.score_diag_normalized, &b.score_diag_normalized}}) {
      REQUIRE(x->size() == y->size());
      for (std::size_t e = 0; e < x->size(); ++e)
        if (!(std::isnan((*x)[e]) && std::isnan((*y)[e]))) REQUIRE((*x)[e] == (*y)[e]);
      from_pool += released.count(y->cells()) > 0;
    }
    CHECK(a.leakage.delta_r2 == b.leakage.delta_r2);
    CHECK(a.score_diag_q99 == b.score_diag_q99);
  }
  CHECK(from_pool > 0);
}

TEST_CASE("arrays of a smaller n leave the pool when a larger n's snapshot finds none that fit") {
  auto moments = [](const Settings& s) {  // as a run's publisher takes them
    RunMoments m = pooled_moments(accum_layout(s).total());
    std::fill(m.mean.begin(), m.mean.end(), 0.0);
    std::fill(m.m2.begin(), m.m2.end(), 0.0);
    m.count = 3;
    return m;
  };
  release_pooled_maps();  // other tests' arrays
  CHECK(pooled_map_bytes() == 0);
  Settings s = test::ln_recency(64, 0.5, 1);
  s.layers = 1;
  s.n = 200;  // 484 KB of means and as many M2: pooled
  const std::size_t small = accum_layout(s).total() * sizeof(double);
  share_snapshot(make_snapshot(s, moments(s), key_ranges(s))).reset();  // released: its arrays kept
  CHECK(pooled_map_bytes() >= 2 * small);
  s.n = 300;  // 1.1 MB: the 484 KB arrays fit none
  const std::size_t large_bytes = accum_layout(s).total() * sizeof(double);
  auto large = share_snapshot(make_snapshot(s, moments(s), key_ranges(s)));
  CHECK(pooled_map_bytes() == 0);  // the smaller arrays were let go, not kept beside the larger
  large.reset();
  CHECK(pooled_map_bytes() >= 2 * large_bytes);
  s.n = 200;  // a smaller n takes the larger arrays
  auto again = share_snapshot(make_snapshot(s, moments(s), key_ranges(s)));
  CHECK(pooled_map_bytes() < 2 * large_bytes);
}

TEST_CASE("the pool keeps at most one snapshot's arrays, however many are released") {
  release_pooled_maps();
  Settings s = test::ln_recency(64, 0.5, 1);
  s.layers = 2;
  s.n = 300;
  RunMoments m(accum_layout(s).total());
  m.count = 3;
  std::vector<std::shared_ptr<const Snapshot>> held;
  for (int k = 0; k < 4; ++k) held.push_back(share_snapshot(make_snapshot(s, m, key_ranges(s))));
  const AccumLayout L = accum_layout(s);
  const std::size_t one = 2 * L.total() * sizeof(double);  // means and standard errors
  held.clear();  // four snapshots released
  CHECK(pooled_map_bytes() == one);
}

TEST_CASE("big buffers: zeroed, and aligned to a huge page from 2 MiB") {
  for (std::size_t bytes : {std::size_t(24), std::size_t(4096), std::size_t(3) << 20, (std::size_t(5) << 20) + 8}) {
    auto* p = static_cast<unsigned char*>(big_zeroed_alloc(bytes));
    REQUIRE(p != nullptr);
    std::size_t nonzero = 0;
    for (std::size_t k = 0; k < bytes; ++k) nonzero += p[k] != 0;
    CHECK(nonzero == 0);
    if (bytes >= (std::size_t(2) << 20)) CHECK(reinterpret_cast<std::uintptr_t>(p) % (std::uintptr_t(2) << 20) == 0);
    p[bytes - 1] = 1;  // writable to its end
    big_free(p, bytes);
  }
  CHECK(big_zeroed_alloc(0) == nullptr);
}

TEST_CASE("block sums start at zero: new, reset to another size, and reset after use") {
  // Small (malloc) and large (mmap) sizes: BigAllocator writes nothing for a new array's zeros.
  for (std::size_t size : {std::size_t(100), std::size_t(700'000)}) {
    CAPTURE(size);
    auto zeros = [](const BlockSums& b) {
      std::size_t nonzero = 0;
      for (std::size_t k = 0; k < b.sum.size(); ++k) nonzero += (b.sum[k] != 0.0) + (b.sumsq[k] != 0.0);
      return nonzero == 0 && b.count == 0;
    };
    BlockSums b(size);
    REQUIRE(b.sum.size() == size);
    CHECK(zeros(b));
    std::fill(b.sum.begin(), b.sum.end(), 1.5);
    std::fill(b.sumsq.begin(), b.sumsq.end(), -2.0);
    b.count = 3;
    b.reset(size);  // the same size: written over
    CHECK(zeros(b));
    std::fill(b.sum.begin(), b.sum.end(), 1.5);
    b.reset(size + 5);  // another size: new arrays
    REQUIRE(b.sumsq.size() == size + 5);
    CHECK(zeros(b));
    RunMoments m(size);
    std::size_t nonzero = 0;
    for (std::size_t k = 0; k < size; ++k) nonzero += (m.mean[k] != 0.0) + (m.m2[k] != 0.0);
    CHECK(nonzero == 0);
  }
}

TEST_CASE("a one-sample block with implied squares: its values alone, and the same segment sums bit for bit") {
  Settings s = test::ln_recency(64, 0.5, 10);
  s.n = 37;  // rows not a multiple of 4
  s.layers = 2;
  for (MaskKind mask : {MaskKind::causal, MaskKind::bidirectional}) {
    s.mask = mask;
    Simulator sim(s, false, Simulator::Kernel::per_sample);
    const std::size_t size = sim.layout().total();
    BlockSums stored[2], implied[2];
    for (int t = 0; t < 2; ++t) {
      REQUIRE(sim.simulate_block(std::uint64_t(5 + t), 1, stored[t]));
      REQUIRE(sim.simulate_block(std::uint64_t(5 + t), 1, implied[t], nullptr, {.implied_squares = true}));
      REQUIRE(implied[t].squares_implied());
      CHECK_FALSE(stored[t].squares_implied());
      REQUIRE(implied[t].sum.size() == size);
      CHECK(std::memcmp(implied[t].sum.data(), stored[t].sum.data(), size * sizeof(double)) == 0);
    }
    // A segment's first block, then a second one: from stored squares and from implied ones.
    BlockSums a, b;
    a.take(stored[0]);
    // A segment of one block folded as it is: its implied squares add exactly as stored ones.
    ExactSums from_stored(size), from_implied(size);
    from_stored.add(a);
    a.add(stored[1]);
    b.take(implied[0]);
    CHECK(b.squares_implied());  // an empty segment keeps them implied: nothing written on taking
    CHECK(b.sumsq.empty());
    from_implied.add(b);
    CHECK(std::memcmp(from_stored.words(), from_implied.words(), from_stored.word_count() * sizeof(std::uint64_t)) == 0);
    b.add(implied[1]);
    CHECK(a.count == 2);
    CHECK(b.count == 2);
    REQUIRE(b.sumsq.size() == size);
    CHECK(std::memcmp(a.sum.data(), b.sum.data(), size * sizeof(double)) == 0);
    CHECK(std::memcmp(a.sumsq.data(), b.sumsq.data(), size * sizeof(double)) == 0);
    // Blocks of more samples store their squares whatever is asked.
    BlockSums two;
    REQUIRE(sim.simulate_block(5, 2, two, nullptr, {.implied_squares = true}));
    CHECK(two.sumsq.size() == size);
    CHECK_FALSE(two.squares_implied());
  }
}

TEST_CASE("make_snapshot stops before the next layer once asked (an abandoned run's picture), and not otherwise") {
  Settings s = test::ln_recency(64, 0.5, 1);
  s.n = 200;  // 4 layers of 200: two threads
  RunMoments m(accum_layout(s).total());
  m.count = 3;
  const KeyRanges keys = key_ranges(s);
  std::atomic<bool> stop{true};
  const Snapshot stopped = make_snapshot(s, m, keys, &stop);
  for (const LayerStats& l : stopped.layers) CHECK(l.score_mean.empty());
  stop = false;
  const Snapshot whole = make_snapshot(s, m, keys, &stop);
  for (const LayerStats& l : whole.layers) CHECK(l.score_mean.size() == std::size_t(200) * 200);
}

TEST_CASE("a first sample whose pair counts are split over two threads gives the same bits as one thread") {
  // Every mask, 1 and 3 layers, RoPE and residuals, a block of two samples and a one-sample block
  // (squares implied).
  Settings s = test::ln_recency(64, 0.5, 10);
  for (MaskKind mask : {MaskKind::causal, MaskKind::bidirectional, MaskKind::window}) {
    s.mask = mask;
    s.window = 9;
    for (int layers : {1, 3}) {
      s.layers = layers;
      s.rope_base = layers == 3 ? 10000.0 : 0.0;
      s.gamma = layers == 3 ? 0.5 : 0.0;
      for (int n : {3, 37, 130}) {
        CAPTURE(n);
        CAPTURE(layers);
        CAPTURE(int(mask));
        s.n = n;
        Simulator sim(s, false, Simulator::Kernel::per_sample);
        for (std::int64_t count : {2, 1}) {
          CAPTURE(count);
          BlockSums one, two;
          REQUIRE(sim.simulate_block(4, count, one, nullptr, {.implied_squares = count == 1}));
          REQUIRE(sim.simulate_block(4, count, two, nullptr, {.implied_squares = count == 1, .split_first_sample = true}));
          CHECK(two.count == count);
          REQUIRE(one.sum.size() == two.sum.size());
          REQUIRE(one.sumsq.size() == two.sumsq.size());
          CHECK(std::memcmp(one.sum.data(), two.sum.data(), one.sum.size() * sizeof(double)) == 0);
          CHECK(one.sumsq.empty() == (count == 1));  // one sample: squares implied, no array
          if (!one.sumsq.empty())  // (memcmp takes no null pointer, even for 0 bytes)
            CHECK(std::memcmp(one.sumsq.data(), two.sumsq.data(), one.sumsq.size() * sizeof(double)) == 0);
        }
      }
    }
  }
}
