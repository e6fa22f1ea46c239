// The maskscope-cli contract: JSON layout of `run`, closed forms from `theory`, and exit code 2
// with the flag named for every invalid input (and no output file written).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>

#include "core/theory.hpp"

namespace fs = std::filesystem;

namespace {

struct Result {
  int code;
  std::string out, err;
};

Result cli(const std::string& args) {
  fs::create_directories(MASKSCOPE_TEST_WORK);
  const std::string out = std::string(MASKSCOPE_TEST_WORK) + "/stdout.txt";
  const std::string err = std::string(MASKSCOPE_TEST_WORK) + "/stderr.txt";
  const std::string cmd = std::string("\"") + MASKSCOPE_CLI + "\" " + args + " >" + out + " 2>" + err;
  const int status = std::system(cmd.c_str());
  auto slurp = [](const std::string& p) {
    std::ifstream is(p);
    return std::string(std::istreambuf_iterator<char>(is), {});
  };
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

std::string work(const std::string& name) { return std::string(MASKSCOPE_TEST_WORK) + "/" + name; }

}  // namespace

TEST_CASE("run writes the documented JSON") {
  const std::string path = work("result.json");
  fs::remove(path);
  const Result r = cli("run --n 6 --d 32 --layers 3 --alpha 0.5 --norm layernorm --scale sqrt_d --gamma 0 --rope 0 "
                       "--mask causal --unit-input 0 --samples 3000 --seed 1 --threads 2 --quiet --out " + path);
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

TEST_CASE("theory prints the closed forms") {
  Result r = cli("theory --kind h_of_j --n 10 --d 64 --alpha 0.4 --gamma 1");
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["h"].size() == 10);
  CHECK(j["h"][4].get<double>() == doctest::Approx(maskscope::theory::ln_recency_h_of_j(5, 64, 0.4, 1.0)));
  r = cli("theory --kind behind_rope_layer2 --n 5 --alpha 0.2 --gamma 1");
  REQUIRE(r.code == 0);
  j = nlohmann::json::parse(r.out);
  CHECK(j["layer2_score"][4][1].get<double>() == doctest::Approx(maskscope::theory::behind_rope_layer2_score(5, 2, 0.2, 1.0)));
  CHECK(j["layer2_score"][1][4].is_null());
  r = cli("theory --kind ln_recency_s2 --n 4 --d 16");
  REQUIRE(r.code == 0);
  j = nlohmann::json::parse(r.out);
  CHECK(j["layer2_score"][3][3].get<double>() == doctest::Approx(4.0));
}

TEST_CASE("every invalid flag: exit code 2, the flag named, no output file") {
  const std::string path = work("never.json");
  const char* cases[][2] = {
      {"--n 0", "--n"},          {"--n 513", "--n"},           {"--n ten", "--n"},
      {"--d 0", "--d"},          {"--d 70000", "--d"},         {"--layers 0", "--layers"},
      {"--layers 17", "--layers"}, {"--alpha -0.1", "--alpha"}, {"--alpha 1.5", "--alpha"},
      {"--alpha nan", "--alpha"}, {"--norm batch", "--norm"},  {"--scale two", "--scale"},
      {"--gamma 2", "--gamma"},  {"--rope -1", "--rope"},      {"--rope 0.5", "--rope"},
      {"--d 15 --rope 10000", "--rope"}, {"--mask diagonal", "--mask"}, {"--mask window:0", "--mask"},
      {"--mask window:99", "--mask"}, {"--samples 0", "--samples"}, {"--threads -2", "--threads"},
      {"--unit-input 7", "--unit-input"}, {"--bogus 1", "--bogus"},
  };
  for (const auto& c : cases) {
    fs::remove(path);
    INFO(std::string(c[0]));
    const Result r = cli(std::string("run --quiet --samples 10 ") + c[0] + " --out " + path);
    CHECK(r.code == 2);
    CHECK(r.err.find(c[1]) != std::string::npos);
    CHECK_FALSE(fs::exists(path));
  }
  // Several bad flags are all reported at once.
  const Result r = cli("run --n 0 --alpha 3 --norm x --out " + path);
  CHECK(r.code == 2);
  for (const char* flag : {"--n", "--alpha", "--norm"}) CHECK(r.err.find(flag) != std::string::npos);
  CHECK(cli("theory --kind nope").code == 2);
  CHECK(cli("theory --kind h_of_j --alpha 2").code == 2);
  CHECK(cli("").code == 2);
}
