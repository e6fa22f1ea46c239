// GPT-2-layout checkpoints: a Network <-> safetensors + config.json (checkpoint.hpp), and the network of
// `run --checkpoint` (checkpoint_network, declared by the kernel in random_weights.hpp).
#include "core/train/checkpoint.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <tuple>

#include "core/formats/atomic_file.hpp"
#include "core/model/input_file.hpp"

namespace maskscope {

namespace fs = std::filesystem;

namespace {

std::vector<std::int64_t> shape2(std::int64_t a, std::int64_t b) { return {a, b}; }

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t k = 0; k < shape.size(); ++k) out += (k ? ", " : "") + std::to_string(shape[k]);
  return out + "]";
}

std::vector<float> filled(std::size_t count, float value) { return std::vector<float>(count, value); }

bool has_norm_bias(Norm norm) { return norm == Norm::layernorm; }

// Gains and biases a GPT-2 file always carries: a norm's, for the norms that have them.
bool writes_norm(Norm norm, const std::vector<float>& gain) {
  return norm == Norm::layernorm || norm == Norm::rmsnorm || !gain.empty();
}

std::string block_name(int l, const char* rest) { return "transformer.h." + std::to_string(l) + "." + rest; }

// The name without Hugging Face's "transformer." prefix (its own gpt2 file has none).
std::string bare(const std::string& name) {
  constexpr std::string_view prefix = "transformer.";
  return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
}

bool is_mask_buffer(const std::string& name) {
  auto ends = [&](std::string_view tail) {
    return name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
  };
  return ends(".attn.bias") || ends(".attn.masked_bias");
}

bool all_equal(const std::vector<float>& v, float value) {
  return std::all_of(v.begin(), v.end(), [&](float x) { return x == value; });
}

}  // namespace

SafeTensorsFile checkpoint_tensors(const Network& net, const Settings& s) {
  const std::int64_t d = s.d;
  const std::size_t du = std::size_t(d);
  SafeTensorsFile f;
  auto add = [&](std::string name, std::vector<std::int64_t> shape, const std::vector<float>& data,
                 float absent = 0.0f) {
    std::size_t count = 1;
    for (const std::int64_t e : shape) count *= std::size_t(e);
    if (!data.empty() && data.size() != count)
      throw std::runtime_error("checkpoint: tensor '" + name + "' has " + std::to_string(data.size()) +
                               " values, its shape " + shape_text(shape) + " needs " + std::to_string(count));
    f.tensors.push_back({std::move(name), std::move(shape), data.empty() ? filled(count, absent) : data});
  };
  const std::int64_t rows = std::int64_t(net.embed.size() / du);
  add("transformer.wte.weight", shape2(rows, d), net.embed);
  if (!net.pos.empty()) add("transformer.wpe.weight", shape2(std::int64_t(net.pos.size() / du), d), net.pos);
  for (int l = 0; l < int(net.blocks.size()); ++l) {
    const Network::Block& b = net.blocks[std::size_t(l)];
    if (writes_norm(s.norm, b.ln1_gain)) {
      add(block_name(l, "ln_1.weight"), {d}, b.ln1_gain, 1.0f);
      if (has_norm_bias(s.norm) || !b.ln1_bias.empty()) add(block_name(l, "ln_1.bias"), {d}, b.ln1_bias);
    }
    add(block_name(l, "attn.c_attn.weight"), shape2(d, 3 * d), b.wqkv);
    add(block_name(l, "attn.c_attn.bias"), {3 * d}, b.bqkv);
    add(block_name(l, "attn.c_proj.weight"), shape2(d, d), b.wo);
    add(block_name(l, "attn.c_proj.bias"), {d}, b.bo);
    if (!b.w1.empty()) {
      if (writes_norm(s.norm, b.ln2_gain)) {
        add(block_name(l, "ln_2.weight"), {d}, b.ln2_gain, 1.0f);
        if (has_norm_bias(s.norm) || !b.ln2_bias.empty()) add(block_name(l, "ln_2.bias"), {d}, b.ln2_bias);
      }
      add(block_name(l, "mlp.c_fc.weight"), shape2(d, 4 * d), b.w1);
      add(block_name(l, "mlp.c_fc.bias"), {4 * d}, b.b1);
      add(block_name(l, "mlp.c_proj.weight"), shape2(4 * d, d), b.w2);
      add(block_name(l, "mlp.c_proj.bias"), {d}, b.b2);
    }
  }
  if (writes_norm(s.norm, net.lnf_gain)) {
    add("transformer.ln_f.weight", {d}, net.lnf_gain, 1.0f);
    if (has_norm_bias(s.norm) || !net.lnf_bias.empty()) add("transformer.ln_f.bias", {d}, net.lnf_bias);
  }
  f.metadata["format"] = "pt";  // as Hugging Face writes it: transformers' loader checks this key
  return f;
}

