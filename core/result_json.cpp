// Serialisation of settings and snapshots; non-finite numbers (masked entries) become null.
#include "result_json.hpp"

#include "strict_number.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace maskscope {

namespace {

nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json matrix(const Map& m, int n) {
  nlohmann::json rows = nlohmann::json::array();
  for (int i = 0; i < n; ++i) {
    nlohmann::json row = nlohmann::json::array();
    for (int j = 0; j < n; ++j) row.push_back(number_or_null(m(i, j)));
    rows.push_back(std::move(row));
  }
  return rows;
}

// MODEL.md section 8's keys of one map's leakage.
void add_leakage(nlohmann::json& out, const Leakage& k) {
  out["delta_r2"] = number_or_null(k.delta_r2);
  out["delta_r2_se"] = number_or_null(k.delta_r2_se);
  out["delta_r2_mean_map"] = number_or_null(k.delta_r2_mean_map);
  out["r2_base"] = number_or_null(k.r2_base);
  nlohmann::json bins = nlohmann::json::array();
  for (const LeakageBin& b : k.bins) bins.push_back({{"from", b.from}, {"to", b.to}, {"delta_r2", number_or_null(b.delta_r2)}});
  out["delta_r2_bins"] = std::move(bins);
}

nlohmann::json vector_json(const std::vector<double>& v) {
  nlohmann::json out = nlohmann::json::array();
  for (double x : v) out.push_back(number_or_null(x));
  return out;
}

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
      {"weights", std::string(to_string(s.weights))},
      {"weight_seed", s.weight_seed},
  };
}

void settings_from_json(const nlohmann::json& j, Settings& s, const std::string& where) {
  if (!j.is_object()) throw std::runtime_error(where + ": expected a JSON object of settings");
  Settings t = s;
  auto label = [&](const char* key) { return where.empty() ? std::string(key) : where + "." + key; };
  // Every number through the one strict conversion (strict_number.hpp): no wrapping, no clamping.
  auto whole = [&](const char* key, std::int64_t lo, std::int64_t hi) { return whole_number(label(key), j.at(key), lo, hi); };
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
  if (j.contains("init_mean")) t.init_mean = real("init_mean", -Limits::init_mean_max, Limits::init_mean_max);
  if (j.contains("init_std")) t.init_std = real("init_std", 0.0, Limits::init_std_max);
  if (j.contains("embed_std")) {
    if (j.at("embed_std").is_null()) t.embed_std.reset();  // null: follow init_std
    else t.embed_std = real("embed_std", 0.0, Limits::init_std_max);
  }
  if (j.contains("rope_scramble")) t.rope_scramble = whole_number_u64(label("rope_scramble"), j.at("rope_scramble"));
  if (j.contains("weight_seed")) t.weight_seed = whole_number_u64(label("weight_seed"), j.at("weight_seed"));
  if (j.contains("model")) {
    const std::string v = text("model");
    auto parsed = parse_model(v);
    if (!parsed) throw std::runtime_error(label("model") + ": '" + v + "'; valid: parameter_free, random_weights");
    t.model = *parsed;
  }
  if (j.contains("weights")) {
    const std::string v = text("weights");
    auto parsed = parse_weights(v);
    if (!parsed) throw std::runtime_error(label("weights") + ": '" + v + "'; valid: per_sample, fixed");
    t.weights = *parsed;
  }
  if (j.contains("norm")) {
    const std::string v = text("norm");
    auto parsed = parse_norm(v);
    if (!parsed) throw std::runtime_error(label("norm") + ": '" + v + "'; valid: none, l2, layernorm, rmsnorm");
    t.norm = *parsed;
  }
  if (j.contains("scale")) {
    const std::string v = text("scale");
    auto parsed = parse_scale(v);
    if (!parsed) throw std::runtime_error(label("scale") + ": '" + v + "'; valid: one, sqrt_d, d");
    t.scale = *parsed;
  }
  if (j.contains("mask")) {
    const std::string v = text("mask");
    if (!parse_mask(v, t))
      throw std::runtime_error(label("mask") + ": '" + v + "'; valid: causal, bidirectional, window:W with W in [1, n]");
  }
  s = t;
}

