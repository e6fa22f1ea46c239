// Position probes (Zuo et al. `003` Sec. 5.5; docs/model.md section 9): the scores' closed forms, no
// position read where none exists, learned absolute positions read at layer 0, ridge and MLP agreeing
// on the order of the features, the same numbers for any thread count, and refusals.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "core/run/position_probes.hpp"

using namespace maskscope;

namespace {

Settings fixed_network(int n, int d, int layers, MaskKind mask) {
  Settings s;
  s.model = Model::random_weights;
  s.weights = WeightsMode::fixed;
  s.n = n;
  s.d = d;
  s.heads = 2;
  s.layers = layers;
  s.gamma = 1.0;
  s.mask = mask;
  s.vocab = 16;
  s.seed = 7;
  s.threads = 2;
  return s;
}

ProbeRequest request(std::int64_t train, std::int64_t test, std::vector<ProbeFeature> features) {
  ProbeRequest r;
  r.train = train;
  r.test = test;
  r.features = std::move(features);
  return r;
}

const ProbeScore& score(const ProbeTable& t, int layer, ProbeFeature f) {
  return *t.layers[std::size_t(layer)].score[std::size_t(f)];
}

// RMSE / n of predicting the mean position (n - 1) / 2: the standard deviation of 0 .. n-1 over n.
double mean_prediction_nrmse(int n) { return std::sqrt((double(n) * n - 1.0) / 12.0) / n; }

}  // namespace

TEST_CASE("probe scores: exact predictions give R 1 and NRMSE 0; the mean position gives R 0, NRMSE sd / n") {
  const int n = 8;
  std::vector<double> exact, mean;
  for (int q = 0; q < 5; ++q)
    for (int i = 0; i < n; ++i) {
      exact.push_back(i);
      mean.push_back((n - 1) / 2.0);
    }
  ProbeOptions o;
  const ProbeScore e = score_predictions(exact, n, o);
  CHECK(e.pearson_r == doctest::Approx(1.0).epsilon(1e-12));
  CHECK(e.nrmse == doctest::Approx(0.0));
  CHECK(e.pearson_r_se == doctest::Approx(0.0).epsilon(1e-9));
  const ProbeScore m = score_predictions(mean, n, o);
  CHECK(m.pearson_r == 0.0);  // constant predictions: R defined as 0, never NaN
  CHECK(m.nrmse == doctest::Approx(mean_prediction_nrmse(n)).epsilon(1e-12));
}

TEST_CASE(
    "probe on states with no positional information (bidirectional NoPE): R within noise of 0, NRMSE of the "
    "mean") {
  // Bidirectional attention without positions is permutation-equivariant and the tokens are iid over
  // positions: no layer's X or Var_X carries the position.
  const Settings s = fixed_network(12, 32, 2, MaskKind::bidirectional);
  const ProbeRequest r = request(300, 300, {ProbeFeature::x, ProbeFeature::var});
  REQUIRE(validate_probe(s, r).empty());
  const auto t = run_position_probes(s, r);
  REQUIRE(t);
  for (int l = 0; l <= s.layers; ++l)
    for (ProbeFeature f : r.features) {
      const ProbeScore& p = score(*t, l, f);
      INFO("layer " << l << " feature " << to_string(f) << ": R " << p.pearson_r << " +- " << p.pearson_r_se
                    << ", NRMSE " << p.nrmse << " +- " << p.nrmse_se);
      CHECK(p.pearson_r_se > 0.0);
      CHECK(std::abs(p.pearson_r) < 4.0 * p.pearson_r_se + 0.02);
      // Fitted noise can only add error to the mean's: NRMSE at or just above the mean prediction's.
      CHECK(p.nrmse > mean_prediction_nrmse(s.n) - 4.0 * p.nrmse_se);
      CHECK(p.nrmse < mean_prediction_nrmse(s.n) + 4.0 * p.nrmse_se + 0.01);
    }
}

