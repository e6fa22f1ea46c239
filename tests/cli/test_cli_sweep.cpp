// maskscope-cli sweep: every point's layers are what `run` writes for its settings and samples (bit for bit),
// the CSV table, early stopping, and the refusals (exit 2, the flag and its range named, nothing written).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "cli_test_helpers.hpp"
#include "core/model/settings.hpp"

using namespace cli_test;

namespace {

// `run` with the point's settings as flags; its JSON.
nlohmann::json run_of(const nlohmann::json& settings, const std::string& name) {
  std::string flags;
  for (const auto& [key, value] : settings.items()) {
    if (value.is_null() || key == "threads") continue;
    std::string flag = key;
    for (char& c : flag)
      if (c == '_') c = '-';
    if (flag == "rope-scramble" && value == 0) continue;
    // A setting of the other family is refused by `run`; the core's one table says which is whose.
    const maskscope::Model model =
        settings["model"] == "random_weights" ? maskscope::Model::random_weights : maskscope::Model::parameter_free;
    if (const auto family = maskscope::setting_family(key); family && *family != model) continue;
    flags += " --" + flag + " " + (value.is_string() ? value.get<std::string>() : value.dump());
  }
  const std::string out = work(name);
  const Result r = cli("run --quiet" + flags + " --out " + out);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  return read_json(out);
}

}  // namespace

TEST_CASE("sweep: each point's layers equal `run` with its settings and samples, bit for bit") {
  const std::string out = work("sweep_alpha.json");
  Result r = cli("sweep --quiet --vary alpha=0.2,0.5,0.8 --n 6 --d 16 --layers 2 --samples 700 --seed 4 --out " + out);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  nlohmann::json j = read_json(out);
  CHECK(j["vary"][0]["name"] == "alpha");
  CHECK(j["vary"][0]["values"] == nlohmann::json::array({0.2, 0.5, 0.8}));
  CHECK(j["metric"] == "rp");
  REQUIRE(j["points"].size() == 3);
  for (const auto& p : j["points"]) {
    CHECK(p["samples"] == 700);
    CHECK(p["stopped_early"] == false);
    CHECK(p["layers"] == run_of(p["settings"], "sweep_point.json")["layers"]);
  }
  // The random-weight family, swept over init-std (flag name) with early stopping on adjacency.
  r =
      cli("sweep --quiet --model random_weights --vary init-std=0.02,1 --n 5 --d 8 --heads 2 --layers 2 "
          "--samples 20000 --metric adjacency --se 0.02 --out " +
          out);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  j = read_json(out);
  REQUIRE(j["points"].size() == 2);
  for (const auto& p : j["points"]) {
    CHECK(p["stopped_early"] == true);
    CHECK(p["samples"] < 20000);
    CHECK(p["samples"] == p["settings"]["samples"]);
    for (const auto& l : p["layers"]) CHECK(l["adjacency_se"].get<double>() <= 0.02);
    const nlohmann::json run = run_of(p["settings"], "sweep_point.json");
    CHECK(p["layers"] == run["layers"]);
    CHECK(p["embeddings"] == run["embeddings"]);
  }
}

TEST_CASE("sweep --out FILE.csv: one row per point and layer with every swept value") {
  const std::string out = work("sweep.csv");
  const Result r = cli(
      "sweep --quiet --vary alpha=0.1,0.9 --vary norm=none,layernorm --n 5 --d 8 --layers 3 --samples 50 --out " + out);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  std::istringstream is(slurp(out));
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(is, line)) lines.push_back(line);
  REQUIRE(lines.size() == 1 + 2 * 2 * 3);
  CHECK(lines[0] == "alpha,norm,layer,metric,value,se,samples,ties");
  CHECK(lines[1].rfind("0.1,none,1,rp,", 0) == 0);
  CHECK(lines[12].rfind("0.9,layernorm,3,rp,", 0) == 0);
  CHECK(lines[12].find(",50,") != std::string::npos);
}

TEST_CASE("sweep --metric sink_weight: run's sink_weight, the mean of its weights on key 0 over queries i >= 1") {
  const std::string json = work("sink_weight.json"), csv = work("sink_weight.csv");
  const std::string args = "sweep --quiet --vary mask=causal,window:3 --n 6 --d 16 --layers 2 --samples 500 --seed 2";
  REQUIRE(cli(args + " --metric sink_weight --out " + json).code == 0);
  REQUIRE(cli(args + " --metric sink_weight --out " + csv).code == 0);
  const nlohmann::json j = read_json(json);
  std::istringstream is(slurp(csv));
  std::string line;
  std::getline(is, line);
  CHECK(line == "mask,layer,metric,value,se,samples,ties");
  for (const auto& p : j["points"]) {
    const nlohmann::json run = run_of(p["settings"], "sink_weight_run.json");
    const int last = p["settings"]["mask"] == "causal" ? 5 : 2;  // the last query that sees key 0
    for (const auto& l : run["layers"]) {
      double value = 0, se = 0;
      for (int i = 1; i <= last; ++i) {
        value += l["weight_mean"][i][0].get<double>();
        se += l["weight_se"][i][0].get<double>();
      }
      REQUIRE(std::getline(is, line));
      std::istringstream row(line);
      std::vector<std::string> cells;
      for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
      REQUIRE(cells.size() == 6);  // the empty ties at the end is no cell
      CHECK(cells[0] == p["settings"]["mask"].get<std::string>());
      CHECK(cells[2] == "sink_weight");
      CHECK(std::stod(cells[3]) == l["sink_weight"].get<double>());  // one estimate, one name: run's
      CHECK(std::stod(cells[4]) == l["sink_weight_se"].get<double>());
      CHECK(std::stod(cells[3]) == doctest::Approx(value / last).epsilon(1e-12));
      CHECK(std::stod(cells[4]) <= se / last * (1 + 1e-12));  // SE of a mean of cells <= their mean SE
    }
  }
}

