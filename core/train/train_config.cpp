// A training run's configuration (train_run.hpp): config.json, the flags' texts checked into it, the run folder and
// the model the data asks for.
#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/model/settings_text.hpp"
#include "core/model/strict_number.hpp"
#include "core/train/train_run.hpp"

namespace maskscope::train {

namespace fs = std::filesystem;

nlohmann::json training_json(const TrainRunConfig& c) {
  Settings model = c.model;
  model.threads = Settings{}.threads;  // threads do not change a run's bytes, so they are not part of its identity
  return {{"task", c.task},
          {"tokens", c.tokens},
          {"tokens_format", std::string(to_string(c.tokens_format))},
          {"model", settings_to_json(model)},
          {"lr", c.opt.lr},
          {"min_lr_ratio", c.opt.min_lr_ratio},
          {"warmup", c.opt.warmup},
          {"beta1", c.opt.beta1},
          {"beta2", c.opt.beta2},
          {"eps", c.opt.eps},
          {"weight_decay", c.opt.weight_decay},
          {"grad_clip", c.opt.grad_clip},
          {"steps", c.steps},
          {"batch", c.batch},
          {"eval_every", c.eval_every},
          {"checkpoint_every", c.checkpoint_every},
          {"eval_sequences", c.eval_sequences},
          {"seed", c.seed}};
}

TrainRunConfig training_from_json(const nlohmann::json& j) {
  TrainRunConfig c;
  try {
    c.task = j.at("task").get<std::string>();
    c.tokens = j.at("tokens").get<std::string>();
    const std::string format = j.at("tokens_format").get<std::string>();
    c.tokens_format = format == "chars" ? TokensFormat::chars : TokensFormat::ids;
    settings_from_json(j.at("model"), c.model, "training.model");
    c.opt.lr = j.at("lr").get<double>();
    c.opt.min_lr_ratio = j.at("min_lr_ratio").get<double>();
    c.opt.warmup = j.at("warmup").get<std::int64_t>();
    c.opt.beta1 = j.at("beta1").get<double>();
    c.opt.beta2 = j.at("beta2").get<double>();
    c.opt.eps = j.at("eps").get<double>();
    c.opt.weight_decay = j.at("weight_decay").get<double>();
    c.opt.grad_clip = j.at("grad_clip").get<double>();
    c.steps = j.at("steps").get<std::int64_t>();
    c.opt.decay_steps = c.steps;
    c.batch = j.at("batch").get<int>();
    c.eval_every = j.at("eval_every").get<std::int64_t>();
    c.checkpoint_every = j.at("checkpoint_every").get<std::int64_t>();
    c.eval_sequences = j.at("eval_sequences").get<int>();
    c.seed = j.at("seed").get<std::uint64_t>();
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("config.json's \"training\" object: ") + e.what());
  }
  return c;
}

TrainingData run_data(const TrainRunConfig& c) {
  auto make = [&](std::int32_t bos) {
    return c.task.empty() ? make_corpus_data(c.tokens, c.tokens_format, bos)
                          : make_task_data(task_from_name(c.task), kTaskDataSeed, bos);
  };
  TrainingData data = make(-1);
  if (c.model.fixed_first_token()) data = make(std::int32_t(std::max<std::int64_t>(c.model.vocab, data.vocab)));
  return data;
}

Settings run_model(const TrainRunConfig& c, const TrainingData& data) {
  Settings m = c.model;
  m.model = Model::random_weights;
  m.weights = WeightsMode::fixed;
  m.vocab = std::max<std::int64_t>(c.model.vocab, data.vocab);
  m.n = data.n;
  m.threads = Settings{}.threads;  // the trainer's threads are its own; the model's settings do not carry them
  return m;
}

namespace {

// The error of a conversion, without "name: " at its front (the error names it).
void convert(std::vector<SettingError>& errors, const std::string& name, const std::string& prefix,
             const std::function<void()>& assign) {
  try {
    assign();
  } catch (const std::exception& e) {
    const std::string m = e.what(), p = prefix + ": ";
    errors.push_back({name, m.rfind(p, 0) == 0 ? m.substr(p.size()) : m});
  }
}

}  // namespace