void setting_from_text(const std::string& key, const std::string& text, Settings& s) {
  nlohmann::json v;
  if (key == "norm" || key == "scale" || key == "mask" || key == "model" || key == "weights") v = text;
  else if (key == "unit_input" || key == "mlp") v = text;  // boolean() reads "0", "1", "true", "false"
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
  // Choosing the random-weight family without a residual strength gives it its default, 1 (a GPT-2
  // block; MODEL.md section 7), as the CLI's --model does.
  if (s.random_weights() && !was_random_weights && !j.contains("gamma")) s.gamma = 1.0;
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

nlohmann::json snapshot_to_json(const Snapshot& snap) {
  const int n = snap.settings.n;
  const bool rw = snap.settings.random_weights();
  nlohmann::json layers = nlohmann::json::array();
  for (const LayerStats& l : snap.layers) {
    nlohmann::json& layer = layers.emplace_back(nlohmann::json{
        {"layer", l.layer},
        {"rp", number_or_null(l.recency)},
        {"rp_se", number_or_null(l.recency_se)},
        {"rp_ties", number_or_null(l.recency_ties)},
        {"adjacency", number_or_null(l.adjacency)},
        {"adjacency_se", number_or_null(l.adjacency_se)},
        {"adjacency_ties", number_or_null(l.adjacency_ties)},
        {"score_mean", matrix(l.score_mean, n)},
        {"score_se", matrix(l.score_se, n)},
        {"weight_mean", matrix(l.weight_mean, n)},
        {"weight_se", matrix(l.weight_se, n)},
        {"cosine_mean", matrix(l.cosine_mean, n)},
        {"score_diag_normalized", matrix(l.score_diag_normalized, n)},
        {"score_diag_normalized_q01", number_or_null(l.score_diag_q01)},
        {"score_diag_normalized_q99", number_or_null(l.score_diag_q99)},
        {"norm_mean", vector_json(l.norm_mean)},
        {"norm_se", vector_json(l.norm_se)},
    });
    add_leakage(layer, l.leakage);
    layer["weight_delta_r2"] = number_or_null(l.weight_leakage.delta_r2);
    layer["weight_delta_r2_se"] = number_or_null(l.weight_leakage.delta_r2_se);
    if (rw) {  // MODEL.md section 7: norm adjacency and each head's recency probability
      layer["norm_adjacency"] = number_or_null(l.norm_adjacency);
      layer["norm_adjacency_se"] = number_or_null(l.norm_adjacency_se);
      layer["norm_adjacency_ties"] = number_or_null(l.norm_adjacency_ties);
      nlohmann::json heads = nlohmann::json::array();
      for (const HeadStats& h : l.heads)
        heads.push_back({{"rp", number_or_null(h.recency)}, {"rp_se", number_or_null(h.recency_se)},
                         {"rp_ties", number_or_null(h.recency_ties)}, {"delta_r2", number_or_null(h.leakage.delta_r2)},
                         {"delta_r2_se", number_or_null(h.leakage.delta_r2_se)}});
      layer["heads"] = std::move(heads);
    }
  }
  nlohmann::json out = {
      {"config", settings_to_json(snap.settings)},
      {"samples", snap.samples_done},
      {"elapsed_s", snap.elapsed_s},
      {"samples_per_s", snap.samples_per_s},
      {"finished", snap.finished},
      {"layers", std::move(layers)},
  };
  if (!snap.embeddings.empty()) {  // layer 0 of the random-weight family
    const LayerStats& e = snap.embeddings.front();
    out["embeddings"] = {
        {"adjacency", number_or_null(e.adjacency)},
        {"adjacency_se", number_or_null(e.adjacency_se)},
        {"adjacency_ties", number_or_null(e.adjacency_ties)},
        {"norm_adjacency", number_or_null(e.norm_adjacency)},
        {"norm_adjacency_se", number_or_null(e.norm_adjacency_se)},
        {"norm_adjacency_ties", number_or_null(e.norm_adjacency_ties)},
        {"cosine_mean", matrix(e.cosine_mean, n)},
        {"norm_mean", vector_json(e.norm_mean)},
        {"norm_se", vector_json(e.norm_se)},
    };
  }
  return out;
}

}  // namespace maskscope
