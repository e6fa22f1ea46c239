// The metric table (core/stats/metric_table.hpp) against what reads it: each row reads its own field, the
// run's JSON writes exactly the table's estimates (key, key_se, key_ties) for layers, heads and embeddings,
// `leakage` writes a layer's leakage as `run` does, and the sweep's --metric names are the sweepable rows.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include "core/formats/result_json.hpp"
#include "core/run/runner.hpp"
#include "core/run/sweep_spec.hpp"
#include "core/stats/metric_table.hpp"
#include "random_weights_helpers.hpp"

using namespace maskscope;

namespace {

// The scalar keys of a JSON object (numbers and null), less those that are not a metric's estimate.
std::set<std::string> scalar_keys(const nlohmann::json& o) {
  static const std::set<std::string> kNotEstimates = {
      "layer", "head", "delta_r2_mean_map", "r2_base", "score_diag_normalized_q01", "score_diag_normalized_q99"};
  std::set<std::string> keys;
  for (auto it = o.begin(); it != o.end(); ++it)
    if ((it->is_number() || it->is_null()) && !kNotEstimates.count(it.key())) keys.insert(it.key());
  return keys;
}

// The keys the table says a writer gives for rows passing `keep`.
template <class Keep>
std::set<std::string> table_keys(Keep keep) {
  std::set<std::string> keys;
  for (const MetricInfo& m : metric_table())
    if (keep(m)) {
      keys.insert(std::string(m.key));
      keys.insert(std::string(m.key) + "_se");
      if (m.ties) keys.insert(std::string(m.key) + "_ties");
    }
  return keys;
}

std::shared_ptr<const Snapshot> small_network() {
  Settings s = test::random_weights(6, 16, 2, 2, 40);
  s.threads = 2;
  return run_to_completion(s);
}

}  // namespace

TEST_CASE("metric table: keys are unique and every row is complete") {
  std::set<std::string_view> keys;
  for (const MetricInfo& m : metric_table()) {
    INFO(m.key);
    CHECK(keys.insert(m.key).second);
    CHECK(bool(m.field));
    CHECK_FALSE(m.label.empty());
    CHECK_FALSE(m.name.empty());
    CHECK_FALSE(m.unit.empty());
    CHECK_FALSE(m.description.empty());
    CHECK(find_metric(m.key) == &m);
  }
  CHECK(find_metric("first_key") == nullptr);  // one name per quantity: sink_weight
  CHECK(find_metric("sink") == nullptr);
}

TEST_CASE("metric table: each row reads its own estimate of a layer and a head, and the JSON writes it") {
  Snapshot snap = *small_network();
  LayerStats& l = snap.layers[0];
  // Distinct values per field, set through the fields themselves (not the table).
  const std::map<std::string, double> expected = {
      {"rp", 0.11},       {"adjacency", 0.22},       {"norm_adjacency", 0.33},
      {"delta_r2", 0.44}, {"weight_delta_r2", 0.55}, {"sink_weight", 0.66}};
  REQUIRE(expected.size() == metric_table().size());
  auto estimate = [](double v) { return Estimate{v, v / 2, v / 4, 7}; };  // exact halves: == compares
  l.rp = estimate(0.11);
  l.adjacency = estimate(0.22);
  l.norm_adjacency = estimate(0.33);
  l.leakage.delta_r2 = estimate(0.44);
  l.weight_leakage.delta_r2 = estimate(0.55);
  l.sink_weight = estimate(0.66);
  HeadStats& h = l.heads.at(1);
  h.rp = estimate(0.77);
  h.leakage.delta_r2 = estimate(0.88);
  const nlohmann::json j = snapshot_to_json(snap);
  const nlohmann::json& layer = j["layers"][0];
  for (const MetricInfo& m : metric_table()) {
    const std::string key(m.key);
    INFO(key);
    REQUIRE(expected.count(key) == 1);
    const double v = expected.at(key);
    CHECK(m.of(l).mean == v);
    CHECK(m.of(l).se == v / 2);
    CHECK(m.of(l).samples == 7);
    CHECK(layer.at(key).get<double>() == v);
    CHECK(layer.at(key + "_se").get<double>() == v / 2);
    if (m.ties) CHECK(layer.at(key + "_ties").get<double>() == v / 4);
    CHECK(std::isnan(estimate_of(l, m).ties) == !m.ties);
  }
  CHECK(find_metric("rp")->of(h).mean == 0.77);
  CHECK(find_metric("delta_r2")->of(h).mean == 0.88);
  CHECK(j["layers"][0]["heads"][1]["rp"].get<double>() == 0.77);
  CHECK(j["layers"][0]["heads"][1]["delta_r2_se"].get<double>() == 0.88 / 2);
}

