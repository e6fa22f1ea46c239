// The runner: determinism across thread counts, cancellation, snapshots, metric helpers.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <thread>

#include "core/metrics.hpp"
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
  CHECK(quantile({nan, 1, 2, 3, 4, 5}, 0.5) == doctest::Approx(3.0));
  CHECK(quantile({0, 10}, 0.01) == doctest::Approx(0.1));
  CHECK(std::isnan(quantile({nan, nan}, 0.5)));
}