TEST_CASE("learned absolute positional embeddings at initialization: the X probe reads position at layer 0") {
  Settings s = fixed_network(16, 64, 1, MaskKind::bidirectional);
  const ProbeRequest r = request(200, 200, {ProbeFeature::x});
  s.pos_embedding = PosEmbedding::learned;
  const auto with = run_position_probes(s, r);
  REQUIRE(with);
  CHECK(score(*with, 0, ProbeFeature::x).pearson_r > 0.9);
  CHECK(score(*with, 0, ProbeFeature::x).nrmse < 0.5 * mean_prediction_nrmse(s.n));
  s.pos_embedding = PosEmbedding::none;  // the same network without its position table: nothing to read
  const auto without = run_position_probes(s, r);
  REQUIRE(without);
  CHECK(std::abs(score(*without, 0, ProbeFeature::x).pearson_r) < 0.1);
}

TEST_CASE("ridge and MLP probes agree in sign and in the order of the features (causal NoPE)" *
          doctest::test_suite("slow")) {
  // At d 128 both read X best, then Var_X, then Sim_X (at d 32 the MLP reads X far better than a linear map).
  const Settings s = fixed_network(16, 128, 2, MaskKind::causal);
  ProbeRequest r = request(200, 200, {ProbeFeature::x, ProbeFeature::var, ProbeFeature::sim});
  const auto ridge = run_position_probes(s, r);
  r.probe.kind = ProbeKind::mlp;
  r.probe.mlp_epochs = 30;
  const auto mlp = run_position_probes(s, r);
  REQUIRE(ridge);
  REQUIRE(mlp);
  for (int l = 1; l <= s.layers; ++l) {
    double rr[3], rm[3];
    for (ProbeFeature f : kProbeFeatures) {
      rr[int(f)] = score(*ridge, l, f).pearson_r;
      rm[int(f)] = score(*mlp, l, f).pearson_r;
      INFO("layer " << l << " " << to_string(f) << ": ridge R " << rr[int(f)] << ", MLP R " << rm[int(f)]);
      CHECK(rr[int(f)] > 0.0);
      CHECK(rm[int(f)] > 0.0);
    }
    INFO("layer " << l << ": ridge " << rr[0] << " " << rr[1] << " " << rr[2] << ", MLP " << rm[0] << " " << rm[1]
                  << " " << rm[2]);
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b)
        if (a != b) CHECK((rr[a] > rr[b]) == (rm[a] > rm[b]));
  }
}

TEST_CASE("position probes: the same numbers for any thread count") {
  Settings s = fixed_network(10, 16, 2, MaskKind::causal);
  for (ProbeKind kind : {ProbeKind::ridge, ProbeKind::mlp}) {
    ProbeRequest r = request(40, 30, {ProbeFeature::x, ProbeFeature::var, ProbeFeature::sim});
    r.probe.kind = kind;
    r.probe.mlp_epochs = 3;
    s.threads = 1;
    const auto one = run_position_probes(s, r);
    s.threads = 3;
    const auto three = run_position_probes(s, r);
    REQUIRE(one);
    REQUIRE(three);
    for (int l = 0; l <= s.layers; ++l)
      for (ProbeFeature f : kProbeFeatures) {
        const ProbeScore &a = score(*one, l, f), &b = score(*three, l, f);
        CHECK(a.pearson_r == b.pearson_r);
        CHECK(a.pearson_r_se == b.pearson_r_se);
        CHECK(a.nrmse == b.nrmse);
        CHECK(a.nrmse_se == b.nrmse_se);
      }
  }
}

TEST_CASE("position probes refuse per-sample weights, the parameter-free model and too few sequences") {
  auto names = [](const Settings& s, const ProbeRequest& r) {
    std::vector<std::string> out;
    for (const auto& e : validate_probe(s, r)) out.push_back(e.setting);
    return out;
  };
  Settings s = fixed_network(8, 16, 1, MaskKind::causal);
  CHECK(names(s, request(10, 10, {ProbeFeature::x})).empty());
  s.weights = WeightsMode::per_sample;
  CHECK(names(s, request(10, 10, {ProbeFeature::x})) == std::vector<std::string>{"weights"});
  s.weights = WeightsMode::fixed;
  CHECK(names(s, request(1, 10, {ProbeFeature::x})) == std::vector<std::string>{"train"});
  CHECK(names(s, request(10, 1, {ProbeFeature::x})) == std::vector<std::string>{"test"});
  CHECK(names(s, request(10, 10, {})) == std::vector<std::string>{"features"});
  Settings pf;
  CHECK(names(pf, request(10, 10, {ProbeFeature::x})) == std::vector<std::string>{"model"});
}
