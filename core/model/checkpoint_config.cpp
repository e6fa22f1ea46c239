// A checkpoint's config.json and location (checkpoint_config.hpp).
#include "core/model/checkpoint_config.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <mutex>
#include <stdexcept>

#include "core/model/input_file.hpp"
#include "core/model/settings_text.hpp"
#include "core/model/strict_number.hpp"
#include "core/model/token_file.hpp"
#include "core/model/version.hpp"

namespace maskscope {

namespace fs = std::filesystem;

namespace {

constexpr const char* kModelKeys[] = {"model",         "weights",       "d",           "layers",    "heads",
                                      "vocab",         "norm",          "gamma",       "mlp",       "rope",
                                      "rope_scramble", "pos_embedding", "first_token", "init_mean", "init_std",
                                      "embed_std",     "residual_mean", "weight_seed", "pos_std"};

std::string path_in_quotes(const std::string& path) { return "'" + printable(path, 200) + "'"; }

// "step-000100.safetensors" -> 100; -1 for any other name.
std::int64_t step_of_name(const std::string& name) {
  constexpr std::string_view head = "step-", tail = ".safetensors";
  if (name.size() <= head.size() + tail.size() || name.compare(0, head.size(), head) != 0 ||
      name.compare(name.size() - tail.size(), tail.size(), tail) != 0)
    return -1;
  const std::string digits = name.substr(head.size(), name.size() - head.size() - tail.size());
  if (digits.size() > 13 || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoll(digits);
}

std::string steps_text(const std::vector<std::int64_t>& steps) {
  if (steps.empty()) return "none";
  std::string out;
  const std::size_t shown = std::min<std::size_t>(steps.size(), 12);
  for (std::size_t k = 0; k < shown; ++k) out += (k ? ", " : "") + std::to_string(steps[k]);
  if (shown < steps.size()) out += ", ... " + std::to_string(steps.back());
  return out;
}

[[noreturn]] void config_fail(const std::string& where, const std::string& why) {
  throw std::runtime_error(where + ": " + why);
}

const nlohmann::json* find_key(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

}  // namespace

std::span<const char* const> checkpoint_model_keys() { return kModelKeys; }

std::string checkpoint_file_name(std::int64_t step) {
  std::string digits = std::to_string(step);
  if (digits.size() < 6) digits.insert(0, 6 - digits.size(), '0');
  return "step-" + digits + ".safetensors";
}

std::vector<std::int64_t> checkpoint_steps(const std::string& folder) {
  std::vector<std::int64_t> steps;
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
    if (const std::int64_t step = step_of_name(it->path().filename().string()); step >= 0) steps.push_back(step);
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  return steps;
}

CheckpointLocation locate_checkpoint(const std::string& path_text, std::int64_t step) {
  std::string path = path_text;
  // DIR@STEP
  if (const auto at = path.rfind('@'); at != std::string::npos && at + 1 < path.size() &&
                                       path.find_first_not_of("0123456789", at + 1) == std::string::npos &&
                                       path.size() - at - 1 <= 13) {
    const std::int64_t at_step = std::stoll(path.substr(at + 1));
    if (step >= 0 && step != at_step)
      throw std::runtime_error(path_in_quotes(path_text) + " names step " + std::to_string(at_step) + " and step is " +
                               std::to_string(step) + "; give one of them");
    step = at_step;
    path = path.substr(0, at);
  }
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st))
    throw std::runtime_error("checkpoint " + path_in_quotes(path) +
                             " does not exist; valid: a .safetensors file with config.json beside it, or a run folder "
                             "(DIR, DIR@STEP)");
  CheckpointLocation loc;
  if (fs::is_directory(st)) {
    const std::vector<std::int64_t> steps = checkpoint_steps(path);
    if (steps.empty())
      throw std::runtime_error("checkpoint folder " + path_in_quotes(path) + " holds no step-NNNNNN.safetensors");
    if (step < 0) step = steps.back();
    else if (!std::binary_search(steps.begin(), steps.end(), step))
      throw std::runtime_error("checkpoint folder " + path_in_quotes(path) + " has no step " + std::to_string(step) +
                               "; its steps: " + steps_text(steps));
    loc.step = step;
    // The name as written (6 digits or more); a name with more leading zeros is found by listing.
    loc.tensors = (fs::path(path) / checkpoint_file_name(step)).string();
    if (!fs::exists(loc.tensors, ec))
      for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec))
        if (step_of_name(it->path().filename().string()) == step) loc.tensors = it->path().string();
    loc.config = (fs::path(path) / "config.json").string();
    return loc;
  }
  if (step >= 0)
    throw std::runtime_error("step applies to a run folder of checkpoints; " + path_in_quotes(path) +
                             " is one file (use the folder, or step -1)");
  loc.tensors = path;
  loc.step = step_of_name(fs::path(path).filename().string());
  const fs::path folder = fs::path(path).parent_path();
  loc.config = ((folder.empty() ? fs::path(".") : folder) / "config.json").string();
  return loc;
}

