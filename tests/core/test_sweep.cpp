// The sweep engine (core/run/sweep.hpp): each point's layers equal a direct run's bit for bit, common random
// numbers, early stopping at the target SE, the cap, and cancel.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <thread>
#include <vector>

#include "core/formats/result_json.hpp"
#include "core/run/sweep.hpp"
#include "core/stats/sample_grid.hpp"
#include "helpers.hpp"

using namespace maskscope;

namespace {

std::vector<Settings> alphas(const Settings& base, std::vector<double> values) {
  std::vector<Settings> points;
  for (double a : values) {
    Settings s = base;
    s.alpha = a;
    points.push_back(s);
  }
  return points;
}

std::shared_ptr<const SweepState> sweep_to_end(std::vector<Settings> points, SweepOptions o = {}) {
  Sweep sweep(std::move(points), o);
  sweep.wait();
  return sweep.snapshot();
}

// The layers of a direct run of `s` with `samples` samples, as `maskscope-cli run` writes them.
nlohmann::json run_layers(Settings s, std::int64_t samples) {
  s.samples = samples;
  return snapshot_to_json(*run_to_completion(s))["layers"];
}

}  // namespace

TEST_CASE("every point of a sweep to its cap has the layers of a direct run, bit for bit") {
  Settings base = test::ln_recency(16, 0.5, 1);
  const SampleGrid g = sample_grid(base);
  base.samples = g.block_size * g.segment_blocks * 5 / 2 + 3;  // 3 segments, the last partial (and its last block)
  const auto state = sweep_to_end(alphas(base, {0.2, 0.5, 0.8}));
  REQUIRE(state->finished);
  REQUIRE(state->points.size() == 3);
  for (const SweepPoint& p : state->points) {
    INFO("alpha " << p.settings.alpha);
    CHECK(p.samples == base.samples);
    CHECK(!p.stopped_early);
    CHECK(snapshot_to_json(*p.snapshot)["layers"] == run_layers(p.settings, base.samples));
  }
  CHECK(state->stages == 3);  // segments [0, 1), [1, 2), [2, 3)
}

TEST_CASE("the preview: every point's first picture is `run` with a few samples, before the first stage") {
  Settings base = test::ln_recency(16, 0.5, 100000);
  std::mutex m;
  std::vector<std::shared_ptr<const SweepState>> states;
  SweepOptions o;
  o.on_publish = [&](const std::shared_ptr<const SweepState>& s) {
    std::lock_guard lock(m);
    states.push_back(s);
  };
  sweep_to_end(alphas(base, {0.3, 0.7}), o);
  std::lock_guard lock(m);
  REQUIRE(!states.empty());
  CHECK(states.back()->finished);
  const auto first = std::find_if(states.begin(), states.end(), [](const auto& s) {
    return std::all_of(s->points.begin(), s->points.end(), [](const SweepPoint& p) { return p.snapshot != nullptr; });
  });
  REQUIRE(first != states.end());
  CHECK((*first)->stages == 0);
  const std::int64_t preview = preview_samples(base);
  CHECK(preview < sample_grid(base).first_sample(1));
  for (const SweepPoint& p : (*first)->points) {
    CHECK(p.samples == preview);
    CHECK(!p.done);
    CHECK(snapshot_to_json(*p.snapshot)["layers"] == run_layers(p.settings, preview));
  }
}

TEST_CASE("a random-weight sweep's points equal direct runs, bit for bit") {
  Settings base;
  base.model = Model::random_weights;
  base.gamma = 1;
  base.n = 6;
  base.d = 16;
  base.heads = 2;
  base.layers = 2;
  base.samples = 200;
  base.seed = 9;
  base.threads = 2;
  std::vector<Settings> points(2, base);
  points[1].init_std = 0.5;
  const auto state = sweep_to_end(points);
  REQUIRE(state->finished);
  for (const SweepPoint& p : state->points) {
    INFO("init_std " << p.settings.init_std);
    const nlohmann::json direct = snapshot_to_json(*[&] {
      Settings s = p.settings;
      return run_to_completion(s);
    }());
    const nlohmann::json got = snapshot_to_json(*p.snapshot);
    CHECK(got["layers"] == direct["layers"]);
    CHECK(got["embeddings"] == direct["embeddings"]);
  }
}

