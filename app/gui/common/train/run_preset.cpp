// Presets of trained networks: binding a run folder to a preset's rows, and the cost of training a missing one.
#include "common/train/run_preset.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include <unistd.h>

#include "core/model/checkpoint_config.hpp"
#include "core/train/tasks.hpp"
#include "core/train/trainer.hpp"
#include "common/train/training_session.hpp"

namespace maskscope::gui {

train::TrainRunConfig default_training_config() {
  train::TrainRunConfig c;
  Settings& s = c.model;
  s.model = Model::random_weights;
  s.weights = WeightsMode::fixed;
  s.gamma = 1;
  s.vocab = 16;  // raised to the data's vocabulary by run_model when it needs more
  s.d = 32;
  s.layers = 2;
  s.heads = 2;
  c.task = "reversal";
  c.steps = 200;
  c.batch = 32;
  c.eval_every = 20;
  c.checkpoint_every = 20;
  c.eval_sequences = 200;
  c.opt.warmup = 20;
  return c;
}

nlohmann::json default_training_json() { return train::training_json(default_training_config()); }

train::TrainRunConfig preset_training(const PresetRun& run, const std::string& folder) {
  nlohmann::json j = default_training_json();
  for (const auto& [key, value] : run.train.items()) {
    if (!j.contains(key)) throw std::runtime_error("run.train." + key + ": not a training setting");
    if (key == "model") {
      if (!value.is_object()) throw std::runtime_error("run.train.model: expected an object of model settings");
      for (const auto& [k, v] : value.items()) j["model"][k] = v;
    } else {
      j[key] = value;
    }
  }
  train::TrainRunConfig c = train::training_from_json(j);
  c.out = folder;
  c.threads = 1;
  c.opt.decay_steps = c.steps;
  return c;
}

std::string preset_run_folder(const Preset& p, const std::string& override_folder) {
  if (!override_folder.empty()) return override_folder;
  return p.run ? p.run->folder : "";
}

std::vector<PresetRun> preset_runs(const Preset& p, const std::string& override_folder) {
  std::vector<PresetRun> out;
  auto add = [&](PresetRun r) {  // a folder once, with the first recipe a row gives it
    if (r.folder.empty()) return;
    const auto same = std::find_if(out.begin(), out.end(), [&](const PresetRun& o) { return o.folder == r.folder; });
    if (same == out.end()) out.push_back(std::move(r));
    else if (same->train.empty()) same->train = std::move(r.train);
  };
  const bool own = p.run.has_value() || std::any_of(p.figure.rows.begin(), p.figure.rows.end(), [](const FigureRow& r) {
                     return !r.state.empty() && r.run.empty();
                   });
  if (own) add(PresetRun{preset_run_folder(p, override_folder), p.run ? p.run->train : nlohmann::json::object()});
  for (const FigureRow& row : p.figure.rows)
    if (!row.state.empty() && !row.run.empty()) add(PresetRun{row.run, row.run_train});
  return out;
}

std::vector<PresetRun> missing_preset_runs(const Preset& p, const std::string& override_folder) {
  std::vector<PresetRun> out;
  std::error_code ec;
  for (PresetRun& r : preset_runs(p, override_folder))
    if (!std::filesystem::exists(r.folder, ec)) out.push_back(std::move(r));
  return out;
}

void train_missing_preset_runs(const Preset& p, const std::string& override_folder,
                               const std::function<void(const PresetRun&, const train::TrainRunConfig&)>& say) {
  for (const PresetRun& r : missing_preset_runs(p, override_folder)) {
    const train::TrainRunConfig c = preset_training(r, r.folder);
    if (say) say(r, c);
    try {
      train::run_training(c, false, nullptr, nullptr);
    } catch (const std::exception& e) { throw std::runtime_error(r.folder + ": " + e.what()); }
  }
}

std::vector<SettingError> as_checkpoint(Settings& s, const std::string& folder, std::int64_t step) {
  s.checkpoint = folder;
  s.step = step;
  s.model = Model::random_weights;
  s.weights = WeightsMode::fixed;
  try {
    const auto cfg = load_checkpoint_config(locate_checkpoint(folder, step).config);
    // A run of train shows its own inputs, not the live model's: for a task, its evaluation prompts, which
    // apply_checkpoint_settings sets (with their n) when no tokens are set; for a token file, that file.
    if (cfg->training) s.tokens.clear();
    if (auto errors = apply_checkpoint_settings(s, [](std::string_view) { return false; }); !errors.empty())
      return errors;
    if (cfg->task.empty()) {
      if (cfg->n_positions > 0) s.n = cfg->n_positions;
      if (cfg->training) {
        s.tokens = cfg->corpus;
        s.tokens_format = cfg->corpus_format;
      }
    }
    if (cfg->training) s.samples = std::min<std::int64_t>(s.samples, 256);  // the evaluation prompts' count
  } catch (const std::exception& e) { return {{"checkpoint", e.what()}}; }
  return validate(s);
}

bool bind_preset_run(Preset& p, const std::string& folder, std::string& error) {
  namespace fs = std::filesystem;
  std::error_code ec;
  auto check = [&](const std::string& f) {
    if (fs::exists(fs::path(f) / "config.json", ec) && !checkpoint_steps(f).empty()) return true;
    error = "the run folder '" + f + "' holds no training run (config.json and step-NNNNNN.safetensors)";
    return false;
  };
  if (!folder.empty() && !check(folder)) return false;
  Preset out = p;
  if (!folder.empty())
    if (auto e = as_checkpoint(out.settings, folder, -1); !e.empty()) {
      error = folder + ": " + e[0].setting + ": " + e[0].message;
      return false;
    }
  for (FigureRow& row : out.figure.rows) {
    if (row.state.empty()) continue;
    const std::string f = row.run.empty() ? folder : row.run;
    if (f.empty() || !check(f)) {
      if (f.empty()) error = "a row with a state needs a run folder";
      return false;
    }
    if (auto e = as_checkpoint(row.settings, f, row.state == "init" ? 0 : -1); !e.empty()) {
      error = f + ": " + e[0].setting + ": " + e[0].message;
      return false;
    }
  }
  // The preset's title describes these rows: it holds for the bound cells as for the preset's own.
  if (out.figure.title_scope.cells) out.figure.title_scope.cells = title_simulations(out.figure);
  p = std::move(out);
  return true;
}

double measured_tokens_per_s(const train::TrainRunConfig& c, const TrainingData& data) {
  const Settings model = train::run_model(c, data);
  train::Trainer trainer(model, c.opt, c.batch, c.threads);
  (void)trainer.train_step(train_batch(data, c.seed, 0, c.batch));  // warm-up: first touches
  const auto t0 = std::chrono::steady_clock::now();
  for (std::uint64_t k = 1; k <= 2; ++k) (void)trainer.train_step(train_batch(data, c.seed, k, c.batch));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s > 0 ? 2.0 * c.batch * data.n / s : 0.0;
}

double measured_evaluation_seconds(const train::TrainRunConfig& given, double tokens_per_s, int n) {
  namespace fs = std::filesystem;
  train::TrainRunConfig c = given;
  std::error_code ec;
  const fs::path folder = fs::temp_directory_path(ec) / ("maskscope-estimate-" + std::to_string(::getpid()));
  fs::remove_all(folder, ec);
  c.out = folder.string();
  c.steps = 1;
  c.eval_every = 1;
  c.checkpoint_every = 1;
  c.opt.warmup = 0;
  c.opt.decay_steps = 1;
  const auto t0 = std::chrono::steady_clock::now();
  train::run_training(c, false, nullptr, nullptr);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fs::remove_all(folder, ec);
  const double step = tokens_per_s > 0 ? double(c.batch) * n / tokens_per_s : 0.0;
  return std::max(0.0, (s - step) / 2.0);  // two evaluations (and two checkpoints) and one step
}

std::string missing_run_message(const Preset& p, const std::string& folder) {
  if (!p.run) return "preset '" + p.name + "' needs a run folder";
  return missing_run_message(p, PresetRun{folder, p.run->train});
}

std::string missing_runs_message(const Preset& p, const std::string& override_folder) {
  std::string out;
  for (const PresetRun& r : missing_preset_runs(p, override_folder))
    out += (out.empty() ? "" : "\n") + missing_run_message(p, r);
  return out;
}

std::string missing_run_message(const Preset& p, const PresetRun& run) {
  const std::string& folder = run.folder;
  std::string estimate = "an unknown time";
  char line[256];
  try {
    const train::TrainRunConfig c = preset_training(run, folder);
    const TrainingData data = train::run_data(c);
    const double rate = measured_tokens_per_s(c, data);
    const double eval_s = measured_evaluation_seconds(c, rate, data.n);
    const double evals = double(c.steps / std::max<std::int64_t>(1, c.eval_every) + 1);
    const double seconds = double(c.steps) * c.batch * data.n / std::max(rate, 1.0) + evals * eval_s;
    std::snprintf(line, sizeof line,
                  "about %.0f s on this machine (%lld steps of batch %d on %s, d %d, %d layers at %.0f "
                  "tokens/s measured, 1 thread, and %.0f evaluations of %.2f s measured)",
                  seconds, (long long)c.steps, c.batch, c.task.empty() ? "a token file" : c.task.c_str(), c.model.d,
                  c.model.layers, rate, evals, eval_s);
    estimate = line;
  } catch (const std::exception& e) { estimate = std::string("an unknown time (") + e.what() + ")"; }
  // --run DIR replaces the preset's own folder only; a row's own folder is its own.
  const bool own =
      p.run && folder != p.run->folder &&
      std::any_of(p.figure.rows.begin(), p.figure.rows.end(), [&](const FigureRow& r) { return r.run == folder; });
  return "preset '" + p.name + "': the run folder '" + folder + "'" +
         (own ? " (a row's own, relative to the working folder)" : "") + " is missing; training it takes " + estimate +
         ". Train it with --train-missing (or the Training tab)" + (own ? "" : ", or give another with --run DIR");
}

}  // namespace maskscope::gui
