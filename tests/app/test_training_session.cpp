// The Training tab's model (issue 50): a run paused at a step boundary and resumed writes the same checkpoint bytes
// as a run never stopped; log.jsonl's evaluations read back; a preset's rows bound to a run folder's step 0 and last
// step; a missing folder refused with how long training it would take.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "common/train/run_preset.hpp"
#include "common/train/training_session.hpp"
#include "core/formats/atomic_file.hpp"
#include "core/model/checkpoint_config.hpp"

using namespace maskscope;
using namespace maskscope::gui;
namespace fs = std::filesystem;

namespace {

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A run of seconds: d 16, 2 layers, 2 heads on reversal, 40 steps of batch 8, a checkpoint every 10.
train::TrainRunConfig tiny_run(const std::string& folder) {
  PresetRun run;
  run.train = {{"model", {{"d", 16}}},   {"steps", 40},          {"batch", 8}, {"eval_every", 10},
               {"checkpoint_every", 10}, {"eval_sequences", 16}, {"warmup", 5}};
  return preset_training(run, folder);
}

}  // namespace

TEST_CASE("log.jsonl lines parse into evaluations; a torn last line is skipped") {
  const auto ev = parse_train_log(
      "{\"step\":0,\"train_loss\":null,\"test_loss\":2.5,\"test_accuracy\":0,\"tokens_per_s\":0,\"layers\":[{"
      "\"adjacency\":0.7,\"adjacency_se\":0.01,\"sink_weight\":0.2}]}\n"
      "{\"step\":10,\"train_loss\":2.0,\"test_loss\":1.5,\"test_accuracy\":0.25,\"tokens_per_s\":1000,\"layers\":[]}\n"
      "{\"step\":20,\"train_lo");
  REQUIRE(ev.size() == 2);
  CHECK(ev[0].train_loss == -1);
  CHECK(ev[0].layers.at(0).adjacency == 0.7);
  CHECK(ev[0].layers.at(0).sink_weight == 0.2);
  CHECK(ev[1].step == 10);
  CHECK(ev[1].test_accuracy == 0.25);
}

TEST_CASE("the training estimate: tokens over the rate, with the evaluations") {
  train::TrainRunConfig c;
  c.steps = 100;
  c.batch = 10;
  c.eval_every = 50;
  c.eval_sequences = 30;
  // 100 * 10 * 20 training tokens, 3 evaluations of 30 sequences at a third of the cost: 20000 + 600.
  CHECK(estimated_training_seconds(c, 20, 1000) == doctest::Approx(20.6));
  CHECK(estimated_training_seconds(c, 20, 0) < 0);
}

TEST_CASE("a paused and resumed run writes the checkpoint bytes of a run never stopped") {
  const fs::path work = fs::path(MASKSCOPE_TEST_WORK) / "training_session";
  fs::remove_all(work);
  fs::create_directories(work);
  const std::string straight = (work / "straight").string(), paused = (work / "paused").string();
  {
    TrainingSession s;
    std::string error;
    REQUIRE_MESSAGE(s.start(tiny_run(straight), error), error);
    s.join();
    CHECK(s.state() == TrainingSession::State::finished);
  }
  TrainingSession s;
  std::string error;
  REQUIRE_MESSAGE(s.start(tiny_run(paused), error), error);
  // Pause once the run is past its first evaluation (any step boundary will do: the bytes must not depend on it).
  while (s.progress().step < 3 && s.state() == TrainingSession::State::running) std::this_thread::yield();
  s.pause();
  s.join();
  const std::int64_t stopped_at = s.progress().step;
  CHECK(s.state() == (stopped_at < 40 ? TrainingSession::State::paused : TrainingSession::State::finished));
  if (stopped_at < 40) {
    s.refresh();
    CHECK(s.resume(error));
    s.join();
  }
  CHECK(s.state() == TrainingSession::State::finished);
  const auto steps = checkpoint_steps(straight);
  REQUIRE(steps == std::vector<std::int64_t>{0, 10, 20, 30, 40});
  for (std::int64_t k : steps) {
    const std::string name = checkpoint_file_name(k);
    CHECK_MESSAGE(read_bytes(fs::path(straight) / name) == read_bytes(fs::path(paused) / name), name);
  }
  // The evaluations: one per 10 steps and step 0, with a loss that falls and per-layer readings.
  TrainingSession opened;
  REQUIRE(opened.open(straight, error));
  CHECK(opened.state() == TrainingSession::State::finished);
  const auto& ev = opened.evaluations();
  REQUIRE(ev.size() == 5);
  CHECK(ev.back().step == 40);
  CHECK(ev.back().test_loss < ev.front().test_loss);
  CHECK(ev.front().layers.size() == 2);
  // A folder that holds something is refused before anything is written.
  CHECK_FALSE(s.start(tiny_run(straight), error));
  CHECK(error.find("not empty") != std::string::npos);
}

