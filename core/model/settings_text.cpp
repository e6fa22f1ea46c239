// Settings as text (settings_text.hpp).
#include "core/model/settings_text.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/model/strict_number.hpp"

namespace maskscope {

namespace {

constexpr SettingFlag kSettingFlags[] = {
    {"model", "model", "model family: parameter_free | random_weights (docs/model.md section 7)", SettingValue::name},
    {"n", "n", "tokens per sequence [1, 512]", SettingValue::whole},
    {"d", "d", "hidden width [1, 65536]; random_weights [1, 4096]", SettingValue::whole},
    {"layers", "layers", "layers L [1, 48]", SettingValue::whole},
    {"alpha", "alpha", "input anisotropy [0, 1]", SettingValue::real},
    {"norm", "norm", "none | l2 | layernorm | rmsnorm", SettingValue::name},
    {"scale", "scale", "score scale: one | sqrt_d (1/sqrt(d)) | d (1/d)", SettingValue::name},
    {"gamma", "gamma", "residual strength [0, 1] (random_weights: default 1)", SettingValue::real},
    {"rope", "rope", "RoPE base theta; 0 = off, else [1, 1e9]", SettingValue::real},
    {"rope-scramble", "rope_scramble",
     "RoPE's frequency bands permuted over the dimensions by this seed; 0 = off (Ruscio et al.'s scrambled RoPE)",
     SettingValue::whole},
    {"mask", "mask", "causal | bidirectional | window:W", SettingValue::name},
    {"unit-input", "unit_input", "rescale inputs to unit norm (0 | 1)", SettingValue::name},
    {"heads", "heads", "attention heads H [1, 64]; d divisible by H", SettingValue::whole},
    {"vocab", "vocab", "vocabulary size V [1, 1e9]", SettingValue::whole},
    {"mlp", "mlp", "GELU MLP of width 4d in every block (0 | 1)", SettingValue::name},
    {"init-mean", "init_mean", "mean of every initial weight [-100, 100]", SettingValue::real},
    {"init-std", "init_std", "std of the initial weights [0, 100]; W_O, W_2 get std / sqrt(2 L)", SettingValue::real},
    {"embed-std", "embed_std", "std of the embedding table [0, 100] (default: init-std)", SettingValue::real},
    {"residual-mean", "residual_mean",
     "mean of W_O and W_2: init_mean (like every weight) | zero (NanoGPT's c_proj init as written)",
     SettingValue::name},
    {"hidden", "hidden",
     "hidden state measured in layers 1..L: block (the block's output) | attention (the attention sublayer's output)",
     SettingValue::name},
    {"weights", "weights", "per_sample (a new network every sample) | fixed (one network from --weight-seed)",
     SettingValue::name},
    {"weight-seed", "weight_seed", "seed of the fixed network [0, 2^64 - 1]", SettingValue::whole},
    {"pos-embedding", "pos_embedding",
     "none (NoPE) | learned (an absolute position table added to the embeddings, Zuo et al. Fig. 5)",
     SettingValue::name},
    {"pos-std", "pos_std",
     "std of the learned position table [0, 100] (default: the embedding std); needs pos-embedding learned",
     SettingValue::real},
    {"histograms", "histograms",
     "bins of the cosine-difference and per-sample adjacency / RP histograms (Zuo et al. Fig. 2, 13); 0 = off, "
     "else even in [2, 4096]",
     SettingValue::whole},
    {"stage-grams", "stage_grams",
     "Gram matrices (mean inner products and cosines) of every stage of each layer: input, Norm, q, k, A V, "
     "attention output, residual, MLP (0 | 1; docs/model.md section 12)",
     SettingValue::name},
    {"first-token", "first_token",
     "none (every position exchangeable) | fixed (position 0 shared by every sequence: parameter_free v / sqrt(d), "
     "random_weights a BOS token, id vocab)",
     SettingValue::name},
    {"tokens", "tokens",
     "random_weights: token sequences from FILE (one per line; sample s uses line s mod lines), or builtin:NAME "
     "(zuo-addition, zuo-reversal, zuo-indexing, zuo-ordering); empty = ids uniform over the vocabulary",
     SettingValue::name},
    {"tokens-format", "tokens_format",
     "ids (whole numbers separated by spaces) | chars (every character a token, id = ASCII code - 32)",
     SettingValue::name},
    {"samples", "samples", "Monte Carlo samples [1, 1e12]", SettingValue::whole},
    {"seed", "seed", "random seed [0, 2^64 - 1]", SettingValue::whole},
    {"threads", "threads", "worker threads [0, 256]; 0 = all cores", SettingValue::whole},
};

}  // namespace

nlohmann::json settings_to_json(const Settings& s) {
  return {
      {"n", s.n},
      {"d", s.d},
      {"layers", s.layers},
      {"alpha", s.alpha},
      {"norm", std::string(to_string(s.norm))},
      {"scale", std::string(to_string(s.scale))},
      {"gamma", s.gamma},
      {"rope", s.rope_base},
      {"rope_scramble", s.rope_scramble},
      {"mask", mask_to_string(s)},
      {"unit_input", s.unit_input},
      {"samples", s.samples},
      {"seed", s.seed},
      {"threads", s.threads},
      {"model", std::string(to_string(s.model))},
      {"heads", s.heads},
      {"vocab", s.vocab},
      {"mlp", s.mlp},
      {"init_mean", s.init_mean},
      {"init_std", s.init_std},
      {"embed_std", s.embed_std ? nlohmann::json(*s.embed_std) : nlohmann::json(nullptr)},
      {"residual_mean", std::string(to_string(s.residual_mean))},
      {"hidden", std::string(to_string(s.hidden))},
      {"weights", std::string(to_string(s.weights))},
      {"weight_seed", s.weight_seed},
      {"pos_embedding", std::string(to_string(s.pos_embedding))},
      {"pos_std", s.pos_std ? nlohmann::json(*s.pos_std) : nlohmann::json(nullptr)},
      {"histograms", s.histograms},
      {"stage_grams", s.stage_grams},
      {"first_token", std::string(to_string(s.first_token))},
      {"tokens", s.tokens.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.tokens)},  // null: uniform ids
      {"tokens_format", std::string(to_string(s.tokens_format))},
  };
}