TEST_CASE("early stopping: every point reaches the target SE before the cap and equals a run of its samples") {
  Settings base = test::ln_recency(16, 0.5, 10'000'000);
  SweepOptions o;
  o.target_se = 0.001;  // about 5 segments of 2048 samples: several stages
  const auto state = sweep_to_end(alphas(base, {0.3, 0.6}), o);
  REQUIRE(state->finished);
  for (const SweepPoint& p : state->points) {
    INFO("alpha " << p.settings.alpha);
    CHECK(p.stopped_early);
    CHECK(p.samples < base.samples);
    CHECK(p.samples >= kSweepMinSamplesToStop);
    for (const LayerStats& l : p.snapshot->layers) CHECK(l.rp.se <= 0.001);
    // Whole segments: the samples of a run with that many samples (sample_grid.hpp).
    const SampleGrid g = sample_grid(p.settings);
    const std::int64_t per_segment = g.block_size * g.segment_blocks;
    CHECK(p.samples % per_segment == 0);
    CHECK(p.samples > per_segment);
    CHECK(snapshot_to_json(*p.snapshot)["layers"] == run_layers(p.settings, p.samples));
  }
}

TEST_CASE("a target SE out of reach runs every point to the cap") {
  Settings base = test::ln_recency(16, 0.5, 2500);
  SweepOptions o;
  o.target_se = 1e-6;
  o.metric = parse_sweep_metric("adjacency");
  const auto state = sweep_to_end(alphas(base, {0.4, 0.9}), o);
  REQUIRE(state->finished);
  for (const SweepPoint& p : state->points) {
    CHECK(p.samples == 2500);
    CHECK(!p.stopped_early);
    CHECK(p.done);
  }
}

TEST_CASE("common random numbers: neighbouring points' difference is far more precise than each point") {
  // Over seeds, the spread of RP(0.52) - RP(0.50) estimates the difference's SE; each point's own SE is
  // what its snapshot says. With the same streams at both points the difference's SE is much smaller.
  Settings base = test::ln_recency(16, 0.5, 2000);
  std::vector<double> diff;
  double own_se = 0;
  const int seeds = 10;
  for (int seed = 1; seed <= seeds; ++seed) {
    base.seed = std::uint64_t(1000 + seed);
    const auto state = sweep_to_end(alphas(base, {0.50, 0.52}));
    const LayerStats &a = state->points[0].snapshot->layers[1], &b = state->points[1].snapshot->layers[1];
    diff.push_back(b.rp.mean - a.rp.mean);
    own_se += 0.5 * (a.rp.se + b.rp.se) / seeds;
  }
  double mean = 0, var = 0;
  for (double x : diff) mean += x / seeds;
  for (double x : diff) var += (x - mean) * (x - mean) / (seeds - 1);
  const double diff_se = std::sqrt(var);
  INFO("SE of the difference " << diff_se << ", each point's SE " << own_se);
  CHECK(own_se > 0);
  CHECK(diff_se < 0.5 * own_se);
}

