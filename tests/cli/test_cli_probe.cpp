// maskscope-cli probe (Zuo et al.'s position probes) and run --histograms: the JSON they write, the same
// numbers for any thread count, and every bad input refused with exit 2 and the flag named.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

#include "cli_test_helpers.hpp"

using namespace cli_test;

namespace {

const std::string kNet = "--model random_weights --weights fixed --n 8 --d 16 --heads 2 --layers 2 --quiet";

}  // namespace

TEST_CASE("probe: one entry per layer (0 the embeddings) with Pearson-R and NRMSE and their SE per feature") {
  const std::string out = work("probe.json");
  const Result r = cli("probe " + kNet + " --train 30 --test 20 --threads 1 --out " + out);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const nlohmann::json j = read_json(out);
  REQUIRE(j["layers"].size() == 3);
  CHECK(j["probe"]["kind"] == "ridge");
  CHECK(j["probe"]["train"] == 30);
  for (int l = 0; l < 3; ++l) {
    CHECK(j["layers"][l]["layer"] == l);
    for (const char* f : {"x", "var", "sim"})
      for (const char* k : {"pearson_r", "pearson_r_se", "nrmse", "nrmse_se"}) {
        INFO(l << " " << f << " " << k);
        REQUIRE(j["layers"][l][f][k].is_number());
        CHECK(std::isfinite(j["layers"][l][f][k].get<double>()));
      }
  }
  const std::string out2 = work("probe2.json");
  REQUIRE(cli("probe " + kNet + " --train 30 --test 20 --threads 2 --out " + out2).code == 0);
  CHECK(read_json(out2)["layers"] == j["layers"]);  // any thread count
}

TEST_CASE("probe: the MLP probe and a subset of features") {
  const std::string out = work("probe_mlp.json");
  const Result r =
      cli("probe " + kNet + " --train 20 --test 10 --probe mlp --mlp-epochs 2 --features sim,x --out " + out);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const nlohmann::json j = read_json(out);
  CHECK(j["probe"]["kind"] == "mlp");
  CHECK(j["probe"]["mlp"]["epochs"] == 2);
  CHECK(j["layers"][1].contains("sim"));
  CHECK(!j["layers"][1].contains("var"));
}

TEST_CASE("probe: bad input is refused with exit 2, naming the flag") {
  const char* cases[][2] = {
      {"--model random_weights --weights per_sample", "--weights"},
      {"--model random_weights --weights fixed --train 1", "--train"},
      {"--model random_weights --weights fixed --test 0", "--test"},
      {"--model random_weights --weights fixed --features x,pos", "--features"},
      {"--model random_weights --weights fixed --features x,",
       "--features: an empty item in 'x,'; valid: a comma-separated list of x, var, sim"},
      {"--model random_weights --weights fixed --features x,,var", "--features: an empty item"},
      {"--model random_weights --weights fixed --probe svm", "--probe"},
      {"--model random_weights --weights fixed --ridge -1", "--ridge"},
      {"--model random_weights --weights fixed --mlp-epochs 0", "--mlp-epochs"},
      {"--model random_weights --weights fixed --n 1", "--n"},
      {"--model random_weights --weights fixed --hidden attention", "--hidden"},
      // 256 prompts: 200 + 100 sequences would test on lines the probe was trained on.
      {"--model random_weights --weights fixed --tokens builtin:zuo-addition --tokens-format chars --n 8 --vocab 95 "
       "--train 200 --test 100",
       "--test: train + test = 300 sequences, but the token file has 256 lines"},
      {"--n 8", "--model"},
      {"--preset /nonexistent/preset.json", "--preset"},
  };
  for (const auto& c : cases) {
    const Result r = cli(std::string("probe --quiet ") + c[0]);
    INFO(c[0] << "\n" << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(c[1]) != std::string::npos);
  }
}

TEST_CASE("run --histograms: Zuo et al.'s Fig. 2 histograms in each layer's JSON, summing to 1") {
  const std::string out = work("histograms.json");
  const Result r =
      cli("run --model random_weights --n 8 --d 16 --heads 2 --layers 2 --samples 50 --histograms 10 "
          "--quiet --out " +
          out);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const nlohmann::json j = read_json(out);
  for (const nlohmann::json& h : {j["layers"][0]["histograms"], j["embeddings"]["histograms"]}) {
    REQUIRE(h["sim_cb_minus_sim_ca"].size() == 10);
    double sum = 0;
    for (const auto& v : h["sim_ab_minus_sim_ac"]) sum += v.get<double>();
    CHECK(sum == doctest::Approx(1.0));
    CHECK(h["sim_cb_minus_sim_ca_above_zero"].is_number());
  }
  CHECK(j["layers"][0]["histograms"]["sim_cb_minus_sim_ca_above_zero"].get<double>() ==
        doctest::Approx(j["layers"][0]["adjacency"].get<double>()).epsilon(1e-9));
  CHECK(cli("run --n 8 --histograms 10 --quiet").code == 2);  // the parameter-free model has none
  CHECK(cli("run --model random_weights --histograms 7 --quiet").code == 2);
}

TEST_CASE("analyze: the probes and histograms of a run's saved hidden states are the run's own") {
  const std::string dir = work("probe_tensors"), run_out = work("probe_tensors_run.json");
  const std::string net = "--model random_weights --weights fixed --n 8 --d 16 --heads 2 --layers 2 --quiet";
  Result r = cli("run " + net + " --samples 24 --histograms 10 --save-tensors " + dir + " --out " + run_out);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const std::string analyzed = work("probe_tensors_analyze.json");
  r = cli("analyze " + dir + " --quiet --histograms 10 --probe-train 14 --out " + analyzed);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const nlohmann::json a = read_json(analyzed), run = read_json(run_out);
  for (int l = 0; l < 2; ++l)
    CHECK(a["layers"][l]["histograms"]["sim_ab_minus_sim_ac"] == run["layers"][l]["histograms"]["sim_ab_minus_sim_ac"]);
  CHECK(a["embeddings"]["histograms"]["adjacency_per_sample"] ==
        run["embeddings"]["histograms"]["adjacency_per_sample"]);
  // `probe` on the same network trains on samples 0..13 and tests on 14..23: the prompts analyze splits.
  const std::string probed = work("probe_tensors_probe.json");
  r = cli("probe " + net + " --train 14 --test 10 --out " + probed);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(a["probes"]["layers"] == read_json(probed)["layers"]);
  CHECK(cli("analyze " + dir + " --quiet --probe-train 23").code == 2);  // fewer than 2 test prompts
  CHECK(cli("analyze " + dir + " --quiet --histograms 5").code == 2);
}