void settings_from_json(const nlohmann::json& j, Settings& s, const std::string& where) {
  if (!j.is_object()) throw std::runtime_error(where + ": expected a JSON object of settings");
  Settings t = s;
  auto label = [&](const char* key) { return where.empty() ? std::string(key) : where + "." + key; };
  // Every number through the one strict conversion (strict_number.hpp): no wrapping, no clamping.
  auto whole = [&](const char* key, std::int64_t lo, std::int64_t hi) {
    return whole_number(label(key), j.at(key), lo, hi);
  };
  auto real = [&](const char* key, double lo, double hi) { return real_number(label(key), j.at(key), lo, hi); };
  auto text = [&](const char* key) {
    if (!j.at(key).is_string()) throw std::runtime_error(label(key) + ": " + number_text(j.at(key)) + " is not a name");
    return j.at(key).get<std::string>();
  };
  if (j.contains("n")) t.n = int(whole("n", Limits::n_min, Limits::n_max));
  if (j.contains("d")) t.d = int(whole("d", Limits::d_min, Limits::d_max));
  if (j.contains("layers")) t.layers = int(whole("layers", Limits::layers_min, Limits::layers_max));
  if (j.contains("alpha")) t.alpha = real("alpha", Limits::alpha_min, Limits::alpha_max);
  if (j.contains("gamma")) t.gamma = real("gamma", Limits::gamma_min, Limits::gamma_max);
  if (j.contains("rope")) t.rope_base = real("rope", 0.0, Limits::rope_base_max);
  if (j.contains("unit_input")) t.unit_input = boolean(label("unit_input"), j.at("unit_input"));
  if (j.contains("samples")) t.samples = whole("samples", Limits::samples_min, Limits::samples_max);
  if (j.contains("seed")) t.seed = whole_number_u64(label("seed"), j.at("seed"));
  if (j.contains("threads")) t.threads = int(whole("threads", Limits::threads_min, Limits::threads_max));
  if (j.contains("heads")) t.heads = int(whole("heads", Limits::heads_min, Limits::heads_max));
  if (j.contains("vocab")) t.vocab = whole("vocab", Limits::vocab_min, Limits::vocab_max);
  if (j.contains("mlp")) t.mlp = boolean(label("mlp"), j.at("mlp"));
  if (j.contains("stage_grams")) t.stage_grams = boolean(label("stage_grams"), j.at("stage_grams"));
  if (j.contains("init_mean")) t.init_mean = real("init_mean", -Limits::init_mean_max, Limits::init_mean_max);
  if (j.contains("init_std")) t.init_std = real("init_std", 0.0, Limits::init_std_max);
  if (j.contains("embed_std")) {
    if (j.at("embed_std").is_null()) t.embed_std.reset();  // null: follow init_std
    else t.embed_std = real("embed_std", 0.0, Limits::init_std_max);
  }
  if (j.contains("pos_std")) {
    if (j.at("pos_std").is_null()) t.pos_std.reset();  // null: follow the embedding std
    else t.pos_std = real("pos_std", 0.0, Limits::init_std_max);
  }
  if (j.contains("histograms")) t.histograms = int(whole("histograms", 0, Limits::histograms_max));
  if (j.contains("rope_scramble")) t.rope_scramble = whole_number_u64(label("rope_scramble"), j.at("rope_scramble"));
  if (j.contains("weight_seed")) t.weight_seed = whole_number_u64(label("weight_seed"), j.at("weight_seed"));
  // An enum setting by its name in the enum's one table (settings.hpp), or a message listing the names.
  auto named = [&](const char* key, const auto& table, auto& field) {
    if (!j.contains(key)) return;
    const std::string v = text(key);
    const auto parsed = enum_value(table, v);
    if (!parsed) throw std::runtime_error(label(key) + ": '" + v + "'; valid: " + enum_names_text(table));
    field = *parsed;
  };
  named("model", kModelNames, t.model);
  named("weights", kWeightsNames, t.weights);
  named("residual_mean", kResidualMeanNames, t.residual_mean);
  named("hidden", kHiddenStateNames, t.hidden);
  named("pos_embedding", kPosEmbeddingNames, t.pos_embedding);
  named("first_token", kFirstTokenNames, t.first_token);
  named("tokens_format", kTokensFormatNames, t.tokens_format);
  if (j.contains("tokens"))  // a path or builtin:NAME, checked by validate(); null: uniform ids
    t.tokens = j.at("tokens").is_null() ? std::string() : text("tokens");
  named("norm", kNormNames, t.norm);
  named("scale", kScaleNames, t.scale);
  if (j.contains("mask")) {
    const std::string v = text("mask");
    if (!parse_mask(v, t))
      throw std::runtime_error(label("mask") + ": '" + v +
                               "'; valid: causal, bidirectional, window:W with W in [1, n]");
  }
  s = t;
}

