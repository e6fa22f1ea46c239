// A training run (core/train/train_run.hpp): stopped at a step boundary and resumed, it writes the bytes of a run
// never stopped; its log has a line per evaluation with the per-layer readings on the evaluation prompts.
#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/model/checkpoint_config.hpp"
#include "core/train/train_run.hpp"

using namespace maskscope;
namespace fs = std::filesystem;

namespace {

std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

train::TrainRunConfig small_run(const std::string& out, int threads) {
  train::TrainRunConfig c;
  c.model.model = Model::random_weights;
  c.model.weights = WeightsMode::fixed;
  c.model.d = 16;
  c.model.heads = 2;
  c.model.layers = 2;
  c.model.gamma = 1.0;
  c.model.vocab = 0;
  c.model.first_token = FirstToken::fixed;
  c.task = "addition";
  c.steps = 12;
  c.batch = 8;
  c.eval_every = 6;
  c.checkpoint_every = 12;
  c.eval_sequences = 16;
  c.opt.lr = 0.01;
  c.opt.warmup = 3;
  c.threads = threads;
  c.out = out;
  return c;
}

fs::path fresh(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("maskscope_train_run_" + name);
  fs::remove_all(p);
  return p;
}

}  // namespace

TEST_CASE("a training run stopped at step 7 and resumed writes the bytes of one never stopped") {
  const fs::path whole = fresh("whole"), parts = fresh("parts");
  REQUIRE(train::run_training(small_run(whole.string(), 2), false, nullptr, nullptr) == 12);
  std::atomic<bool> stop{false};
  const std::int64_t reached =
      train::run_training(small_run(parts.string(), 1), false, &stop, [&](const train::TrainProgress& p) {
        if (p.step == 7) stop = true;
      });
  CHECK(reached == 7);
  CHECK(fs::exists(parts / checkpoint_file_name(7)));
  CHECK(train::run_training(small_run(parts.string(), 2), true, nullptr, nullptr) == 12);
  for (const std::string& name : {checkpoint_file_name(12), train::state_file_name(12), std::string("config.json")})
    CHECK_MESSAGE(bytes_of(whole / name) == bytes_of(parts / name), name);
  CHECK(bytes_of(whole / checkpoint_file_name(12)) != bytes_of(whole / checkpoint_file_name(0)));
  // The log: steps 0, 6, 12, the same numbers apart from tokens/s.
  auto lines = [](const fs::path& p) {
    std::vector<nlohmann::json> out;
    std::ifstream in(p / "log.jsonl");
    for (std::string line; std::getline(in, line);) {
      auto j = nlohmann::json::parse(line);
      j.erase("tokens_per_s");
      out.push_back(j);
    }
    return out;
  };
  const auto a = lines(whole), b = lines(parts);
  REQUIRE(a.size() == 3);
  CHECK(a == b);
  CHECK(a[0]["step"] == 0);
  CHECK(a[2]["step"] == 12);
  CHECK(a[2]["layers"].size() == 2);
  const double adjacency = a[2]["layers"][0]["adjacency"].get<double>();
  CHECK(adjacency > 0.0);
  CHECK(adjacency < 1.0);
  CHECK(a[2]["train_loss"].get<double>() < a[1]["train_loss"].get<double>() + 1.0);
  fs::remove_all(whole);
  fs::remove_all(parts);
}
