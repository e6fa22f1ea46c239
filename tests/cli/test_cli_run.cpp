// The maskscope-cli contract of `run` and `leakage`: the JSON layout of both model families (docs/cli.md),
// the progress line, and the leakage table.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_test_helpers.hpp"

using namespace cli_test;

TEST_CASE("run writes the documented JSON") {
  const std::string path = work("result.json");
  fs::remove(path);
  const Result r =
      cli("run --n 6 --d 32 --layers 3 --alpha 0.5 --norm layernorm --scale sqrt_d --gamma 0 --rope 0 "
          "--mask causal --unit-input 0 --samples 3000 --seed 1 --threads 2 --quiet --out " +
          path);
  REQUIRE(r.code == 0);
  std::ifstream is(path);
  const auto j = nlohmann::json::parse(is);
  CHECK(j["config"]["n"] == 6);
  CHECK(j["config"]["norm"] == "layernorm");
  CHECK(j["config"]["mask"] == "causal");
  CHECK(j["samples"] == 3000);
  CHECK(j["samples_per_s"].get<double>() > 0);
  REQUIRE(j["layers"].size() == 3);
  const auto& L = j["layers"][1];
  CHECK(L["layer"] == 2);
  for (const char* key : {"rp", "rp_se", "adjacency", "score_mean", "score_se", "weight_mean", "cosine_mean",
                          "score_diag_normalized", "norm_mean"})
    CHECK(L.contains(key));
  CHECK(L["score_mean"].size() == 6);
  CHECK(L["score_mean"][0][1].is_null());  // masked
  CHECK(L["score_diag_normalized"][2][3].is_null());
  CHECK(L["norm_mean"].size() == 6);
  double row = 0;
  for (const auto& v : L["weight_mean"][5]) row += v.is_null() ? 0.0 : v.get<double>();
  CHECK(row == doctest::Approx(1.0).epsilon(1e-6));
  CHECK(j["layers"][0]["score_mean"][3][3].get<double>() == doctest::Approx(std::sqrt(32.0)).epsilon(1e-5));
}

TEST_CASE("the progress line goes to stderr unless --quiet") {
  const Result r = cli("run --n 4 --d 8 --samples 2000 --out " + work("p.json"));
  CHECK(r.code == 0);
  CHECK(r.err.find("samples/s") != std::string::npos);
  const Result q = cli("run --n 4 --d 8 --samples 2000 --quiet --out " + work("p.json"));
  CHECK(q.err.empty());
}

TEST_CASE("random_weights: the JSON contract of docs/model.md section 7") {
  const std::string path = work("random_weights.json");
  fs::remove(path);
  const Result r =
      cli("run --model random_weights --n 8 --d 24 --layers 2 --heads 3 --vocab 16 --mlp 1 --init-mean 0 "
          "--init-std 0.02 --embed-std 0.05 --weights per_sample --weight-seed 1 --samples 400 --seed 3 "
          "--threads 2 --quiet --out " +
          path);
  REQUIRE(r.code == 0);
  std::ifstream is(path);
  const auto j = nlohmann::json::parse(is);
  CHECK(j["config"]["model"] == "random_weights");
  CHECK(j["config"]["gamma"] == 1.0);  // the family's default
  CHECK(j["config"]["embed_std"] == 0.05);
  REQUIRE(j["layers"].size() == 2);
  for (const auto& L : j["layers"]) {
    for (const char* key : {"adjacency", "adjacency_se", "norm_adjacency", "norm_adjacency_se", "rp", "rp_se"})
      CHECK(L[key].is_number());
    REQUIRE(L["heads"].size() == 3);
    double mean = 0;
    for (const auto& h : L["heads"]) mean += h["rp"].get<double>() / 3;
    CHECK(L["rp"].get<double>() == doctest::Approx(mean).epsilon(1e-12));
  }
  const auto& e = j["embeddings"];
  for (const char* key : {"adjacency", "adjacency_se", "norm_adjacency", "norm_adjacency_se"})
    CHECK(e[key].is_number());
  CHECK(e["cosine_mean"].size() == 8);
  CHECK(e["cosine_mean"][3][3] == 1.0);
  CHECK(e["norm_mean"].size() == 8);
  // The embeddings' norms: sigma sqrt(d) on average (0.05 * sqrt(24) = 0.245), within 5%.
  CHECK(e["norm_mean"][0].get<double>() == doctest::Approx(0.05 * std::sqrt(24.0)).epsilon(0.05));

  // parameter_free keeps its output: no heads, no embeddings.
  const Result p = cli("run --n 5 --d 8 --layers 1 --samples 10 --quiet --out " + path);
  REQUIRE(p.code == 0);
  std::ifstream ip(path);
  const auto jp = nlohmann::json::parse(ip);
  CHECK_FALSE(jp.contains("embeddings"));
  CHECK_FALSE(jp["layers"][0].contains("heads"));
  CHECK(jp["config"]["gamma"] == 0.0);
}

