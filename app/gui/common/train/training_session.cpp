// The Training tab's model: a run in a background thread, and the run folder read as it grows.
#include "common/train/training_session.hpp"

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <filesystem>
#include <sstream>

#include "core/model/checkpoint_config.hpp"
#include "core/model/input_file.hpp"
#include "core/run/resources.hpp"
#include "core/train/trainer.hpp"

namespace maskscope::gui {

namespace fs = std::filesystem;

std::vector<TrainEvaluation> parse_train_log(const std::string& text) {
  std::vector<TrainEvaluation> out;
  std::istringstream in(text);
  auto number = [](const nlohmann::json& j, const char* key, double fallback) {
    return j.contains(key) && j[key].is_number() ? j[key].get<double>() : fallback;
  };
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("step") || !j["step"].is_number_integer()) continue;
    TrainEvaluation e;
    e.step = j["step"].get<std::int64_t>();
    e.train_loss = number(j, "train_loss", -1);
    e.test_loss = number(j, "test_loss", 0);
    e.test_accuracy = number(j, "test_accuracy", 0);
    e.tokens_per_s = number(j, "tokens_per_s", 0);
    if (j.contains("layers") && j["layers"].is_array())
      for (const auto& l : j["layers"]) {
        if (!l.is_object()) continue;
        TrainLayerReading r;
        r.adjacency = number(l, "adjacency", 0);
        r.adjacency_se = number(l, "adjacency_se", 0);
        r.norm_adjacency = number(l, "norm_adjacency", 0);
        r.norm_adjacency_se = number(l, "norm_adjacency_se", 0);
        r.rp = number(l, "rp", 0);
        r.rp_se = number(l, "rp_se", 0);
        r.sink_weight = number(l, "sink_weight", 0);
        r.sink_weight_se = number(l, "sink_weight_se", 0);
        if (l.contains("residual_stream_share") && l["residual_stream_share"].is_object()) {
          const auto& share = l["residual_stream_share"];
          r.residual_share = number(share, "value", r.residual_share);
          r.residual_share_se = number(share, "se", r.residual_share_se);
          if (share.contains("note") && share["note"].is_string()) r.residual_share_note = share["note"];
        }
        e.layers.push_back(std::move(r));
      }
    out.push_back(std::move(e));
  }
  return out;
}

double estimated_training_seconds(const train::TrainRunConfig& c, int n, double tokens_per_s) {
  if (tokens_per_s <= 0) return -1;
  const double train_tokens = double(c.steps) * c.batch * n;
  // An evaluation runs the forward pass over eval_sequences test sequences (about a third of a step's cost per
  // token) and the evaluation prompts' readings.
  const double evals = double(c.steps / std::max<std::int64_t>(1, c.eval_every) + 1);
  const double eval_tokens = evals * c.eval_sequences * n / 3.0;
  return (train_tokens + eval_tokens) / tokens_per_s;
}

TrainingSession::~TrainingSession() {
  stop_ = true;
  join();
}

void TrainingSession::join() {
  if (thread_.joinable()) thread_.join();
}

TrainingSession::State TrainingSession::state() {
  std::lock_guard lock(mutex_);
  return state_;
}

std::string TrainingSession::error() {
  std::lock_guard lock(mutex_);
  return error_;
}

train::TrainProgress TrainingSession::progress() {
  std::lock_guard lock(mutex_);
  return progress_;
}

double TrainingSession::eta_seconds() {
  std::lock_guard lock(mutex_);
  if (state_ != State::running || progress_.step <= started_step_) return -1;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  const double per_step = elapsed / double(progress_.step - started_step_);
  return per_step * double(progress_.steps - progress_.step);
}

