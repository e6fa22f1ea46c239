// A sweep's outputs and shards (core/run/sweep_output.hpp, sweep_shard.hpp): shards computed apart and joined
// give one process's file byte for byte (a point's numbers do not depend on the other points), and the
// sink_weight metric (the attention sink of 004) against its cells read by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/run/kernel_info.hpp"
#include "core/kernel/lane/lane_kernel.hpp"
#include "core/run/sweep.hpp"
#include "core/run/sweep_output.hpp"
#include "core/run/sweep_shard.hpp"
#include "helpers.hpp"

using namespace maskscope;

namespace {

std::shared_ptr<const SweepState> sweep_of(std::vector<Settings> points, const SweepOptions& o) {
  Sweep sweep(std::move(points), o);
  sweep.wait();
  return sweep.snapshot();
}

}  // namespace

TEST_CASE("a sweep's shards, computed apart and joined in any order, give one process's file byte for byte") {
  Settings base = test::ln_recency(16, 0.5, 1'000'000);
  const std::vector<SweepAxis> axes = {{"alpha", {"0.1", "0.3", "0.5", "0.7", "0.9"}}};
  const std::vector<Settings> points = sweep_points(base, axes, false);
  SweepOptions o;
  o.metric = parse_sweep_metric("rp");
  o.target_se = 0.001;  // points stop after different numbers of stages (8192 to 12288 samples)
  const auto whole = sweep_of(points, o);
  REQUIRE(whole->finished);
  const std::string json = sweep_json(axes, o.metric, *whole, o.target_se, base.samples);
  const std::string csv = sweep_csv(axes, o.metric, *whole);
  const nlohmann::json identity =
      sweep_identity(axes, o.metric, o.target_se, base, false, points.size(), kernel_name(points.front()));
  std::vector<std::string> texts;
  for (std::int64_t k = 1; k <= 2; ++k) {
    const std::vector<std::size_t> indices = sweep_shard_points(points.size(), k, 2);
    std::vector<Settings> part;
    for (std::size_t p : indices) part.push_back(points[p]);
    const auto state = sweep_of(part, o);
    texts.push_back(sweep_shard_text(make_sweep_shard(identity, k, 2, indices, axes, o.metric, *state)));
  }
  for (const auto& order : {std::vector<std::size_t>{0, 1}, std::vector<std::size_t>{1, 0}}) {
    std::vector<std::pair<SweepShard, std::string>> parts;
    for (std::size_t i : order) parts.emplace_back(parse_sweep_shard(texts[i], "part" + std::to_string(i)), "");
    SweepShard joined = join_sweep_shards(std::move(parts), true);
    CHECK(joined.k == 1);
    CHECK(joined.n == 1);
    joined.elapsed_s = whole->elapsed_s;  // the one field that is timing
    CHECK(sweep_shard_json(joined) == json);
    CHECK(sweep_shard_csv(joined) == csv);
  }
  // The test means something: the points stopped at different sample counts.
  CHECK(whole->points.front().samples != whole->points[2].samples);
  // One shard alone is not the sweep.
  std::vector<std::pair<SweepShard, std::string>> one;
  one.emplace_back(parse_sweep_shard(texts[1], "b.msweep"), "b.msweep");
  CHECK_THROWS_WITH_AS(join_sweep_shards(one, true),
                       "missing shard 1/2 (3 of the sweep's 5 points; a shard not "
                       "computed or not given?)",
                       std::runtime_error);
}

TEST_CASE("shard K of N takes every N-th point from the K-th; K and N are checked against the points") {
  CHECK(sweep_shard_points(7, 2, 3) == std::vector<std::size_t>{1, 4});
  CHECK(sweep_shard_points(7, 1, 1).size() == 7);
  CHECK(sweep_shard_error(7, 3, 3) == "");
  CHECK(sweep_shard_error(7, 4, 3).find("valid: K in [1, N] = [1, 3]") != std::string::npos);
  CHECK(sweep_shard_error(7, 1, 8).find("valid: N in [1, 7]") != std::string::npos);
  CHECK(sweep_shard_error(7, 0, 0).find("N must be at least 1") != std::string::npos);
}

TEST_CASE("sink_weight: the run's weight on key 0, the mean of the queries i >= 1 that see it, SE within the cells'") {
  const SweepMetric m = parse_sweep_metric("sink_weight");
  CHECK(sweep_metric_name(m) == "sink_weight");
  for (const std::string mask : {"causal", "bidirectional", "window:3"}) {
    INFO(mask);
    Settings s = test::ln_recency(16, 0.5, 3000);
    REQUIRE(parse_mask(mask, s));
    CHECK(sweep_metric_error(m, s) == "");
    const auto snap = run_to_completion(s);
    const int last = s.mask == MaskKind::window ? s.window - 1 : s.n - 1;  // the last query that sees key 0
    for (const LayerStats& l : snap->layers) {
      double sum = 0, se = 0;
      for (int i = 1; i <= last; ++i) {
        sum += l.weight_mean(i, 0);
        se += l.weight_se(i, 0);
      }
      const Estimate v = metric_value(l, m);
      CHECK(v.mean == l.sink_weight.mean);  // the estimate `run` writes, not a second one
      CHECK(v.se == l.sink_weight.se);
      CHECK(v.samples == 3000);
      CHECK(v.mean == doctest::Approx(sum / last).epsilon(1e-12));  // the mean of a mean is the mean
      CHECK(v.se > 0);
      CHECK(v.se <= se / last * (1 + 1e-12));  // SE(mean of cells) <= the mean of their SEs
      CHECK(std::isnan(v.ties));
      CHECK(v.mean > 0);
      CHECK(v.mean < 1);
    }
  }
  Settings s = test::ln_recency(16, 0.5, 10);
  s.n = 1;
  CHECK(sweep_metric_error(m, s).find("n >= 2") != std::string::npos);
  s.n = 10;
  REQUIRE(parse_mask("window:1", s));
  CHECK(sweep_metric_error(m, s).find("W >= 2") != std::string::npos);
}
