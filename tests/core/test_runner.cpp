// The runner: determinism across thread counts, cancellation, pause, refinement, and what a run
// publishes first (the maps and sums are in test_runner_maps.cpp and test_runner_sums.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <thread>

#include "core/run/publish_pace.hpp"
#include "core/stats/map.hpp"
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
    CHECK(A.rp.mean == B.rp.mean);
    CHECK(A.rp.mean == C.rp.mean);
    CHECK(A.adjacency.mean == B.adjacency.mean);
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
    CHECK(A.rp.mean == B.rp.mean);
    CHECK(A.rp.mean == C.rp.mean);
    CHECK(A.rp.se == C.rp.se);
    CHECK(A.adjacency.mean == C.adjacency.mean);
    CHECK(A.norm_adjacency.mean == C.norm_adjacency.mean);
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
  CHECK(a->layers[1].rp.mean != b->layers[1].rp.mean);
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
    CHECK(std::isfinite(L.rp.mean));
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
      CHECK(run.snapshot()->layers[l].rp.mean == together->layers[l].rp.mean);
      const auto &a = run.snapshot()->layers[l].weight_mean, &b = together->layers[l].weight_mean;
      REQUIRE(a.size() == b.size());
      CHECK(same_bits(a, b));  // NaN where masked, in both
    }
  }
}

TEST_CASE(
    "first_picture_alone with one-sample blocks: the first picture is sample 0's values, and the run's bits stay") {
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
    CHECK(f.rp.mean == z.rp.mean);
    const std::vector<double> se = f.score_se.unpacked();
    CHECK(std::count_if(se.begin(), se.end(), [](double v) { return v != 0.0 && !std::isnan(v); }) ==
          0);  // one sample: no SE
    const LayerStats &a = run.snapshot()->layers[l], &b = together->layers[l];
    CHECK(same(a.score_mean, b.score_mean));
    CHECK(same(a.score_se, b.score_se));  // the squares, implied then formed, are the stored ones
    CHECK(same(a.weight_se, b.weight_se));
    CHECK(same(a.cosine_se, b.cosine_se));
    CHECK(a.rp.se == b.rp.se);
    CHECK(a.leakage.delta_r2.mean == b.leakage.delta_r2.mean);
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

// The publisher's wait between pictures (publish_pace.hpp): pictures take at most their share of the
// workers' time, and never come faster than the publish interval.
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;

// The share of `workers` threads' time that pictures of cost `cost`, one every cost + wait, take.
double share_taken(nanoseconds cost, nanoseconds wait, int workers) {
  return double(cost.count()) / (double(workers) * double((cost + wait).count()));
}
}  // namespace

TEST_CASE("publish_wait: a cheap picture comes at the publish interval") {
  // n 10: a snapshot costs well under a millisecond.
  CHECK(publish_wait(milliseconds(25), nanoseconds(200'000), 2, 0.05) == milliseconds(25));
  CHECK(publish_wait(milliseconds(25), nanoseconds(0), 2, 0.05) == milliseconds(25));
}

TEST_CASE("publish_wait: an expensive picture waits until pictures take their share of the workers' time") {
  // n 512 in the window: 30 ms of snapshot and 30 ms of panels and frame, two workers, 5%: wait 540 ms.
  const nanoseconds cost = milliseconds(60);
  const nanoseconds wait = publish_wait(milliseconds(25), cost, 2, 0.05);
  CHECK(wait == milliseconds(540));
  CHECK(share_taken(cost, wait, 2) == doctest::Approx(0.05));
  // One worker: twice the wait for the same share; ten times the share: a tenth of the cycle.
  CHECK(publish_wait(milliseconds(25), cost, 1, 0.05) == milliseconds(1140));
  CHECK(share_taken(cost, publish_wait(milliseconds(25), cost, 4, 0.1), 4) == doctest::Approx(0.1));
}

TEST_CASE("publish_wait: a share of a third of one worker is the stepped run's rule, twice the cost") {
  CHECK(publish_wait(milliseconds(25), milliseconds(40), 1, 1.0 / 3).count() ==
        doctest::Approx(double(nanoseconds(milliseconds(80)).count())).epsilon(1e-9));
  CHECK(publish_wait(milliseconds(100), milliseconds(40), 1, 1.0 / 3) == milliseconds(100));
}

TEST_CASE("publish_wait: edge cases keep the interval or the default share") {
  CHECK(publish_wait(milliseconds(25), milliseconds(60), 0, 0.05) == milliseconds(25));   // no workers
  CHECK(publish_wait(milliseconds(25), milliseconds(60), 20, 0.05) == milliseconds(25));  // a whole core's share
  CHECK(publish_wait(milliseconds(25), milliseconds(60), 2, 0) ==
        publish_wait(milliseconds(25), milliseconds(60), 2, kDefaultPictureShare));
  CHECK(publish_wait(milliseconds(25), std::chrono::hours(2), 2, 0.05) == std::chrono::hours(1));  // capped
}
