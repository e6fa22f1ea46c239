// maskscope.train: a training run (core/train/train_run.hpp) with the checks and messages of `maskscope-cli train`
// (the same core functions), run without the GIL; KeyboardInterrupt stops it at a step boundary with a checkpoint.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cmath>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "bindings.hpp"
#include "interruptible.hpp"
#include "settings_args.hpp"
#include "core/model/input_file.hpp"
#include "core/model/settings_text.hpp"
#include "core/run/resources.hpp"
#include "core/train/train_run.hpp"

namespace maskscope::py_module {

namespace py = pybind11;

namespace {

void add_all(Problems& problems, const std::vector<SettingError>& errors) {
  for (const SettingError& e : errors) problems.add(e.setting, e.message);
}

// The run's config, checked as the CLI checks its flags; ValueError naming every problem.
train::TrainRunConfig checked_config(const SettingTexts& settings, const SettingTexts& training,
                                     const std::string& task, const std::string& out, bool resume) {
  train::TrainRunConfig c;
  Problems problems;
  Settings given;  // the settings as given (n, vocab, threads), for the checks after the data
  apply_setting_texts(settings, given, problems);
  problems.lines.clear();  // training_model_settings reports them again, in train's words
  auto has = [&](const char* key) {
    for (const auto& [name, text] : settings)
      if (setting_key_of(name) == key) return true;
    return false;
  };
  if (resume) {
    for (const auto& [name, text] : settings)
      if (setting_key_of(name) != "threads")
        problems.add(setting_key_of(name), "cannot be given with resume=True (the run continues as " + out +
                                               "/config.json describes it; threads may be given)");
    for (const auto& [name, text] : training)
      problems.add(name,
                   "cannot be given with resume=True (the run continues as " + out + "/config.json describes it)");
    if (!task.empty()) problems.add("task", "cannot be given with resume=True");
    std::string text, why;
    if (problems.empty() && read_input_file(out + "/config.json", kMaxTextInputBytes, "the run's config", text, why)) {
      const auto j = nlohmann::json::parse(text, nullptr, false);
      if (j.is_discarded() || !j.contains("training")) why = "'" + out + "/config.json' is not a training run's";
      else try {
          c = train::training_from_json(j.at("training"));
        } catch (const std::exception& e) { why = e.what(); }
    }
    if (!why.empty()) problems.add("resume", why);
    c.out = out;
    Settings threads;
    apply_setting_texts(settings, threads, problems);
    c.threads = resolved_threads(threads);
  } else {
    std::vector<SettingError> errors;
    Settings s = train::training_model_settings(settings, errors);
    train::apply_training_texts(training, c, errors);
    for (SettingError& e : errors)  // named as the keyword (eval_every), not the flag (eval-every)
      for (char& ch : e.setting)
        if (ch == '-') ch = '_';
    add_all(problems, errors);
    c.task = task;
    c.tokens = s.tokens;
    c.tokens_format = s.tokens_format;
    c.seed = s.seed;
    c.threads = resolved_threads(s);
    if (!task.empty() && !s.tokens.empty()) problems.add("task", "give a task or tokens=FILE, not both");
    else if (task.empty() && s.tokens.empty())
      problems.add("task", "missing: task='addition'|'reversal'|'indexing'|'ordering' or tokens=FILE");
    else if (!task.empty()) try {
        (void)task_from_name(task);
      } catch (const std::exception& e) { problems.add("task", e.what()); }
    if (out.empty()) problems.add("out", "missing: the run folder (new or empty)");
    else if (std::string why = train::check_new_run_folder(out); !why.empty()) problems.add("out", why);
    c.out = out;
    c.model = s;
    c.model.tokens.clear();
    c.model.tokens_format = TokensFormat::ids;
  }
  problems.raise_if_any();
  TrainingData data;
  try {
    data = train::run_data(c);
  } catch (const std::exception& e) {
    problems.add(c.task.empty() ? "tokens" : "task", e.what());
    problems.raise_if_any();
  }
  const Settings model = train::run_model(c, data);
  std::vector<SettingError> errors;
  train::check_run_model(model, data, !resume && has("n") ? given.n : -1, !resume && has("vocab") ? given.vocab : -1,
                         errors);
  for (SettingError& e : errors)
    for (char& ch : e.setting)
      if (ch == '-') ch = '_';
  add_all(problems, errors);
  problems.raise_if_any();
  const std::uint64_t need = train::Trainer::memory_bytes(model, c.batch, c.threads) +
                             sizeof(std::int32_t) * (data.train.size() + data.test.size());
  if (std::string shortfall = memory_shortfall(need); !shortfall.empty())
    problems.add("batch", "this run needs " + shortfall + "; lower batch, threads, d or layers");
  problems.raise_if_any();
  return c;
}

// Returns (the step reached, the steps asked for). progress(step, steps, loss, accuracy, tokens_per_s) or None.
py::tuple train_run(const SettingTexts& settings, const SettingTexts& training, const std::string& task,
                    const std::string& out, bool resume, const py::object& progress) {
  const train::TrainRunConfig c = checked_config(settings, training, task, out, resume);
  std::atomic<bool> stop{false};
  std::mutex mutex;
  std::optional<train::TrainProgress> latest;
  std::int64_t reached = 0;
  auto tick = [&] {
    std::optional<train::TrainProgress> p;
    {
      std::lock_guard lock(mutex);
      p.swap(latest);
    }
    if (p && !progress.is_none())
      progress(p->step, p->steps, p->loss, p->accuracy < 0 ? std::nan("") : p->accuracy, p->tokens_per_s);
  };
  // KeyboardInterrupt (a signal, or raised by progress): the stop flag, the run ends at the next step boundary with
  // a checkpoint (run_interruptibly waits for it), and the exception propagates.
  run_interruptibly(
      [&] {
        reached = train::run_training(c, resume, &stop, [&](const train::TrainProgress& p) {
          std::lock_guard lock(mutex);
          latest = p;
        });
      },
      [&] { stop.store(true); }, tick);
  return py::make_tuple(reached, c.steps);
}

}  // namespace

void bind_train(py::module_& m) {
  m.def("_train", &train_run, py::arg("settings"), py::arg("training"), py::arg("task"), py::arg("out"),
        py::arg("resume"), py::arg("progress"),
        "A training run: settings and train's flags as (name, text) pairs; progress(step, steps, loss, accuracy, "
        "tokens_per_s) or None; returns (step reached, steps)");
}

}  // namespace maskscope::py_module