CheckpointConfig parse_checkpoint_config(const nlohmann::json& j, const std::string& name) {
  const std::string where = printable(name, 200);
  auto fail = [&](const std::string& why) { config_fail(where, why); };
  if (!j.is_object()) fail("is not a JSON object");
  if (const auto* t = find_key(j, "model_type"); t && !(t->is_string() && t->get<std::string>() == "gpt2"))
    fail("model_type " + t->dump() + "; maskscope opens GPT-2-layout checkpoints (model_type \"gpt2\")");
  auto whole = [&](const char* key, const char* fallback, std::int64_t lo, std::int64_t hi) {
    const nlohmann::json* v = find_key(j, key);
    if (!v && fallback) v = find_key(j, fallback);
    if (!v)
      fail(std::string("lacks ") + key + " (GPT-2's config keys: n_embd, n_layer, n_head, vocab_size, n_positions)");
    return whole_number(where + ": " + key, *v, lo, hi);
  };
  CheckpointConfig c;
  Settings& s = c.model;
  s.model = Model::random_weights;
  s.weights = WeightsMode::fixed;
  s.gamma = 1.0;
  // GPT-2's architecture, unless maskscope's own keys say otherwise below.
  s.norm = Norm::layernorm;
  s.mlp = true;
  s.pos_embedding = PosEmbedding::learned;
  s.first_token = FirstToken::none;
  s.rope_base = 0.0;
  s.d = int(whole("n_embd", "hidden_size", 1, Limits::rw_d_max));
  s.layers = int(whole("n_layer", "num_hidden_layers", Limits::layers_min, Limits::layers_max));
  s.heads = int(whole("n_head", "num_attention_heads", Limits::heads_min, Limits::heads_max));
  c.vocab_rows = whole("vocab_size", nullptr, 1, Limits::vocab_max);
  c.n_positions = int(whole("n_positions", "n_ctx", 1, 1 << 20));
  if (s.d % s.heads != 0)
    fail("n_embd " + std::to_string(s.d) + " is not divisible by n_head " + std::to_string(s.heads));
  if (const auto* a = find_key(j, "activation_function")) {
    const std::string act = a->is_string() ? a->get<std::string>() : a->dump();
    if (act == "gelu") c.gelu_tanh = false;
    else if (act == "gelu_new" || act == "gelu_pytorch_tanh") c.gelu_tanh = true;
    else fail("activation_function '" + printable(act) + "'; valid: gelu (erf), gelu_new (tanh form)");
  }
  if (const auto* e = find_key(j, "layer_norm_epsilon")) {
    const double eps = real_number(where + ": layer_norm_epsilon", *e, 0.0, 1.0);
    if (std::abs(eps - kCheckpointLayerNormEps) > 1e-12)
      fail("layer_norm_epsilon " + e->dump() + "; maskscope's norms use 1e-05 (GPT-2's and PyTorch's default)");
  }
  if (const auto* inner = find_key(j, "n_inner");
      inner && whole_number(where + ": n_inner", *inner, 0, 1 << 30) != 4 * s.d)
    fail("n_inner " + inner->dump() + "; maskscope's MLP is 4 n_embd = " + std::to_string(4 * s.d) + " wide");
  if (const auto* tie = find_key(j, "tie_word_embeddings"); tie && !boolean(where + ": tie_word_embeddings", *tie))
    fail("tie_word_embeddings false; maskscope's language-model head is the token embedding (tied, as GPT-2's)");
  if (const auto* sc = find_key(j, "scale_attn_weights"); sc && !boolean(where + ": scale_attn_weights", *sc))
    fail("scale_attn_weights false; maskscope scales scores by 1 / sqrt(d_h), as GPT-2");
  if (const auto* sc = find_key(j, "scale_attn_by_inverse_layer_idx");
      sc && boolean(where + ": scale_attn_by_inverse_layer_idx", *sc))
    fail("scale_attn_by_inverse_layer_idx true; maskscope scales scores by 1 / sqrt(d_h) only");
  if (const auto* ms = find_key(j, "maskscope")) {
    c.written_by_maskscope = true;
    if (!ms->is_object() || !ms->contains("settings")) fail("its \"maskscope\" object lacks \"settings\"");
    const nlohmann::json& ks = (*ms)["settings"];
    if (!ks.is_object()) fail("maskscope.settings is not an object");
    for (const auto& item : ks.items()) {
      const std::string& key =
          item.key();  // a name, not a structured binding: clang 14 (the web build) cannot capture one
      if (std::find_if(std::begin(kModelKeys), std::end(kModelKeys), [&](const char* k) { return key == k; }) ==
          std::end(kModelKeys))
        fail("maskscope.settings." + printable(key) + " is not a setting a checkpoint fixes");
    }
    Settings m = s;
    settings_from_json(ks, m, where + ": maskscope.settings");
    // GPT-2's keys are the sizes; maskscope's must agree with them.
    if (ks.contains("d") && m.d != s.d) fail("maskscope.settings.d " + std::to_string(m.d) + " differs from n_embd");
    if (ks.contains("layers") && m.layers != s.layers) fail("maskscope.settings.layers differs from n_layer");
    if (ks.contains("heads") && m.heads != s.heads) fail("maskscope.settings.heads differs from n_head");
    m.model = Model::random_weights;
    m.weights = WeightsMode::fixed;
    s = m;
  }
  if (const auto* t = find_key(j, "training"); t && t->is_object()) {
    c.training = true;
    if (const auto* tokens = find_key(*t, "tokens"); tokens && tokens->is_string())
      c.corpus = tokens->get<std::string>();
    if (const auto* format = find_key(*t, "tokens_format"); format && format->is_string())
      c.corpus_format = format->get<std::string>() == "chars" ? TokensFormat::chars : TokensFormat::ids;
    if (const auto* task = find_key(*t, "task"); task && task->is_string() && !task->get<std::string>().empty()) {
      const std::string file = "zuo-" + task->get<std::string>();
      const std::vector<std::string> shipped = builtin_token_files();
      if (std::find(shipped.begin(), shipped.end(), file) == shipped.end())
        fail("training.task '" + printable(task->get<std::string>()) + "' is not one of the tasks");
      c.task = task->get<std::string>();
    }
  }
  s.vocab = c.vocab_rows - (s.fixed_first_token() ? 1 : 0);
  if (s.vocab < 1) fail("vocab_size " + std::to_string(c.vocab_rows) + " leaves no token beside BOS");
  if (s.rope() && s.head_width() % 2 != 0) fail("RoPE needs an even head width n_embd / n_head");
  for (const SettingError& e : validate(s)) fail(e.setting + ": " + e.message);
  return c;
}