void setting_from_text(const std::string& key, const std::string& text, Settings& s) {
  nlohmann::json v;
  if (key == "norm" || key == "scale" || key == "mask" || key == "model" || key == "weights" ||
      key == "residual_mean" || key == "hidden" || key == "pos_embedding" || key == "first_token" || key == "tokens" ||
      key == "tokens_format")
    v = text;
  else if (key == "unit_input" || key == "mlp" || key == "stage_grams")
    v = text;  // boolean() reads "0", "1", "true", "false"
  else v = number_from_text(key, text);
  settings_from_json(nlohmann::json{{key, v}}, s, "");
}

const std::vector<std::string>& setting_keys() {
  static const std::vector<std::string> keys = [] {
    const nlohmann::json defaults = settings_to_json(Settings{});
    std::vector<std::string> k;
    for (auto it = defaults.begin(); it != defaults.end(); ++it) k.push_back(it.key());
    return k;
  }();
  return keys;
}

std::string setting_keys_text() {
  std::string text;
  for (const auto& k : setting_keys()) text += (text.empty() ? "" : ", ") + k;
  return text;
}

void apply_settings_json(const nlohmann::json& j, Settings& s, const std::string& where) {
  if (!j.is_object()) throw std::runtime_error(where + ": expected a JSON object of settings");
  const auto& keys = setting_keys();
  for (const auto& [key, value] : j.items())
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      throw std::runtime_error(where + ": unknown setting '" + key + "'; valid: " + setting_keys_text());
  const bool was_random_weights = s.random_weights();
  settings_from_json(j, s, where);
  apply_family_default_gamma(s, was_random_weights, j.contains("gamma"));
  // The window width means nothing without the sliding-window mask, and JSON does not carry it then.
  if (s.mask != MaskKind::window) s.window = Settings{}.window;
}

void check_object_keys(const nlohmann::json& j, const std::string& where, std::initializer_list<const char*> keys) {
  if (!j.is_object()) throw std::runtime_error(where + ": expected a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string key = it.key();
    if (std::none_of(keys.begin(), keys.end(), [&](const char* k) { return key == k; })) {
      std::string valid;
      for (const char* k : keys) valid += (valid.empty() ? "" : ", ") + std::string(k);
      throw std::runtime_error(where + ": unknown key '" + key + "'; valid: " + valid);
    }
  }
}

void apply_family_default_gamma(Settings& s, bool was_random_weights, bool gamma_given) {
  if (s.random_weights() && !was_random_weights && !gamma_given) s.gamma = 1.0;
}

std::span<const SettingFlag> setting_flags() { return kSettingFlags; }

const SettingFlag* setting_flag(const std::string& key) {
  for (const SettingFlag& f : kSettingFlags)
    if (key == f.key) return &f;
  return nullptr;
}

std::string setting_key_of(const std::string& name) {
  for (const SettingFlag& f : kSettingFlags)
    if (name == f.flag || name == f.key) return f.key;
  return "";
}

std::string default_text(const std::string& key) {
  const nlohmann::json defaults = settings_to_json(Settings{});
  if (!defaults.contains(key)) return "";
  const nlohmann::json& d = defaults.at(key);
  if (d.is_null()) return "";
  return d.is_string() ? d.get<std::string>() : d.is_boolean() ? (d.get<bool>() ? "1" : "0") : d.dump();
}

}  // namespace maskscope
