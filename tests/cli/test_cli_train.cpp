// maskscope-cli train: the same bytes for any thread count, and bad input refused with exit 2 naming the flag,
// before anything is written into the folder.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_helpers.hpp"

using namespace cli_test;

namespace {
const std::string kTrain =
    "train --task addition --d 16 --heads 2 --layers 2 --steps 6 --batch 8 --eval-every 3 "
    "--eval-sequences 16 --quiet";
}

TEST_CASE("train: 1 and 2 threads write the same checkpoint and state bytes") {
  fs::remove_all(work("train1"));
  fs::remove_all(work("train2"));
  REQUIRE(cli(kTrain + " --threads 1 --out " + work("train1")).code == 0);
  REQUIRE(cli(kTrain + " --threads 2 --out " + work("train2")).code == 0);
  for (const char* name : {"step-000006.safetensors", "state-000006.safetensors", "config.json"}) {
    INFO(name);
    const std::string a = slurp(work("train1") + "/" + name);
    CHECK(!a.empty());
    CHECK(a == slurp(work("train2") + "/" + name));
  }
}

TEST_CASE("run --checkpoint on a task's run folder reads the task's evaluation prompts unless tokens or n are given") {
  fs::remove_all(work("train_inputs"));
  REQUIRE(cli(kTrain + " --threads 1 --out " + work("train_inputs")).code == 0);
  Result r = cli("run --checkpoint " + work("train_inputs") + " --samples 16 --threads 1 --quiet --out " +
                 work("train_inputs.json"));
  REQUIRE_MESSAGE(r.code == 0, r.err);
  nlohmann::json c = read_json(work("train_inputs.json"))["config"];
  CHECK(c["tokens"] == "builtin:zuo-addition");
  CHECK(c["tokens_format"] == "chars");
  CHECK(c["n"] == 8);  // "123+456=" (assets/tokens/zuo-addition.txt)
  // Given inputs win: uniform ids at the n asked for.
  r = cli("run --checkpoint " + work("train_inputs") + " --n 5 --samples 16 --threads 1 --quiet --out " +
          work("train_inputs.json"));
  REQUIRE_MESSAGE(r.code == 0, r.err);
  c = read_json(work("train_inputs.json"))["config"];
  CHECK(c["n"] == 5);
  CHECK(c["tokens"].is_null());
}

TEST_CASE("train: bad flags exit 2 naming the flag and its range, and leave the folder alone") {
  fs::remove_all(work("train_bad"));
  struct Case {
    std::string args, flag;
  };
  for (const Case& c : {Case{"--task multiplication", "--task"}, Case{"--task addition --steps 0", "--steps"},
                        Case{"--task addition --batch 0", "--batch"}, Case{"--task addition --batch 70000", "--batch"},
                        Case{"--task addition --lr 0", "--lr"}, Case{"--task addition --mask bidirectional", "--mask"},
                        Case{"--task addition --n 5", "--n"}, Case{"", "--task"},
                        Case{"--task addition --warmup 100 --steps 10", "--warmup"}}) {
    INFO(c.args);
    const Result r = cli("train " + c.args + " --d 16 --heads 2 --layers 1 --quiet --out " + work("train_bad"));
    CHECK(r.code == 2);
    CHECK(r.err.find(c.flag) != std::string::npos);
    CHECK(!fs::exists(work("train_bad")));
  }
  // A folder holding another run is refused; its files stay as they were.
  fs::remove_all(work("train_other"));
  REQUIRE(cli(kTrain + " --out " + work("train_other")).code == 0);
  const std::string before = slurp(work("train_other") + "/config.json");
  const Result again = cli(kTrain + " --lr 0.01 --out " + work("train_other"));
  CHECK(again.code == 2);
  CHECK(again.err.find("--out") != std::string::npos);
  CHECK(slurp(work("train_other") + "/config.json") == before);
  // --resume with a model flag is refused; --resume of a finished run has nothing to do.
  CHECK(cli("train --resume " + work("train_other") + " --d 32 --quiet").code == 2);
  CHECK(cli("train --resume " + work("train_other") + " --quiet").code == 0);
}

