// Sums and snapshot memory: the pool of released maps, big buffers, block sums (implied squares,
// a split first sample), and make_snapshot's stop.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <vector>

#include "core/stats/big_buffer.hpp"
#include "core/stats/map.hpp"
#include "core/stats/metrics.hpp"
#include "helpers.hpp"

using namespace maskscope;

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
    for (auto [x, y] : {std::pair{&a.score_mean, &b.score_mean},
                        {&a.score_se, &b.score_se},
                        {&a.weight_mean, &b.weight_mean},
                        {&a.cosine_mean, &b.cosine_mean},
                        {&a.cosine_se, &b.cosine_se},
                        {&a.score_diag_normalized, &b.score_diag_normalized}}) {
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
  held.clear();                                            // four snapshots released
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
    CHECK(std::memcmp(from_stored.words(), from_implied.words(), from_stored.word_count() * sizeof(std::uint64_t)) ==
          0);
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
          REQUIRE(
              sim.simulate_block(4, count, two, nullptr, {.implied_squares = count == 1, .split_first_sample = true}));
          CHECK(two.count == count);
          REQUIRE(one.sum.size() == two.sum.size());
          REQUIRE(one.sumsq.size() == two.sumsq.size());
          CHECK(std::memcmp(one.sum.data(), two.sum.data(), one.sum.size() * sizeof(double)) == 0);
          CHECK(one.sumsq.empty() == (count == 1));  // one sample: squares implied, no array
          if (!one.sumsq.empty())                    // (memcmp takes no null pointer, even for 0 bytes)
            CHECK(std::memcmp(one.sumsq.data(), two.sumsq.data(), one.sumsq.size() * sizeof(double)) == 0);
        }
      }
    }
  }
}