TEST_CASE("cancel stops a sweep promptly and done() follows") {
  Settings base = test::ln_recency(64, 0.5, 1'000'000'000);
  base.n = 64;
  Sweep sweep(alphas(base, {0.1, 0.3, 0.5, 0.7, 0.9}), {});
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto t0 = std::chrono::steady_clock::now();
  sweep.cancel();
  sweep.wait();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(sweep.done());
  CHECK(seconds < 0.5);
  const auto state = sweep.snapshot();
  CHECK(state->cancelled);
  CHECK(!state->finished);
}

TEST_CASE("sweep axes: lists, linear and log ranges, whole numbers rounded and deduplicated") {
  CHECK(parse_sweep_axis("alpha=0.1,0.5").values == std::vector<std::string>{"0.1", "0.5"});
  CHECK(parse_sweep_axis("init-std=0.01:0.03:3").key == "init_std");
  CHECK(parse_sweep_axis("alpha=0:1:5").values == std::vector<std::string>{"0", "0.25", "0.5", "0.75", "1"});
  CHECK(parse_sweep_axis("d=4:1024:5log").values == std::vector<std::string>{"4", "16", "64", "256", "1024"});
  CHECK(parse_sweep_axis("n=2:4:6").values == std::vector<std::string>{"2", "3", "4"});
  // Decimal steps give the decimals typed, not start + t (stop - start)'s rounding noise (0.049999999999999996).
  CHECK(parse_sweep_axis("alpha=0:0.9:19").values[1] == "0.05");
  CHECK(parse_sweep_axis("alpha=0:0.9:19").values[14] == "0.7");
  CHECK(parse_sweep_axis("rope=10:1000000:6log").values ==
        std::vector<std::string>{"10", "100", "1000", "10000", "1e+05", "1e+06"});  // the shortest text
  CHECK(parse_sweep_axis("mask=causal,window:3").values.size() == 2);
  for (const char* bad :
       {"alpha", "unknown=1,2", "alpha=", "alpha=0.1,,0.2", "alpha=2", "alpha=0:1:1", "alpha=0:1:xlog",
        "alpha=0:1:5log", "norm=0:1:2", "samples=1,2", "alpha=0.1,0.1", "d=0:8:3"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_sweep_axis(bad), std::runtime_error);
  }
  Settings base;
  const auto points = sweep_points(base, {parse_sweep_axis("alpha=0,1"), parse_sweep_axis("d=16,32,64")}, false);
  REQUIRE(points.size() == 6);
  CHECK(points[1].alpha == 0);
  CHECK(points[1].d == 32);
  CHECK(points[3].alpha == 1);
  CHECK_THROWS_AS(sweep_points(base, {parse_sweep_axis("alpha=0,1"), parse_sweep_axis("alpha=0.5")}, false),
                  std::runtime_error);
  CHECK_THROWS_AS(sweep_points(base, {parse_sweep_axis("alpha=0:1:1000"), parse_sweep_axis("d=1:1000:11")}, false),
                  std::runtime_error);  // 11000 points
  CHECK_THROWS_AS(sweep_points(base, {parse_sweep_axis("mask=causal,window:20")}, false), std::runtime_error);  // n 10
}

TEST_CASE("sweep axes: whole-number ranges exactly as integers (seeds to 2^64 - 1); one value given twice refused") {
  // 9007199254740993 = 2^53 + 1 has no double: a range through doubles ran seed 9007199254740992.
  CHECK(parse_sweep_axis("seed=0:9007199254740993:2").values == std::vector<std::string>{"0", "9007199254740993"});
  CHECK(parse_sweep_axis("seed=18446744073709551613:18446744073709551615:3").values ==
        std::vector<std::string>{"18446744073709551613", "18446744073709551614", "18446744073709551615"});
  CHECK(parse_sweep_axis("weight-seed=0:18446744073709551615:3").values ==
        std::vector<std::string>{"0", "9223372036854775808", "18446744073709551615"});
  CHECK(parse_sweep_axis("seed=10:1:4").values == std::vector<std::string>{"10", "7", "4", "1"});
  CHECK(parse_sweep_axis("seed=1:18446744073709551615:3log").values.back() == "18446744073709551615");
  CHECK(parse_sweep_axis("n=2:4:6").values == std::vector<std::string>{"2", "3", "4"});  // rounded, deduplicated
  Settings s;
  setting_from_text("seed", parse_sweep_axis("seed=0:9007199254740993:2").values[1], s);
  CHECK(s.seed == 9007199254740993ULL);
  // Values that read as one value: the setting named, both spellings quoted.
  for (const auto& [spec, message] : std::vector<std::pair<std::string, std::string>>{
           {"alpha=0.5,0.50", "alpha: the values '0.5' and '0.50' are the same alpha"},
           {"d=16,16.0", "d: the values '16' and '16.0' are the same d"},
           {"seed=1,2,1e0", "seed: the values '1' and '1e0' are the same seed"},
           {"mask=window:4,window:04", "mask: the values 'window:4' and 'window:04' are the same mask"}}) {
    INFO(spec);
    CHECK_THROWS_WITH_AS(parse_sweep_axis(spec), doctest::Contains(message.c_str()), std::runtime_error);
  }
}