TEST_CASE("sweep seeds: a range of whole numbers is exact, to 2^64 - 1 (no trip through a double)") {
  const std::string out = work("seeds.json");
  Result r = cli("sweep --quiet --vary seed=0:9007199254740993:2 --n 4 --d 4 --layers 1 --samples 20 --out " + out);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  // The JSON's integers, read as text: 9007199254740993 is no double.
  CHECK(slurp(out).find("\"seed\": 9007199254740993") != std::string::npos);
  CHECK(read_json(out)["points"][1]["settings"]["seed"].get<std::uint64_t>() == 9007199254740993ULL);
  r =
      cli("sweep --quiet --vary seed=18446744073709551613:18446744073709551615:3 --n 4 --d 4 --layers 1 "
          "--samples 20 --out " +
          out);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(read_json(out)["points"][2]["settings"]["seed"].get<std::uint64_t>() == 18446744073709551615ULL);
  r = cli("run --quiet --seed 18446744073709551615 --n 4 --d 4 --layers 1 --samples 20 --out " + out);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(read_json(out)["config"]["seed"].get<std::uint64_t>() == 18446744073709551615ULL);
}

TEST_CASE("sweep refuses bad input: exit 2, the flag and the valid range named, nothing written") {
  const std::string path = work("never_sweep.json");
  Result r0{};
  const char* cases[][3] = {
      {"--vary bogus=1,2", "--vary", "valid:"},
      {"--vary alpha=", "--vary", "empty"},
      {"--vary alpha=0.5,1.5", "--vary", "[0, 1]"},
      {"--vary d=0:64:3", "--vary", "[1, 65536]"},
      {"--vary alpha=0:1:5000", "--vary", "COUNT"},
      {"--vary alpha=0:1:1000 --vary d=1:1000:11", "--vary", "at most 10000"},
      {"--vary alpha=0:1", "--vary", "START:STOP:COUNT"},
      {"--vary alpha=0,1 --model random_weights", "--vary", "parameter_free only"},
      {"--vary alpha=1:2:x", "--vary", "START:STOP:COUNT"},
      {"--vary alpha=0:1:3log", "--vary", "> 0"},
      {"--vary alpha=0,1 --vary alpha=0.5", "--vary", "twice"},
      {"--vary alpha=0,1 --alpha 0.5", "--vary", "once"},
      {"--vary samples=1,2", "--vary", "cap"},
      {"--vary alpha=0,1 --metric bogus", "--metric", "valid: rp"},
      {"--vary alpha=0,1 --metric weight:3,7", "--metric", "masked"},
      {"--vary alpha=0,1 --se -1", "--se", "[0,"},
      {"--vary alpha=0,1 --n 0", "--n", "[1, 512]"},
      {"--vary alpha=0,1 --shard 1/2", "--shard", "--out FILE.msweep"},
      {"--vary alpha=0,1 --mask window:1 --metric sink_weight", "--metric", "W >= 2"},
      {"--vary alpha=0,1 --metric first_key", "--metric", "now called 'sink_weight'"},
      {"--vary alpha=0.5,0.50", "--vary", "alpha: the values '0.5' and '0.50' are the same alpha"},
  };
  for (const auto& c : cases) {
    fs::remove(path);
    INFO(std::string(c[0]));
    const Result r = cli(std::string("sweep --quiet --samples 10 ") + c[0] + " --out " + path);
    CHECK(r.code == 2);
    INFO(r.err);
    CHECK(r.err.find(c[1]) != std::string::npos);
    CHECK(r.err.find(c[2]) != std::string::npos);
    CHECK_FALSE(fs::exists(path));
  }
  // A control character in a value (it would reach the CSV and the terminal) is refused, escaped.
  r0 = cli(std::string("sweep --quiet --samples 10 --model random_weights --vary 'tokens=a\x1b[2J.txt' --out ") + path);
  CHECK(r0.code == 2);
  CHECK(r0.err.find("tokens: 'a\\x1b[2J.txt' holds a control character") != std::string::npos);
  CHECK(r0.err.find('\x1b') == std::string::npos);
  // The valid names of an unknown setting are the settings a sweep can vary: not samples or threads.
  Result r = cli("sweep --quiet --vary bogus=1,2 --samples 10 --out " + path);
  CHECK(r.err.find("valid: alpha, checkpoint, d,") != std::string::npos);
  CHECK(r.err.find("samples") == std::string::npos);
  CHECK(r.err.find("threads") == std::string::npos);
  r = cli("sweep --quiet --vary alpha=0,1 --samples 10 --out " + work("sweep.txt"));
  CHECK(r.code == 2);
  CHECK(r.err.find("FILE.csv") != std::string::npos);
  // More memory than the machine has (as MASKSCOPE_MEMORY_LIMIT says): refused before anything runs.
  fs::remove(path);
  r = cli_env("MASKSCOPE_MEMORY_LIMIT=50000000",
              "sweep --quiet --vary alpha=0:1:100 --n 200 --samples 10 --out " + path);
  CHECK(r.code == 2);
  CHECK(r.err.find("--vary: 100 points need about") != std::string::npos);
  CHECK_FALSE(fs::exists(path));
}
