// A training run (docs/model.md, "Training"; `maskscope-cli train`): the engine (trainer.hpp) on a task's or a
// token file's batches (tasks.hpp), evaluations into log.jsonl (test loss, exact-match accuracy, and per layer the
// adjacency, norm adjacency, RP and weight on key 0 of the network on the evaluation prompts, through the
// Simulator), GPT-2-layout checkpoints (checkpoint.hpp) and a state file of its own (the optimizer's moments and
// the running loss), so that a stopped run resumes to the bytes of one never stopped.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "core/model/settings.hpp"
#include "core/train/optimizer.hpp"
#include "core/train/tasks.hpp"
#include "core/train/trainer.hpp"

namespace maskscope::train {

// What a run is: everything that decides its bytes (and the folder and threads, which do not).
struct TrainRunConfig {
  Settings model;      // random_weights, weights fixed: the network and its initialization (weight_seed)
  std::string task;    // a task's name, or empty with `tokens`
  std::string tokens;  // a token file as a corpus
  TokensFormat tokens_format = TokensFormat::ids;
  OptimizerSettings opt;  // decay_steps = steps
  std::int64_t steps = 1000;
  int batch = 64;
  std::int64_t eval_every = 100, checkpoint_every = 1000;
  int eval_sequences = 1000;  // test sequences per evaluation (the first ones of the test set)
  std::uint64_t seed = 1;     // the batches' order (train_batch)
  int threads = 1;
  std::string out;  // the run folder
  // Several processes (mpirun): this one computes chunks [first_chunk, last_chunk) of each batch (last_chunk -1:
  // all), `exchange` completes every chunk's gradient on every process (trainer.hpp), `agree_stop` makes the stop
  // request one answer for all (true if any asked), and only the `writer` evaluates and writes files.
  int first_chunk = 0, last_chunk = -1;
  ChunkExchange exchange;
  std::function<bool(bool)> agree_stop;
  bool writer = true;
};

// The keys of config.json's "training" object: the run's identity (a folder holding another is refused).
nlohmann::json training_json(const TrainRunConfig& c);
// The run config a folder's "training" object describes (for --resume). Throws std::runtime_error naming the key.
TrainRunConfig training_from_json(const nlohmann::json& j);

// The data of a run (a task's sequences with BOS when the model has one, or the corpus).
TrainingData run_data(const TrainRunConfig& c);
// The model settings of a run on `data`: n the data's sequence length, vocab the data's when it was not set higher.
Settings run_model(const TrainRunConfig& c, const TrainingData& data);

// One progress report (after every step).
struct TrainProgress {
  std::int64_t step = 0, steps = 0;
  double loss = 0;
  double accuracy = -1;  // the last evaluation's; -1 before any
  double tokens_per_s = 0;
};

// Runs (or, with `resume`, continues) the run c into c.out, which the caller has checked (a new folder, or one
// holding this run). `stop` set: a checkpoint at the next step boundary, then return. Returns the step reached.
// Throws std::runtime_error on a file that cannot be written.
std::int64_t run_training(const TrainRunConfig& c, bool resume, const std::atomic<bool>* stop,
                          const std::function<void(const TrainProgress&)>& progress);

// "state-000100.safetensors": the run's own state at a step (parameters, AdamW's moments, the running loss).
std::string state_file_name(std::int64_t step);

}  // namespace maskscope::train