Settings training_model_settings(const TrainTexts& given, std::vector<SettingError>& errors) {
  Settings s;
  s.model = Model::random_weights;
  s.weights = WeightsMode::fixed;
  s.vocab = 0;  // from the data unless given
  bool gamma_given = false, model_given = false, weights_given = false, step_given = false;
  for (const auto& pair : given) {
    const auto& name = pair.first;
    const auto& text = pair.second;  // names, not a structured binding: clang 14 (the web build) cannot capture one
    const std::string key = setting_key_of(name);
    gamma_given |= key == "gamma";
    model_given |= key == "model";
    weights_given |= key == "weights";
    step_given |= key == "step";
    convert(errors, key.empty() ? name : key, key.empty() ? name : key, [&] { setting_from_text(key, text, s); });
  }
  apply_family_default_gamma(s, false, gamma_given);
  if (model_given && s.model != Model::random_weights)
    errors.push_back({"model", "train trains the random-weight network: random_weights only"});
  if (weights_given && s.weights != WeightsMode::fixed)
    errors.push_back({"weights", "a trained network is one network: fixed only"});
  if (!s.checkpoint.empty() || step_given)
    errors.push_back({step_given ? "step" : "checkpoint",
                      "train starts from the drawn network (--weight-seed); continue a run with --resume DIR"});
  if (s.mask == MaskKind::bidirectional)
    errors.push_back({"mask", "a language model predicts the next token from the ones before: causal or window:W"});
  return s;
}

void apply_training_texts(const TrainTexts& given, TrainRunConfig& c, std::vector<SettingError>& errors) {
  static const char* const kNames[] = {"steps",         "batch",     "lr",         "warmup",
                                       "weight-decay",  "grad-clip", "eval-every", "checkpoint-every",
                                       "eval-sequences"};
  std::vector<std::pair<std::string, std::string>> texts;
  for (const auto& [name, text] : given) {
    std::string flag = name;
    for (char& ch : flag)
      if (ch == '_') ch = '-';
    if (std::find_if(std::begin(kNames), std::end(kNames), [&](const char* k) { return flag == k; }) ==
        std::end(kNames)) {
      errors.push_back({flag,
                        "not a training flag; valid: steps, batch, lr, warmup, weight-decay, grad-clip, eval-every, "
                        "checkpoint-every, eval-sequences"});
      continue;
    }
    texts.emplace_back(flag, text);
  }
  auto text_of = [&](const char* flag) -> const std::string* {
    for (const auto& [f, t] : texts)
      if (f == flag) return &t;
    return nullptr;
  };
  auto whole = [&](const char* flag, std::int64_t lo, std::int64_t hi, auto& out) {
    const std::string* text = text_of(flag);
    if (!text) return;
    convert(errors, flag, flag, [&] {
      out = static_cast<std::remove_reference_t<decltype(out)>>(
          whole_number(flag, number_from_text(flag, *text), lo, hi));
    });
  };
  auto real = [&](const char* flag, double lo, double hi, double& out, bool open_low) {
    const std::string* text = text_of(flag);
    if (!text) return;
    convert(errors, flag, flag, [&] {
      out = real_number(flag, number_from_text(flag, *text), lo, hi);
      if (open_low && !(out > lo)) throw std::invalid_argument("must be > " + std::to_string(lo) + ", in (0, 10]");
    });
  };
  whole("steps", 1, 1'000'000'000, c.steps);
  whole("batch", 1, 65536, c.batch);
  real("lr", 0.0, 10.0, c.opt.lr, true);
  c.opt.warmup = std::min<std::int64_t>(c.opt.warmup, c.steps);
  whole("warmup", 0, c.steps, c.opt.warmup);
  real("weight-decay", 0.0, 10.0, c.opt.weight_decay, false);
  real("grad-clip", 0.0, 1e6, c.opt.grad_clip, false);
  whole("eval-every", 1, 1'000'000'000, c.eval_every);
  whole("checkpoint-every", 1, 1'000'000'000, c.checkpoint_every);
  whole("eval-sequences", 1, 20000, c.eval_sequences);
  c.opt.decay_steps = c.steps;
}

std::string check_new_run_folder(const std::string& folder) {
  std::error_code ec;
  if (!fs::exists(folder, ec)) return "";
  if (!fs::is_directory(folder, ec)) return "'" + folder + "' exists and is not a folder";
  if (fs::exists(fs::path(folder) / "config.json", ec))
    return "'" + folder + "' holds a run already (config.json); continue it with --resume " + folder +
           " or choose another folder";
  if (!fs::is_empty(folder, ec)) return "'" + folder + "' is not empty; choose a new or empty folder";
  return "";
}

void check_run_model(const Settings& model, const TrainingData& data, std::int64_t n_given, std::int64_t vocab_given,
                     std::vector<SettingError>& errors) {
  if (n_given >= 0 && n_given != data.n)
    errors.push_back({"n", "is the data's sequence length here: " + std::to_string(data.n) + " (prompt + answer" +
                               std::string(model.fixed_first_token() ? " + BOS" : "") + "), not " +
                               std::to_string(n_given)});
  if (vocab_given >= 0 && vocab_given < data.vocab)
    errors.push_back({"vocab", "must cover the data's ids: at least " + std::to_string(data.vocab)});
  for (auto e : validate(model)) {
    for (char& ch : e.setting)
      if (ch == '_') ch = '-';
    errors.push_back(std::move(e));
  }
}

}  // namespace maskscope::train
