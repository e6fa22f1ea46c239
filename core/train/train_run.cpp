// A training run (train_run.hpp): batches, steps, evaluations, checkpoints and the resumable state.
#include "core/train/train_run.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "core/formats/atomic_file.hpp"
#include "core/formats/result_json.hpp"
#include "core/formats/safetensors.hpp"
#include "core/kernel/simulator.hpp"
#include "core/model/checkpoint_config.hpp"
#include "core/model/input_file.hpp"
#include "core/model/key_ranges.hpp"
#include "core/stats/metric_table.hpp"
#include "core/stats/snapshot.hpp"
#include "core/train/checkpoint.hpp"
#include "core/train/parameters.hpp"

namespace maskscope::train {

namespace fs = std::filesystem;

std::string state_file_name(std::int64_t step) {
  char name[64];
  std::snprintf(name, sizeof name, "state-%06lld.safetensors", static_cast<long long>(step));
  return name;
}

namespace {

// The evaluation prompts' settings: a task's 256 shipped prompts, or a corpus' own lines, as Settings::tokens.
Settings evaluation_settings(const TrainRunConfig& c, const Settings& model, const TrainingData& data) {
  Settings e = model;
  e.samples = 256;
  e.seed = 1;
  if (!c.task.empty()) {
    e.n = data.prompt_length;
    e.tokens = task_evaluation_tokens(task_from_name(c.task));
    e.tokens_format = TokensFormat::chars;
  } else {
    e.tokens = c.tokens;
    e.tokens_format = c.tokens_format;
  }
  if (const auto errors = validate(e); !errors.empty())
    throw std::runtime_error("the evaluation prompts: " + errors.front().setting + ": " + errors.front().message);
  return e;
}

// The snapshot of `net` on the evaluation prompts `e`: every sample in one block, through the Simulator. The numbers
// are `run --checkpoint`'s to float rounding (a Run cuts the samples into blocks whose sums it adds in another
// grouping: the last bits differ, about 1e-15 relative in the means).
Snapshot evaluation_snapshot(const Settings& e, std::shared_ptr<const Network> net) {
  Simulator sim(e, false, Simulator::Kernel::automatic, std::move(net));
  BlockSums sums;
  sim.simulate_block(0, e.samples, sums);
  RunMoments m(sim.layout().total());
  m.merge(sums);
  return make_snapshot(e, std::move(m), key_ranges(e));
}

// Per layer 1..L: adjacency, norm adjacency, RP and the weight on key 0 with their SEs (docs/model.md sections 4,
// 7, 10) of `net` on the evaluation prompts, through the Simulator (`run --checkpoint`'s numbers). With
// a fixed first token also r_l, the residual-stream share of the leakage (section 10), from the bidirectional twin
// on the same prompts, as `leakage --checkpoint` writes it (residual_stream_share: value, se, note).
nlohmann::json layer_readings(const Settings& e, const std::shared_ptr<const Network>& net) {
  const Snapshot snap = evaluation_snapshot(e, net);
  std::optional<Snapshot> twin;
  if (e.fixed_first_token()) {
    Settings bidirectional = e;
    bidirectional.mask = MaskKind::bidirectional;
    twin = evaluation_snapshot(bidirectional, net);
  }
  nlohmann::json layers = nlohmann::json::array();
  // The readings by the metric table's rows, so that their keys are the run JSON's (core/stats/metric_table.hpp).
  static const MetricInfo* const kReadings[] = {find_metric("adjacency"), find_metric("norm_adjacency"),
                                                find_metric("rp"), find_metric("sink_weight")};
  for (std::size_t k = 0; k < snap.layers.size(); ++k) {
    const LayerStats& l = snap.layers[k];
    nlohmann::json one = {{"layer", l.layer}};
    for (const MetricInfo* row : kReadings) {
      const Estimate& est = row->of(l);
      one[std::string(row->key)] = est.mean;
      one[std::string(row->key) + "_se"] = est.se;
    }
    if (twin) one["residual_stream_share"] = ratio_json(residual_stream_share(twin->layers[k].leakage, l.leakage));
    layers.push_back(std::move(one));
  }
  return layers;
}

// Test loss and exact-match accuracy over the first `count` test sequences.
struct TestResult {
  double loss = 0, accuracy = 0;
};
TestResult test_evaluation(Trainer& trainer, const TrainingData& data, int count, int rows) {
  count = int(std::min<std::int64_t>(count, data.test_rows()));
  LossSum loss;
  std::int64_t right = 0;
  std::vector<std::int32_t> predicted;
  for (int first = 0; first < count; first += rows) {
    const TokenBatch b = test_batch(data, first, std::min(rows, count - first));
    predicted.assign(b.tokens.size(), 0);
    const LossSum l = trainer.evaluate(b, predicted.data());
    loss.sum += l.sum;
    loss.count += l.count;
    for (int r = 0; r < b.rows; ++r) right += exact_match(b, r, predicted) ? 1 : 0;
  }
  return {loss.count ? loss.sum / double(loss.count) : 0.0, count ? double(right) / count : 0.0};
}

std::string hex(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%a", v);
  return text;
}

struct RunningLoss {
  double sum = 0;
  std::int64_t count = 0;
};

void write_state(const std::string& folder, const Trainer& t, const RunningLoss& running) {
  SafeTensorsFile file;
  auto add = [&](const std::string& prefix, const Network& net) {
    for_each_tensor(net, [&](const std::string& name, const std::vector<float>& v, bool) {
      if (!v.empty()) file.tensors.push_back({prefix + name, {std::int64_t(v.size())}, v});
    });
  };
  add("param.", t.parameters());
  add("adam_m.", t.optimizer_state().m);
  add("adam_v.", t.optimizer_state().v);
  file.metadata = {{"format", "maskscope training state"},
                   {"step", std::to_string(t.step())},
                   {"loss_sum", hex(running.sum)},
                   {"loss_count", std::to_string(running.count)}};
  std::string error;
  if (!write_safetensors(folder + "/" + state_file_name(t.step()), file, error)) throw std::runtime_error(error);
}

// Loads the last state file of `folder` into t; returns the running loss.
RunningLoss read_state(const std::string& folder, Trainer& t) {
  std::int64_t last = -1;
  for (const auto& entry : fs::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    long long step = -1;
    if (std::sscanf(name.c_str(), "state-%lld.safetensors", &step) == 1 && name == state_file_name(step))
      last = std::max<std::int64_t>(last, step);
  }
  if (last < 0) throw std::runtime_error("--resume: " + folder + " holds no state-NNNNNN.safetensors to resume from");
  const std::string path = folder + "/" + state_file_name(last);
  const SafeTensorsFile file = read_safetensors(path);
  auto load = [&](const std::string& prefix, Network& net) {
    for_each_tensor(net, [&](const std::string& name, std::vector<float>& v, bool) {
      if (v.empty()) return;
      const SafeTensor* found = file.find(prefix + name);
      if (!found || found->data.size() != v.size())
        throw std::runtime_error(path + ": tensor " + prefix + name + " missing or of another size");
      v = found->data;
    });
  };
  load("param.", t.parameters());
  load("adam_m.", t.optimizer_state().m);
  load("adam_v.", t.optimizer_state().v);
  try {
    t.optimizer_state().step = std::stoll(file.metadata.at("step"));
    RunningLoss running;
    running.sum = std::strtod(file.metadata.at("loss_sum").c_str(), nullptr);
    running.count = std::stoll(file.metadata.at("loss_count"));
    if (t.optimizer_state().step != last) throw std::runtime_error("its step differs from its name");
    return running;
  } catch (const std::exception& e) { throw std::runtime_error(path + ": metadata: " + e.what()); }
}

}  // namespace

std::int64_t run_training(const TrainRunConfig& given, bool resume, const std::atomic<bool>* stop,
                          const std::function<void(const TrainProgress&)>& progress) {
  using clock = std::chrono::steady_clock;
  const TrainingData data = run_data(given);
  const Settings model = run_model(given, data);
  TrainRunConfig c = given;  // with the vocabulary and length the data fixed, as config.json records them
  c.model.vocab = model.vocab;
  c.model.n = model.n;
  const Settings eval = evaluation_settings(c, model, data);
  OptimizerSettings opt = c.opt;
  opt.decay_steps = c.steps;
  Trainer trainer(model, opt, c.batch, c.threads);
  if (c.last_chunk >= 0) trainer.set_chunk_range(c.first_chunk, c.last_chunk, c.exchange);
  const std::string folder = c.out;
  const std::string log_path = folder + "/log.jsonl";
  std::vector<std::string> log_lines;
  RunningLoss running;
  const nlohmann::json extra = {{"training", training_json(c)}};
  auto checkpoint = [&] {
    if (!c.writer) return;
    std::string error;
    const auto net = trainer.parameters();
    if (!save_checkpoint(folder + "/" + checkpoint_file_name(trainer.step()), net, model, error, extra))
      throw std::runtime_error(error);
    write_state(folder, trainer, running);
  };
  auto write_log = [&] {
    std::string text;
    for (const std::string& line : log_lines) text += line + "\n";
    std::string error;
    if (!write_file_atomic(log_path, text, error)) throw std::runtime_error(error);
  };
  double last_accuracy = -1;
  auto evaluate = [&](double tokens_per_s) {
    if (!c.writer) {
      running = {};
      return;
    }
    const TestResult test = test_evaluation(trainer, data, c.eval_sequences, c.batch);
    last_accuracy = test.accuracy;
    nlohmann::json line = {
        {"step", trainer.step()},
        {"train_loss", running.count ? nlohmann::json(running.sum / double(running.count)) : nlohmann::json(nullptr)},
        {"test_loss", test.loss},
        {"test_accuracy", test.accuracy},
        {"lr", learning_rate(opt, std::max<std::int64_t>(0, trainer.step() - 1))},
        {"tokens_per_s", tokens_per_s},
        {"layers", layer_readings(eval, std::make_shared<Network>(trainer.parameters()))}};
    log_lines.push_back(line.dump());
    running = {};
    write_log();
  };
  if (resume) {
    running = read_state(folder, trainer);
    std::string text, why;
    if (fs::exists(log_path)) {
      if (!read_input_file(log_path, 1ull << 30, "the log", text, why)) throw std::runtime_error(why);
      std::istringstream in(text);
      for (std::string line; std::getline(in, line);) {
        if (line.empty()) continue;
        const auto j = nlohmann::json::parse(line, nullptr, false);
        if (!j.is_discarded() && j.contains("step") && j["step"].get<std::int64_t>() <= trainer.step())
          log_lines.push_back(line);
      }
    }
  } else {
    if (c.writer) fs::create_directories(folder);
    checkpoint();
    evaluate(0.0);
  }
  auto since = clock::now();
  std::int64_t steps_since = 0;
  bool stopped = false;
  while (trainer.step() < c.steps) {
    const bool asked = stop && stop->load();
    if (c.agree_stop ? c.agree_stop(asked) : asked) {
      stopped = true;
      break;
    }
    const TokenBatch batch = train_batch(data, c.seed, std::uint64_t(trainer.step()), c.batch);
    const StepResult r = trainer.train_step(batch);
    running.sum += r.loss;
    ++running.count;
    ++steps_since;
    const double seconds = std::chrono::duration<double>(clock::now() - since).count();
    const double tokens_per_s = seconds > 0 ? double(steps_since) * c.batch * data.n / seconds : 0.0;
    const std::int64_t step = trainer.step();
    if (step % c.eval_every == 0 || step == c.steps) {
      evaluate(tokens_per_s);
      since = clock::now();
      steps_since = 0;
    }
    if (step % c.checkpoint_every == 0 || step == c.steps) checkpoint();
    if (progress) progress({step, c.steps, r.loss, last_accuracy, tokens_per_s});
  }
  if (stopped && trainer.step() % c.checkpoint_every != 0) checkpoint();
  return trainer.step();
}

}  // namespace maskscope::train