bool TrainingSession::start(const train::TrainRunConfig& c, std::string& error) {
  if (thread_.joinable() && state() == State::running) {
    error = "a run is training; pause it first";
    return false;
  }
  join();
  std::error_code ec;
  if (c.out.empty()) {
    error = "the run folder: choose one";
    return false;
  }
  if (fs::exists(c.out, ec) && (!fs::is_directory(c.out, ec) || !fs::is_empty(c.out, ec))) {
    error = "the run folder '" + c.out + "' is not empty; open it to continue it, or choose a new folder";
    return false;
  }
  try {
    const TrainingData data = train::run_data(c);
    const Settings model = train::run_model(c, data);
    if (const auto errors = validate(model); !errors.empty()) {
      error = errors[0].setting + ": " + errors[0].message;
      return false;
    }
    const std::uint64_t need = train::Trainer::memory_bytes(model, c.batch, c.threads) +
                               sizeof(std::int32_t) * (data.train.size() + data.test.size());
    if (std::string shortfall = memory_shortfall(need); !shortfall.empty()) {
      error = "batch: this run needs " + shortfall + "; lower the batch, d or layers";
      return false;
    }
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
  config_ = c;
  evaluations_.clear();
  checkpoints_.clear();
  log_stamp_.clear();
  launch(false);
  return true;
}

bool TrainingSession::open(const std::string& folder, std::string& error) {
  if (thread_.joinable() && state() == State::running) {
    error = "a run is training; pause it first";
    return false;
  }
  join();
  std::string text;
  if (!read_input_file(folder + "/config.json", kMaxTextInputBytes, "the run's config", text, error)) return false;
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.contains("training")) {
    error = "'" + folder + "/config.json' is not a training run's (no \"training\" object)";
    return false;
  }
  try {
    train::TrainRunConfig c = train::training_from_json(j.at("training"));
    c.out = folder;
    c.threads = config_.threads > 0 ? config_.threads : 1;
    config_ = c;
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
  evaluations_.clear();
  checkpoints_.clear();
  log_stamp_.clear();
  last_refresh_ = {};
  refresh();
  std::lock_guard lock(mutex_);
  const std::int64_t last = checkpoints_.empty() ? 0 : checkpoints_.back();
  state_ = last >= config_.steps ? State::finished : State::paused;
  progress_ = {last, config_.steps, evaluations_.empty() ? 0.0 : evaluations_.back().test_loss,
               evaluations_.empty() ? -1.0 : evaluations_.back().test_accuracy, 0.0};
  error_.clear();
  return true;
}

void TrainingSession::pause() {
  std::lock_guard lock(mutex_);
  if (state_ != State::running) return;
  stop_ = true;
  state_ = State::stopping;
}

bool TrainingSession::resume(std::string& error) {
  const State s = state();
  if (s != State::paused) {
    error = s == State::finished ? "the run has reached its last step" : "nothing to resume: open or start a run";
    return false;
  }
  join();
  launch(true);
  return true;
}

std::chrono::steady_clock::time_point TrainingSession::started() {
  std::lock_guard lock(mutex_);
  return started_;
}

void TrainingSession::launch(bool resume) {
  {
    std::lock_guard lock(mutex_);
    state_ = State::running;
    error_.clear();
    started_ = std::chrono::steady_clock::now();
    started_step_ = checkpoints_.empty() ? 0 : checkpoints_.back();
    progress_.step = started_step_;
    progress_.steps = config_.steps;
  }
  stop_ = false;
  thread_ = std::thread([this, resume] {
  // Low priority, as the live run's workers: the UI thread keeps its core. The trainer's own workers
  // inherit it.
#if defined(__linux__)
    setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 10);
#endif
    std::string failure;
    std::int64_t reached = 0;
    try {
      reached = train::run_training(config_, resume, &stop_, [this](const train::TrainProgress& p) {
        std::lock_guard lock(mutex_);
        progress_ = p;
      });
    } catch (const std::exception& e) { failure = e.what(); }
    std::lock_guard lock(mutex_);
    if (!failure.empty()) {
      state_ = State::failed;
      error_ = failure;
    } else {
      state_ = reached >= config_.steps ? State::finished : State::paused;
    }
  });
}

bool TrainingSession::refresh() {
  if (config_.out.empty()) return false;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_refresh_ < std::chrono::milliseconds(200)) return false;
  last_refresh_ = now;
  std::error_code ec;
  const std::string log = config_.out + "/log.jsonl";
  std::string stamp;
  if (fs::exists(log, ec)) {
    stamp = std::to_string(static_cast<unsigned long long>(fs::file_size(log, ec))) + ":" +
            std::to_string(static_cast<long long>(fs::last_write_time(log, ec).time_since_epoch().count()));
  }
  bool changed = false;
  if (stamp != log_stamp_) {
    std::string text, why;
    if (!stamp.empty() && read_input_file(log, 1ull << 30, "the log", text, why)) {
      evaluations_ = parse_train_log(text);
      log_stamp_ = stamp;
      changed = true;
    }
  }
  std::vector<std::int64_t> steps = checkpoint_steps(config_.out);
  if (steps != checkpoints_) {
    checkpoints_ = std::move(steps);
    changed = true;
  }
  return changed;
}

}  // namespace maskscope::gui
