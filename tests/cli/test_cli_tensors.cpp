// Real-model tensors through maskscope-cli: run --save-tensors then analyze repeats the run bit for bit;
// analyze refuses bad folders and layer lists (docs/tensors.md).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "cli_test_helpers.hpp"

using namespace cli_test;

TEST_CASE("round trip: run --save-tensors, then analyze, gives the run's metrics bit for bit") {
  for (const std::string& model : {std::string("--n 10 --d 64 --layers 3 --alpha 0.5"),
                                   std::string("--model random_weights --n 9 --d 32 --heads 4 --layers 2")}) {
    const std::string dir = work("tensors");
    fs::remove_all(dir);
    const Result r =
        cli("run " + model + " --samples 60 --seed 7 --quiet --save-tensors " + dir + " --out " + work("rt_run.json"));
    INFO(model << ": " << r.err);
    REQUIRE(r.code == 0);
    CHECK(fs::exists(dir + "/manifest.json"));
    CHECK(fs::exists(dir + "/logits.npy"));
    CHECK(fs::exists(dir + "/hidden.npy"));
    const Result a = cli("analyze " + dir + " --quiet --out " + work("rt_analyze.json"));
    INFO(a.err);
    REQUIRE(a.code == 0);
    const nlohmann::json run = read_json(work("rt_run.json")), an = read_json(work("rt_analyze.json"));
    CHECK(an["samples"] == 60);
    CHECK(an["config"]["source"] == "tensors");
    REQUIRE(an["layers"].size() == run["layers"].size());
    int compared = 0;
    for (std::size_t l = 0; l < run["layers"].size(); ++l)
      for (auto it = run["layers"][l].begin(); it != run["layers"][l].end(); ++it) {
        if (!an["layers"][l].contains(it.key())) continue;
        INFO("layer " << l + 1 << " " << it.key());
        CHECK(an["layers"][l][it.key()] == it.value());
        ++compared;
      }
    CHECK(compared >= 20);
    CHECK(an["layers"][0].contains("heads"));  // the shape of a random-weight run: layers with heads
  }
}

TEST_CASE("analyze refuses a bad folder with exit 2 naming the file; --save-tensors caps the samples") {
  fs::create_directories(work("empty_tensors"));
  const Result r = cli("analyze " + work("empty_tensors") + " --out " + work("never.json"));
  CHECK(r.code == 2);
  CHECK(r.err.find("manifest.json") != std::string::npos);
  CHECK_FALSE(fs::exists(work("never.json")));
  const Result big = cli("run --n 4 --d 8 --samples 20000 --save-tensors " + work("big_tensors") + " --quiet");
  CHECK(big.code == 2);
  CHECK(big.err.find("--save-tensors") != std::string::npos);
  CHECK(big.err.find("10000") != std::string::npos);
}

TEST_CASE(
    "analyze --layers: the chosen layers' numbers equal the full analysis's, under their own numbers; bad lists exit "
    "2") {
  const std::string dir = work("tensors_layers");
  fs::remove_all(dir);
  REQUIRE(
      cli("run --model random_weights --n 8 --d 16 --heads 2 --layers 3 --samples 30 --seed 2 --quiet --save-tensors " +
          dir + " --out " + work("layers_run.json"))
          .code == 0);
  REQUIRE(cli("analyze " + dir + " --quiet --out " + work("layers_all.json")).code == 0);
  const Result r = cli("analyze " + dir + " --quiet --layers 3,1 --out " + work("layers_some.json"));
  INFO(r.err);
  REQUIRE(r.code == 0);
  const nlohmann::json all = read_json(work("layers_all.json")), some = read_json(work("layers_some.json"));
  REQUIRE(some["layers"].size() == 2);
  CHECK(some["config"]["analysed_layers"] == 2);
  CHECK(some["layers"][0]["layer"] == 1);
  CHECK(some["layers"][1]["layer"] == 3);
  CHECK(some["layers"][0] == all["layers"][0]);
  CHECK(some["layers"][1] == all["layers"][2]);
  CHECK(some["embeddings"] == all["embeddings"]);
  for (const std::string bad : {"0", "4", "2-1", "1,1", "x", "1,"}) {
    const Result b = cli("analyze " + dir + " --quiet --layers " + bad);
    INFO(bad << ": " << b.err);
    CHECK(b.code == 2);
    CHECK(b.err.find("--layers") != std::string::npos);
    CHECK(b.err.find("[1, 3]") != std::string::npos);
  }
}

TEST_CASE("analyze refuses a FIFO as manifest.json or as an array at once (it never waits for a writer)") {
  const std::string dir = work("tensors_fifo");
  fs::remove_all(dir);
  REQUIRE(cli("run --n 5 --d 8 --samples 4 --quiet --save-tensors " + dir + " --out " + work("fifo_run.json")).code ==
          0);
  for (const std::string file : {"logits.npy", "manifest.json"}) {
    const std::string path = dir + "/" + file, kept = path + ".kept";
    fs::rename(path, kept);
    REQUIRE(std::system(("mkfifo '" + path + "'").c_str()) == 0);
    // Under `timeout`: before the fix analyze blocked in open() for ever (exit 124 here).
    const Result r = cli_env("timeout 20", "analyze " + dir + " --quiet --out " + work("fifo_analyze.json"));
    INFO(file << ": " << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(file) != std::string::npos);
    CHECK(r.err.find("not a regular file") != std::string::npos);
    fs::remove(path);
    fs::rename(kept, path);
  }
  CHECK(cli("analyze " + dir + " --quiet --out " + work("fifo_analyze.json")).code == 0);
}