nlohmann::json checkpoint_config(const Network& net, const Settings& s) {
  const int n_positions = net.pos.empty() ? s.n : int(net.pos.size() / std::size_t(std::max(1, s.d)));
  return checkpoint_config_json(s, n_positions, net.activation == Activation::gelu_tanh);
}

bool save_checkpoint(const std::string& path, const Network& net, const Settings& s, std::string& error,
                     const nlohmann::json& extra) {
  SafeTensorsFile tensors;
  nlohmann::json config;
  try {
    tensors = checkpoint_tensors(net, s);
    config = checkpoint_config(net, s);
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
  if (extra.is_object())
    for (const auto& [key, value] : extra.items()) config[key] = value;
  const fs::path folder = fs::path(path).parent_path();
  const std::string config_path = ((folder.empty() ? fs::path(".") : folder) / "config.json").string();
  return write_safetensors(path, tensors, error) && write_file_atomic(config_path, config.dump(2) + "\n", error);
}

Network network_from_tensors(SafeTensorsFile&& file, const CheckpointConfig& config, const std::string& name) {
  const Settings& s = config.model;
  const std::int64_t d = s.d;
  const std::string where = printable(name, 200);
  std::map<std::string, SafeTensor*> by_name;
  for (SafeTensor& t : file.tensors) {
    if (is_mask_buffer(t.name)) continue;
    if (!by_name.emplace(t.name == "lm_head.weight" ? t.name : bare(t.name), &t).second)
      throw std::runtime_error(where + ": tensor '" + printable(t.name) +
                               "' appears twice (with and without "
                               "'transformer.')");
  }
  std::set<std::string> used;
  // Takes tensor `key` of `shape`: required, or (optional) empty when absent.
  auto take = [&](const std::string& key, const std::vector<std::int64_t>& shape, bool required = true) {
    const auto it = by_name.find(key);
    if (it == by_name.end()) {
      if (!required) return std::vector<float>{};
      throw std::runtime_error(where + ": tensor 'transformer." + key + "' " + shape_text(shape) +
                               " is missing; config.json (n_embd " + std::to_string(d) + ", n_layer " +
                               std::to_string(s.layers) + ") needs it in GPT2LMHeadModel's layout");
    }
    if (it->second->shape != shape)
      throw std::runtime_error(where + ": tensor '" + printable(it->second->name) + "' has shape " +
                               shape_text(it->second->shape) + "; config.json needs " + shape_text(shape));
    used.insert(key);
    return std::move(it->second->data);
  };
  // Gains of exactly 1 and biases of exactly 0 are the absent parameter (the forward pass skips them).
  auto gain = [](std::vector<float> v) { return all_equal(v, 1.0f) ? std::vector<float>{} : v; };
  auto bias = [](std::vector<float> v) { return all_equal(v, 0.0f) ? std::vector<float>{} : v; };
  const bool norm_tensors = s.norm == Norm::layernorm || s.norm == Norm::rmsnorm;
  const bool norm_bias = s.norm == Norm::layernorm;
  Network net;
  net.activation = config.gelu_tanh ? Activation::gelu_tanh : Activation::gelu_erf;
  net.embed = take("wte.weight", shape2(config.vocab_rows, d));
  if (s.learned_positions()) net.pos = take("wpe.weight", shape2(config.n_positions, d));
  net.blocks.resize(std::size_t(s.layers));
  for (int l = 0; l < s.layers; ++l) {
    Network::Block& b = net.blocks[std::size_t(l)];
    const std::string h = "h." + std::to_string(l) + ".";
    b.ln1_gain = gain(take(h + "ln_1.weight", {d}, norm_tensors));
    b.ln1_bias = bias(take(h + "ln_1.bias", {d}, norm_bias));
    b.wqkv = take(h + "attn.c_attn.weight", shape2(d, 3 * d));
    b.bqkv = bias(take(h + "attn.c_attn.bias", {3 * d}));
    b.wo = take(h + "attn.c_proj.weight", shape2(d, d));
    b.bo = bias(take(h + "attn.c_proj.bias", {d}));
    if (s.mlp) {
      b.ln2_gain = gain(take(h + "ln_2.weight", {d}, norm_tensors));
      b.ln2_bias = bias(take(h + "ln_2.bias", {d}, norm_bias));
      b.w1 = take(h + "mlp.c_fc.weight", shape2(d, 4 * d));
      b.b1 = bias(take(h + "mlp.c_fc.bias", {4 * d}));
      b.w2 = take(h + "mlp.c_proj.weight", shape2(4 * d, d));
      b.b2 = bias(take(h + "mlp.c_proj.bias", {d}));
    }
  }
  net.lnf_gain = gain(take("ln_f.weight", {d}, norm_tensors));
  net.lnf_bias = bias(take("ln_f.bias", {d}, norm_bias));
  if (const auto it = by_name.find("lm_head.weight"); it != by_name.end()) {
    const SafeTensor& head = *it->second;
    const bool same = head.shape == shape2(config.vocab_rows, d) && head.data.size() == net.embed.size() &&
                      std::memcmp(head.data.data(), net.embed.data(), net.embed.size() * sizeof(float)) == 0;
    if (!same)
      throw std::runtime_error(where +
                               ": tensor 'lm_head.weight' differs from 'transformer.wte.weight'; maskscope's "
                               "language-model head is tied to the token embedding (tie_word_embeddings)");
    used.insert("lm_head.weight");
  }
  for (const auto& [key, t] : by_name)
    if (!used.count(key))
      throw std::runtime_error(where + ": tensor '" + printable(t->name) +
                               "' is not part of GPT2LMHeadModel's layout for this config.json (n_layer " +
                               std::to_string(s.layers) + ", " + (s.mlp ? "with" : "without") + " MLP, " +
                               (s.learned_positions() ? "learned" : "no") + " positions, norm " +
                               std::string(to_string(s.norm)) + ")");
  return net;
}

Checkpoint load_checkpoint(const std::string& path, std::int64_t step, std::uint64_t max_memory_bytes) {
  Checkpoint c;
  c.location = locate_checkpoint(path, step);
  const std::shared_ptr<const CheckpointConfig> config = load_checkpoint_config(c.location.config);
  c.settings = config->model;
  c.n_positions = config->n_positions;
  const SafeTensorsHeader header = read_safetensors_header(c.location.tensors);
  std::uint64_t bytes = 0;
  for (const SafeTensorInfo& t : header.tensors)
    if (!is_mask_buffer(t.name)) bytes += std::uint64_t(t.elements) * sizeof(float);
  if (bytes > max_memory_bytes)
    throw std::runtime_error(printable(c.location.tensors, 200) + ": its tensors need " + byte_size_text(bytes) + " (" +
                             std::to_string(bytes) + " bytes) as float, over the checkpoint limit of " +
                             byte_size_text(max_memory_bytes));
  SafeTensorsFile file = read_safetensors(c.location.tensors, is_mask_buffer, max_memory_bytes);
  c.network = std::make_shared<const Network>(network_from_tensors(std::move(file), *config, c.location.tensors));
  return c;
}

// The kernel's fixed network when s.checkpoint is set (random_weights.hpp): loaded once per file version and
// shared; the last one stays loaded (a sweep over settings other than step reuses it).
std::shared_ptr<const Network> checkpoint_network(const Settings& s) {
  const CheckpointLocation loc = locate_checkpoint(s.checkpoint, s.step);
  struct stat st {};
  if (::stat(loc.tensors.c_str(), &st) != 0)
    throw std::runtime_error("checkpoint '" + printable(loc.tensors, 200) + "' cannot be read");
  using Key = std::tuple<std::string, std::int64_t, std::int64_t>;
  const Key key{fs::absolute(loc.tensors).lexically_normal().string(),
                std::int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec, std::int64_t(st.st_size)};
  static std::mutex mutex;
  static std::map<Key, std::weak_ptr<const Network>> cache;
  static std::shared_ptr<const Network> last;
  std::lock_guard lock(mutex);
  for (auto it = cache.begin(); it != cache.end();) it = it->second.expired() ? cache.erase(it) : std::next(it);
  if (auto found = cache.find(key); found != cache.end())
    if (auto net = found->second.lock()) return net;
  last.reset();  // free the previous network before loading the next
  Checkpoint c = load_checkpoint(loc.tensors);
  if (c.settings.d != s.d || c.settings.layers != s.layers || c.settings.vocab != s.vocab || c.settings.mlp != s.mlp)
    throw std::runtime_error("checkpoint '" + printable(loc.tensors, 200) +
                             "': its config.json differs from the run's model settings (d, layers, vocab, mlp)");
  cache[key] = c.network;
  last = c.network;
  return c.network;
}

}  // namespace maskscope