TEST_CASE("train: a run that would not fit in memory is refused before the folder is made, naming --batch") {
  fs::remove_all(work("train_memory"));
  const Result r = cli_env("MASKSCOPE_MEMORY_LIMIT=20000000",
                           "train --task addition --d 256 --heads 2 --layers 2 "
                           "--steps 6 --batch 8 --quiet --out " +
                               work("train_memory"));
  CHECK(r.code == 2);
  CHECK(r.err.find("--batch") != std::string::npos);
  CHECK(!fs::exists(work("train_memory")));
}

#if MASKSCOPE_TEST_MPI
TEST_CASE("mpirun -np 2 train: the chunks split over two ranks give the one-process bytes") {
  fs::remove_all(work("train_single"));
  fs::remove_all(work("train_mpi"));
  REQUIRE(cli(kTrain + " --threads 1 --out " + work("train_single")).code == 0);
  const Result r = mpirun(2, kTrain + " --threads 1 --out " + work("train_mpi"));
  INFO(r.err);
  REQUIRE(r.code == 0);
  for (const char* name : {"step-000006.safetensors", "state-000006.safetensors", "config.json"}) {
    INFO(name);
    const std::string a = slurp(work("train_single") + "/" + name);
    CHECK(!a.empty());
    CHECK(a == slurp(work("train_mpi") + "/" + name));
  }
}
#endif

namespace {
std::vector<nlohmann::json> log_lines(const std::string& folder) {
  std::vector<nlohmann::json> out;
  std::istringstream in(slurp(folder + "/log.jsonl"));
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}
}  // namespace

TEST_CASE(
    "with a fixed first token each evaluation logs r_l per layer, the number leakage --checkpoint DIR@STEP gives") {
  const std::string dir = work("train_r_l");
  fs::remove_all(dir);
  REQUIRE(cli(kTrain + " --first-token fixed --checkpoint-every 3 --threads 1 --out " + dir).code == 0);
  const auto lines = log_lines(dir);
  REQUIRE(lines.size() == 3);  // steps 0, 3, 6
  int significant = 0;
  for (const nlohmann::json& line : lines) {
    const std::int64_t step = line.at("step").get<std::int64_t>();
    INFO("step " << step);
    // The evaluation prompts: the task's 256 shipped prompts with BOS (run --checkpoint reads them), seed 1.
    const Result r = cli("leakage --checkpoint " + dir + "@" + std::to_string(step) +
                         " --samples 256 --seed 1 --threads 1 --quiet --out " + work("train_r_l.json"));
    REQUIRE_MESSAGE(r.code == 0, r.err);
    const nlohmann::json leakage = read_json(work("train_r_l.json"));
    CHECK(leakage.at("config").at("tokens") == "builtin:zuo-addition");
    REQUIRE(line.at("layers").size() == leakage.at("layers").size());
    for (std::size_t l = 0; l < line.at("layers").size(); ++l) {
      const nlohmann::json& logged = line.at("layers")[l].at("residual_stream_share");
      const nlohmann::json& cli_share = leakage.at("layers")[l].at("residual_stream_share");
      // The same core function on the same prompts and network: the same null and note where the causal dR^2 is
      // not significant, else the same value and SE to float rounding (the log sums the 256 prompts in one block, a
      // Run in its blocks and segments: about 1e-15 relative apart).
      CHECK(logged.contains("note") == cli_share.contains("note"));
      CHECK(logged.value("note", "") == cli_share.value("note", ""));
      CHECK(logged.at("value").is_null() == cli_share.at("value").is_null());
      if (logged.at("value").is_number() && cli_share.at("value").is_number()) {
        ++significant;
        for (const char* key : {"value", "se"}) {
          const double a = logged.at(key).get<double>(), b = cli_share.at(key).get<double>();
          CHECK_MESSAGE(std::abs(a - b) <= 1e-12 * std::abs(b), key << ": " << a << " against " << b);
        }
      }
    }
  }
  CHECK(significant > 0);  // some r_l is a number, not only null
}

TEST_CASE("without a fixed first token the log has no r_l") {
  const std::string dir = work("train_no_r_l");
  fs::remove_all(dir);
  REQUIRE(cli(kTrain + " --threads 1 --out " + dir).code == 0);
  for (const nlohmann::json& line : log_lines(dir))
    for (const nlohmann::json& layer : line.at("layers")) CHECK_FALSE(layer.contains("residual_stream_share"));
}