TEST_CASE("leakage: the run JSON's dR^2 keys, and the four-way table of maskscope-cli leakage") {
  const std::string path = work("leak_run.json");
  REQUIRE(cli("run --n 8 --d 32 --layers 2 --samples 2000 --quiet --out " + path).code == 0);
  std::ifstream is(path);
  const auto j = nlohmann::json::parse(is);
  for (const auto& L : j["layers"]) {
    for (const char* key : {"delta_r2", "delta_r2_se", "delta_r2_mean_map", "r2_base", "weight_delta_r2"})
      CHECK(L[key].is_number());
    REQUIRE(L["delta_r2_bins"].size() == 2);  // [0, 5) and [5, 8)
    CHECK(L["delta_r2_bins"][0]["from"] == 0);
    CHECK(L["delta_r2_bins"][1]["to"] == 8);
  }
  const std::string lpath = work("leak.json");
  fs::remove(lpath);
  const Result r =
      cli("leakage --n 10 --d 32 --layers 2 --norm l2 --scale one --gamma 1 --unit-input 1 --alpha 0.2 "
          "--rope 10000 --samples 3000 --quiet --out " +
          lpath);
  REQUIRE(r.code == 0);
  std::ifstream il(lpath);
  const auto k = nlohmann::json::parse(il);
  REQUIRE(k["ablations"].size() == 4);
  CHECK(k["ablations"][1]["config"]["rope"] == 0.0);         // identity RoPE
  CHECK(k["ablations"][2]["config"]["rope_scramble"] == 1);  // scrambled RoPE
  CHECK(k["ablations"][3]["config"]["mask"] == "bidirectional");
  CHECK(k["ablations"][3]["config"]["seed"] == k["config"]["seed"]);  // same random draws
  const auto& l2 = k["layers"][1];
  const double base = l2["baseline"]["delta_r2"], bi = l2["bidirectional"]["delta_r2"];
  CHECK(l2["causal_mask_share"].get<double>() == doctest::Approx(1 - bi / base));
  CHECK(l2["identity_rope_ratio"]["value"].get<double>() ==
        doctest::Approx(l2["identity_rope"]["delta_r2"].get<double>() / base));
  // One shape per estimate: the baseline's layers are `run`'s leakage keys with run's numbers (SEs included).
  const std::string same = work("leak_same_run.json");
  REQUIRE(cli("run --n 10 --d 32 --layers 2 --norm l2 --scale one --gamma 1 --unit-input 1 --alpha 0.2 --rope 10000 "
              "--samples 3000 --quiet --out " +
              same)
              .code == 0);
  const nlohmann::json run = read_json(same);
  for (std::size_t l = 0; l < 2; ++l) {
    const nlohmann::json& layer = k["ablations"][0]["layers"][l];
    CHECK(layer.contains("weight_delta_r2_se"));
    for (auto it = layer.begin(); it != layer.end(); ++it) {
      INFO(it.key());
      CHECK(run["layers"][l].at(it.key()) == it.value());
    }
  }
  CHECK(l2["sink_weight_se"].is_number());  // as run's sink_weight, sink_weight_se
  const Result t = cli("leakage --n 10 --d 32 --layers 2 --samples 500 --quiet --table");
  REQUIRE(t.code == 0);
  CHECK(t.out.find("bidirectional") != std::string::npos);
  CHECK(t.out.find("n/a") != std::string::npos);  // no RoPE in the baseline: its RoPE ablations do not apply
  // Refusals: exit 2 naming the flag.
  CHECK(cli("leakage --mask bidirectional --samples 10").code == 2);
  const Result bad = cli("run --rope-scramble 3 --samples 10 --out " + work("never.json"));
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--rope-scramble") != std::string::npos);
}

TEST_CASE("MASKSCOPE_GEMM: AVX2's products on request, named in the result; a level the processor lacks is named") {
  const std::string args =
      "run --model random_weights --weights fixed --n 8 --d 16 --heads 2 --layers 2 --samples 40 "
      "--seed 3 --quiet --out ";
  REQUIRE(cli(args + work("gemm_best.json")).code == 0);
  const std::string best = read_json(work("gemm_best.json")).at("kernel");
  if (best.find("batched") == std::string::npos) return;  // no AVX2: the per-sample kernel, no products to choose
  REQUIRE(cli(args + work("gemm_v3.json"), kAvx2Products).code == 0);
  const nlohmann::json v3 = read_json(work("gemm_v3.json"));
  CHECK(v3.at("kernel").get<std::string>().find("products") == std::string::npos);  // AVX2's: the name of old
  if (best == v3.at("kernel")) CHECK(read_json(work("gemm_best.json")).at("layers") == v3.at("layers"));
  const Result odd = cli(args + work("gemm_odd.json"), "MASKSCOPE_GEMM=x86-64-v9 ");
  CHECK(odd.code == 0);  // the best level runs, and says so
  CHECK(odd.err.find("MASKSCOPE_GEMM='x86-64-v9'") != std::string::npos);
  CHECK(read_json(work("gemm_odd.json")).at("kernel") == best);
}