std::shared_ptr<const CheckpointConfig> load_checkpoint_config(const std::string& path) {
  struct Entry {
    std::int64_t mtime_ns = 0, size = 0;
    std::shared_ptr<const CheckpointConfig> config;
    std::string error;
  };
  static std::mutex mutex;
  static std::map<std::string, Entry> cache;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw std::runtime_error("the checkpoint's config.json " + path_in_quotes(path) +
                             " does not exist; a checkpoint is a .safetensors file with its config.json beside it");
  const std::int64_t mtime = std::int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  std::lock_guard lock(mutex);
  Entry& e = cache[path];
  if (!(e.config || !e.error.empty()) || e.mtime_ns != mtime || e.size != std::int64_t(st.st_size)) {
    e = Entry{mtime, std::int64_t(st.st_size), nullptr, ""};
    try {
      const std::string text = read_input_file(path, kMaxTextInputBytes, "the checkpoint's config.json");
      const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
      if (j.is_discarded()) throw std::runtime_error(printable(path, 200) + " is not valid JSON");
      e.config = std::make_shared<const CheckpointConfig>(parse_checkpoint_config(j, path));
    } catch (const std::exception& error) { e.error = error.what(); }
  }
  if (!e.error.empty()) throw std::runtime_error(e.error);
  return e.config;
}

