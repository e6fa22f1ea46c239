// Presets of trained networks (issue 50): a preset's run folder bound to its rows (a row's state "init" is the
// run's step 0, "trained" its last step: Settings::checkpoint and step, with the model settings from the run's
// config.json), the run's training settings, and how long training a missing folder would take here.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/figure/figure.hpp"
#include "core/train/train_run.hpp"

namespace maskscope::gui {

// The training settings of a preset's run into `folder`: the Training tab's defaults (d 32, 2 layers, 2 heads,
// 200 steps of batch 32; train_run.hpp's otherwise) with the preset's "train" object over them. Throws
// std::runtime_error naming the key.
train::TrainRunConfig preset_training(const PresetRun& run, const std::string& folder);
// The Training tab's defaults as training_json's keys.
// The small network that trains in seconds (d 32, 2 layers, 2 heads, 200 steps on Reversal): the Training tab's
// form and every preset's run start from it.
train::TrainRunConfig default_training_config();
nlohmann::json default_training_json();

// s as checkpoint `step` (-1: the last) of the run folder `folder`: checkpoint and step, the model settings of its
// config.json, and its inputs the run's evaluation prompts (a task's 256 shipped prompts, n the prompt's length with
// BOS; a token file's sequences), 256 samples at most, as log.jsonl's readings are taken. Errors name the setting.
std::vector<SettingError> as_checkpoint(Settings& s, const std::string& folder, std::int64_t step);

// The folder a preset's run reads: `override_folder` when given (--run DIR), else the preset's own.
std::string preset_run_folder(const Preset& p, const std::string& override_folder);
// Every run folder the preset's rows read, each once with its training recipe: the preset's own (`override_folder`
// when given) for rows without a folder of their own, then each row's own "run" (--run DIR does not move those).
std::vector<PresetRun> preset_runs(const Preset& p, const std::string& override_folder);
// Those of preset_runs whose folder does not exist yet: what --train-missing (or the Training tab) would train.
std::vector<PresetRun> missing_preset_runs(const Preset& p, const std::string& override_folder);
// Trains each missing run folder of the preset in turn (run_training, 1 thread), `say` told of each before it
// starts. Throws std::runtime_error naming the folder when one cannot be trained.
void train_missing_preset_runs(const Preset& p, const std::string& override_folder,
                               const std::function<void(const PresetRun&, const train::TrainRunConfig&)>& say);

// Binds the preset's rows with a state (and its live settings) to the run folder: checkpoint, step (0 or -1),
// the checkpoint's model settings and n. False with `error` naming the folder when it holds no run.
bool bind_preset_run(Preset& p, const std::string& folder, std::string& error);

// Tokens per second of one training step of `c` on its data (train::run_data(c)) on this machine (two steps timed
// after one warm-up; about a second for a small network).
double measured_tokens_per_s(const train::TrainRunConfig& c, const TrainingData& data);
// Seconds one evaluation of `c` takes here (test loss and accuracy, the per-layer readings): a run of one step with
// an evaluation at steps 0 and 1, timed in a temporary folder (removed), less its step of sequences of n tokens.
double measured_evaluation_seconds(const train::TrainRunConfig& c, double tokens_per_s, int n);
// "the run folder F is missing; training it (STEPS steps of ...) takes about T here (N tokens/s measured)".
std::string missing_run_message(const Preset& p, const std::string& folder);
// The same for `run` (a folder and its recipe, e.g. a row's own), and for every missing folder of the preset
// ("" when none is missing), one sentence each.
std::string missing_run_message(const Preset& p, const PresetRun& run);
std::string missing_runs_message(const Preset& p, const std::string& override_folder);

}  // namespace maskscope::gui