TEST_CASE("metric table: the run's JSON writes exactly the table's estimates for layers, heads and embeddings") {
  const auto snap = small_network();
  const nlohmann::json j = snapshot_to_json(*snap);
  for (const nlohmann::json& layer : j["layers"]) {
    CHECK(scalar_keys(layer) == table_keys([](const MetricInfo&) { return true; }));
    for (const nlohmann::json& head : layer["heads"])
      CHECK(scalar_keys(head) == table_keys([](const MetricInfo& m) { return m.head_field != nullptr; }));
  }
  CHECK(scalar_keys(j["embeddings"]) == table_keys([](const MetricInfo& m) { return m.embeddings; }));
  // The parameter-free family leaves out the rows of the random-weight family.
  Settings s;
  s.n = 5;
  s.d = 8;
  s.layers = 1;
  s.samples = 20;
  const nlohmann::json pf = snapshot_to_json(*run_to_completion(s));
  CHECK(scalar_keys(pf["layers"][0]) == table_keys([](const MetricInfo& m) { return !m.random_weights_only; }));
}

TEST_CASE("metric table: a metric the table bounds by [0, 1] stays there; one with a chance level has ties") {
  const auto snap = small_network();
  int checked = 0;
  for (const LayerStats& l : snap->layers)
    for (const MetricInfo& m : metric_table()) {
      INFO(m.key << " layer " << l.layer);
      const Estimate& e = m.of(l);
      CHECK(e.samples == 40);
      if (!m.unit_interval || !std::isfinite(e.mean)) continue;
      CHECK(e.mean >= 0.0);
      CHECK(e.mean <= 1.0);
      CHECK(e.se >= 0.0);
      ++checked;
    }
  CHECK(checked >= 6);
  for (const MetricInfo& m : metric_table())
    if (std::isfinite(m.chance)) CHECK(m.ties);  // 0.5 = no order, which ties 1/2 keep exact
}

TEST_CASE("metric table: `leakage` writes a layer's leakage with run's keys and values (one shape per estimate)") {
  const auto snap = small_network();
  const nlohmann::json run = snapshot_to_json(*snap);
  for (std::size_t k = 0; k < snap->layers.size(); ++k) {
    const nlohmann::json leak = leakage_layer_json(snap->layers[k]);
    CHECK(scalar_keys(leak) ==
          table_keys([](const MetricInfo& m) { return m.group == MetricGroup::leakage; }));  // with their SEs
    for (auto it = leak.begin(); it != leak.end(); ++it) {
      INFO(it.key());
      CHECK(run["layers"][k].at(it.key()) == it.value());
    }
  }
}

TEST_CASE("metric table: the sweep's --metric names are the sweepable rows, and first_key names sink_weight") {
  std::string names;
  for (const MetricInfo& m : metric_table())
    if (m.sweepable) {
      names += std::string(m.key) + ", ";
      const SweepMetric parsed = parse_sweep_metric(std::string(m.key));
      CHECK(parsed.kind == SweepMetric::Kind::table);
      CHECK(parsed.row == &m);
      CHECK(sweep_metric_name(parsed) == m.key);
    }
  CHECK(sweep_metric_names_text() == names + "score:I,J, weight:I,J");
  CHECK(parse_sweep_metric("weight:3,1").kind == SweepMetric::Kind::weight);
  try {
    parse_sweep_metric("first_key");
    FAIL("first_key was accepted");
  } catch (const std::runtime_error& e) { CHECK(std::string(e.what()).find("'sink_weight'") != std::string::npos); }
}