nlohmann::json checkpoint_config_json(const Settings& s, int n_positions, bool gelu_tanh) {
  nlohmann::json j;
  j["model_type"] = "gpt2";
  j["architectures"] = {"GPT2LMHeadModel"};
  j["n_embd"] = s.d;
  j["n_layer"] = s.layers;
  j["n_head"] = s.heads;
  j["vocab_size"] = s.vocab + (s.fixed_first_token() ? 1 : 0);
  j["n_positions"] = n_positions;
  j["n_ctx"] = n_positions;
  j["n_inner"] = nullptr;
  j["activation_function"] = gelu_tanh ? "gelu_new" : "gelu";
  j["layer_norm_epsilon"] = kCheckpointLayerNormEps;
  j["tie_word_embeddings"] = true;
  j["scale_attn_weights"] = true;
  j["resid_pdrop"] = 0.0;
  j["embd_pdrop"] = 0.0;
  j["attn_pdrop"] = 0.0;
  if (s.fixed_first_token()) j["bos_token_id"] = s.vocab;
  const nlohmann::json all = settings_to_json(s);
  nlohmann::json model;
  for (const char* key : kModelKeys) model[key] = all[key];
  j["maskscope"] = {{"version", kVersion}, {"settings", model}};
  return j;
}

std::vector<SettingError> apply_checkpoint_settings(Settings& s, const std::function<bool(std::string_view)>& given) {
  if (s.checkpoint.empty()) return {};
  const nlohmann::json mine = settings_to_json(s);
  // The family and the weights mode even when the config cannot be read: the error is about the checkpoint.
  s.model = Model::random_weights;
  s.weights = WeightsMode::fixed;
  std::shared_ptr<const CheckpointConfig> c;
  try {
    c = load_checkpoint_config(locate_checkpoint(s.checkpoint, s.step).config);
  } catch (const std::exception& e) { return {{"checkpoint", e.what()}}; }
  std::vector<SettingError> errors;
  const nlohmann::json theirs = settings_to_json(c->model);
  nlohmann::json fixed;
  for (const char* key : kModelKeys) {
    if (given && given(key) && mine[key] != theirs[key]) {
      errors.push_back({key, std::string(key) + " = " + mine[key].dump() +
                                 " contradicts the checkpoint's config.json, " + "which has " + key + " = " +
                                 theirs[key].dump() + "; leave " + key + " unset (the checkpoint sets it)"});
    }
    fixed[key] = theirs[key];  // the config wins, so that validate() does not name the key again
  }
  settings_from_json(fixed, s, "checkpoint config.json");
  if (!c->task.empty() && s.tokens.empty() && !(given && (given("tokens") || given("n")))) {
    s.tokens = "builtin:zuo-" + c->task;
    s.tokens_format = TokensFormat::chars;
    try {
      s.n = load_token_sequences(s.tokens, s.tokens_format)->length + (s.fixed_first_token() ? 1 : 0);
    } catch (const std::exception& e) { errors.push_back({"tokens", e.what()}); }
  }
  return errors;
}

std::vector<SettingError> check_checkpoint(const Settings& s) {
  if (s.checkpoint.empty()) return {};
  std::shared_ptr<const CheckpointConfig> c;
  try {
    c = load_checkpoint_config(locate_checkpoint(s.checkpoint, s.step).config);
  } catch (const std::exception& e) { return {{"checkpoint", e.what()}}; }
  std::vector<SettingError> errors;
  const nlohmann::json mine = settings_to_json(s), theirs = settings_to_json(c->model);
  for (const char* key : kModelKeys)
    if (mine[key] != theirs[key])
      errors.push_back({key, std::string(key) + " = " + mine[key].dump() +
                                 " differs from the checkpoint's config.json (" + theirs[key].dump() +
                                 "); the checkpoint sets it"});
  if (s.learned_positions() && s.n > c->n_positions)
    errors.push_back({"n", "n = " + std::to_string(s.n) + " exceeds the checkpoint's position table (n_positions " +
                               std::to_string(c->n_positions) + "); valid: n in [1, " + std::to_string(c->n_positions) +
                               "]"});
  return errors;
}

}  // namespace maskscope