TEST_CASE("a preset's init and trained rows read step 0 and the last step of its run folder") {
  const fs::path work = fs::path(MASKSCOPE_TEST_WORK) / "training_preset";
  fs::remove_all(work);
  fs::create_directories(work);
  const std::string folder = (work / "run").string();
  {
    TrainingSession s;
    std::string error;
    REQUIRE_MESSAGE(s.start(tiny_run(folder), error), error);
    s.join();
  }
  Preset p;
  p.name = "test";
  p.run = PresetRun{folder, {}};
  p.settings.model = Model::random_weights;
  FigureRow init, trained;
  init.state = "init";
  trained.state = "trained";
  p.figure.rows = {init, trained};
  std::string error;
  REQUIRE_MESSAGE(bind_preset_run(p, folder, error), error);
  CHECK(p.figure.rows[0].settings.checkpoint == folder);
  CHECK(p.figure.rows[0].settings.step == 0);
  CHECK(p.figure.rows[1].settings.step == -1);
  CHECK(p.figure.rows[1].settings.d == 16);
  CHECK(p.figure.rows[1].settings.weights == WeightsMode::fixed);
  CHECK(validate(p.figure.rows[1].settings).empty());
  // A missing folder: refused, and the message says how long training it would take here.
  Preset q = p;
  q.run->folder = (work / "missing").string();
  CHECK_FALSE(bind_preset_run(q, q.run->folder, error));
  CHECK(error.find("holds no training run") != std::string::npos);
  const std::string m = missing_run_message(q, q.run->folder);
  CHECK(m.find("tokens/s measured") != std::string::npos);
  CHECK(m.find("--train-missing") != std::string::npos);
  CHECK_FALSE(fs::exists(q.run->folder));  // never trained silently
}

TEST_CASE("a checkpoint made the live model reads its run's own inputs: a task's prompts, a corpus run's file") {
  const fs::path work = fs::path(MASKSCOPE_TEST_WORK) / "training_inputs";
  fs::remove_all(work);
  fs::create_directories(work);
  const std::string task_run = (work / "task").string(), corpus_run = (work / "corpus").string();
  train::run_training(tiny_run(task_run), false, nullptr, nullptr);
  const std::string corpus = (work / "corpus.txt").string();
  std::string lines, error;
  for (int line = 0; line < 64; ++line) lines += std::string{"abcdefgh"[line % 8], "0123456"[line % 7]} + "xyzw\n";
  REQUIRE_MESSAGE(write_file_atomic(corpus, lines, error), error);
  PresetRun run;
  run.train = {{"task", ""},  {"tokens", corpus},   {"tokens_format", "chars"}, {"model", {{"d", 16}}},
               {"steps", 2},  {"batch", 4},         {"eval_every", 1},          {"checkpoint_every", 1},
               {"warmup", 0}, {"eval_sequences", 4}};
  train::run_training(preset_training(run, corpus_run), false, nullptr, nullptr);

  Settings live;  // the live model reads another token file and many samples
  live.model = Model::random_weights;
  live.tokens = "builtin:zuo-addition";
  live.tokens_format = TokensFormat::chars;
  live.n = 8;
  live.samples = 5000;
  Settings s = live;
  REQUIRE(as_checkpoint(s, task_run, 0).empty());
  CHECK(s.tokens == "builtin:zuo-reversal");
  CHECK(s.tokens_format == TokensFormat::chars);
  CHECK(s.n == 22);  // Reversal's prompt, no BOS
  CHECK(s.samples == 256);
  s = live;
  REQUIRE(as_checkpoint(s, corpus_run, -1).empty());
  CHECK(s.tokens == corpus);
  CHECK(s.tokens_format == TokensFormat::chars);
  CHECK(s.n == load_checkpoint_config(locate_checkpoint(corpus_run, -1).config)->n_positions);
  CHECK(s.samples == 256);
}
