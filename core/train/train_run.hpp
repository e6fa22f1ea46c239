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
#include <utility>
#include <vector>

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

// The checks of `train`'s inputs, one definition for maskscope-cli train and maskscope.train. Texts are the
// command line's: (name, text) pairs of the given flags only.
using TrainTexts = std::vector<std::pair<std::string, std::string>>;
// The model settings of a new run: the setting rows given (key or flag, text) over random_weights, weights fixed
// and vocab 0 (from the data), the family's default gamma; refused: another model, weights other than fixed, a
// checkpoint or step (a run starts from the drawn network), a bidirectional mask. Each problem into `errors`
// naming the setting's key, not validated yet (n and vocab come from the data: check_run_model).
Settings training_model_settings(const TrainTexts& given, std::vector<SettingError>& errors);
// train's own flags (steps, batch, lr, warmup, weight-decay, grad-clip, eval-every, checkpoint-every,
// eval-sequences; '_' or '-') into c, each checked against its range; a problem into `errors` naming the flag
// (spelled with '-'). An unknown name is refused naming the valid ones.
void apply_training_texts(const TrainTexts& given, TrainRunConfig& c, std::vector<SettingError>& errors);
// "" when `folder` may hold a new run (absent, or an empty folder); else why not.
std::string check_new_run_folder(const std::string& folder);
// After the data: n and vocab as given (-1: not given) against the data's, then validate(model); problems name
// the setting's flag.
void check_run_model(const Settings& model, const TrainingData& data, std::int64_t n_given, std::int64_t vocab_given,
                     std::vector<SettingError>& errors);

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
