// GPT-2-layout checkpoints (core/train/checkpoint.hpp, core/model/checkpoint_config.hpp): a network round trip with
// explicit gains and biases, a drawn network written in GPT-2's full layout and read back as the same network,
// Hugging Face's names and shapes, run folders and steps, GPT-2's own config.json, and every broken checkpoint
// refused naming the tensor.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "core/formats/atomic_file.hpp"
#include "core/model/input_file.hpp"
#include "core/model/settings_text.hpp"
#include "core/random/random_stream.hpp"
#include "core/train/checkpoint.hpp"
#include "random_weights_helpers.hpp"

using namespace maskscope;
namespace fs = std::filesystem;

namespace {

Settings small_network(bool mlp, bool learned, bool bos) {
  Settings s = test::random_weights(6, 16, 2, 2, 100);
  s.weights = WeightsMode::fixed;
  s.weight_seed = 77;
  s.vocab = 11;
  s.mlp = mlp;
  if (learned) s.pos_embedding = PosEmbedding::learned;
  if (bos) s.first_token = FirstToken::fixed;
  return s;
}

// Fills v with `count` draws of N(mean, 0.1^2) (explicit trained-looking parameters).
void draw(std::vector<float>& v, std::size_t count, float mean, std::uint64_t which) {
  SampleStream rng(99, which);
  v.resize(count);
  rng.normals(v.data(), count);
  for (float& x : v) x = mean + 0.1f * x;
}

Network with_parameters(const Network& drawn, int d) {
  Network net = drawn;
  std::uint64_t k = 0;
  const std::size_t du = std::size_t(d);
  for (Network::Block& b : net.blocks) {
    draw(b.ln1_gain, du, 1.0f, k++);
    draw(b.ln1_bias, du, 0.0f, k++);
    draw(b.bqkv, 3 * du, 0.0f, k++);
    draw(b.bo, du, 0.0f, k++);
    if (!b.w1.empty()) {
      draw(b.ln2_gain, du, 1.0f, k++);
      draw(b.ln2_bias, du, 0.0f, k++);
      draw(b.b1, 4 * du, 0.0f, k++);
      draw(b.b2, du, 0.0f, k++);
    }
  }
  draw(net.lnf_gain, du, 1.0f, k++);
  draw(net.lnf_bias, du, 0.0f, k++);
  net.activation = Activation::gelu_tanh;
  return net;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  // memcmp's pointers may not be null even for 0 bytes (UBSan): empty vectors compare by size alone.
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

void check_same(const Network& a, const Network& b) {
  CHECK(same_bits(a.embed, b.embed));
  CHECK(same_bits(a.pos, b.pos));
  REQUIRE(a.blocks.size() == b.blocks.size());
  for (std::size_t l = 0; l < a.blocks.size(); ++l) {
    const Network::Block &x = a.blocks[l], &y = b.blocks[l];
    for (auto m :
         {&Network::Block::wqkv, &Network::Block::wo, &Network::Block::w1, &Network::Block::w2,
          &Network::Block::ln1_gain, &Network::Block::ln1_bias, &Network::Block::ln2_gain, &Network::Block::ln2_bias,
          &Network::Block::bqkv, &Network::Block::bo, &Network::Block::b1, &Network::Block::b2})
      CHECK(same_bits(x.*m, y.*m));
  }
  CHECK(same_bits(a.lnf_gain, b.lnf_gain));
  CHECK(same_bits(a.lnf_bias, b.lnf_bias));
  CHECK(a.activation == b.activation);
}

std::string fresh_folder(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("maskscope_ckpt_" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

std::string load_error(const std::string& path) {
  try {
    load_checkpoint(path);
  } catch (const std::exception& e) { return e.what(); }
  return "";
}

}  // namespace

TEST_CASE("checkpoint: a network with explicit gains and biases round-trips bit for bit, with its settings") {
  for (const bool mlp : {true, false})
    for (const bool learned : {false, true}) {
      CAPTURE(mlp);
      CAPTURE(learned);
      const Settings s = small_network(mlp, learned, learned);  // BOS with learned positions
      const Network net = with_parameters(*fixed_network(s), s.d);
      const std::string folder = fresh_folder("roundtrip");
      const std::string path = folder + "/step-000000.safetensors";
      std::string error;
      REQUIRE_MESSAGE(save_checkpoint(path, net, s, error, {{"train", {{"lr", 0.001}}}}), error);
      const Checkpoint c = load_checkpoint(folder);
      CHECK(c.location.step == 0);
      check_same(*c.network, net);
      const nlohmann::json mine = settings_to_json(s), theirs = settings_to_json(c.settings);
      for (const char* key : checkpoint_model_keys()) CHECK_MESSAGE(mine[key] == theirs[key], key);
      // The config: GPT-2's keys, maskscope's own, and the caller's.
      std::ifstream in(folder + "/config.json");
      const nlohmann::json config = nlohmann::json::parse(in);
      CHECK(config["model_type"] == "gpt2");
      CHECK(config["n_embd"] == 16);
      CHECK(config["n_layer"] == 2);
      CHECK(config["n_head"] == 2);
      CHECK(config["vocab_size"] == (learned ? 12 : 11));  // + BOS
      CHECK(config["n_positions"] == 6);
      CHECK(config["activation_function"] == "gelu_new");
      CHECK(config["layer_norm_epsilon"] == 1e-5);
      CHECK(config["tie_word_embeddings"] == true);
      CHECK(config["maskscope"]["settings"]["pos_embedding"] == (learned ? "learned" : "none"));
      CHECK(config["train"]["lr"] == 0.001);
    }
}

TEST_CASE("checkpoint: GPT-2's names and shapes (Conv1D [in, out] = maskscope's row-major d_in x d_out)") {
  const Settings s = small_network(true, true, false);
  const auto held = fixed_network(s);
  const Network& net = *held;
  const SafeTensorsFile f = checkpoint_tensors(net, s);
  const std::int64_t d = 16;
  auto shape = [&](const char* name) {
    const SafeTensor* t = f.find(name);
    REQUIRE_MESSAGE(t != nullptr, name);
    return t->shape;
  };
  CHECK(shape("transformer.wte.weight") == std::vector<std::int64_t>{11, d});
  CHECK(shape("transformer.wpe.weight") == std::vector<std::int64_t>{6, d});
  CHECK(shape("transformer.h.1.ln_1.weight") == std::vector<std::int64_t>{d});
  CHECK(shape("transformer.h.1.attn.c_attn.weight") == std::vector<std::int64_t>{d, 3 * d});
  CHECK(shape("transformer.h.1.attn.c_attn.bias") == std::vector<std::int64_t>{3 * d});
  CHECK(shape("transformer.h.1.attn.c_proj.weight") == std::vector<std::int64_t>{d, d});
  CHECK(shape("transformer.h.1.mlp.c_fc.weight") == std::vector<std::int64_t>{d, 4 * d});
  CHECK(shape("transformer.h.1.mlp.c_proj.weight") == std::vector<std::int64_t>{4 * d, d});
  CHECK(shape("transformer.ln_f.bias") == std::vector<std::int64_t>{d});
  CHECK(f.find("lm_head.weight") == nullptr);  // tied: left out, as save_pretrained does
  // Row i of c_attn.weight is input coordinate i: x W as maskscope computes it, W_Q's column 0 at [i, 0], W_K's at
  // [i, d], W_V's at [i, 2d].
  const SafeTensor* w = f.find("transformer.h.0.attn.c_attn.weight");
  CHECK(w->data[3 * 48 + 17] == net.blocks[0].wqkv[3 * 48 + 17]);
  // A drawn network's absent parameters are written as GPT-2 holds them: gains 1, biases 0.
  CHECK(f.find("transformer.h.0.ln_1.weight")->data == std::vector<float>(16, 1.0f));
  CHECK(f.find("transformer.h.0.mlp.c_fc.bias")->data == std::vector<float>(64, 0.0f));
  // ... and read back as absent: the very network that was drawn.
  const std::string folder = fresh_folder("drawn");
  std::string error;
  REQUIRE(save_checkpoint(folder + "/net.safetensors", net, s, error));
  const Checkpoint c = load_checkpoint(folder + "/net.safetensors");
  CHECK(c.location.step == -1);
  check_same(*c.network, net);
  CHECK(c.network->blocks[0].ln1_gain.empty());
  CHECK(c.network->lnf_bias.empty());
  CHECK(c.network->activation == Activation::gelu_erf);
}

TEST_CASE("checkpoint: run folders, steps and DIR@STEP") {
  const Settings s = small_network(false, false, false);
  const auto held = fixed_network(s);
  const Network& net = *held;
  const std::string folder = fresh_folder("steps");
  std::string error;
  for (const int step : {0, 10, 200})
    REQUIRE(save_checkpoint(folder + "/" + checkpoint_file_name(step), net, s, error));
  CHECK(checkpoint_steps(folder) == std::vector<std::int64_t>{0, 10, 200});
  CHECK(locate_checkpoint(folder, -1).step == 200);
  CHECK(locate_checkpoint(folder, 10).tensors == folder + "/step-000010.safetensors");
  CHECK(locate_checkpoint(folder + "@0", -1).step == 0);
  CHECK_THROWS_WITH_AS(locate_checkpoint(folder, 5), doctest::Contains("has no step 5; its steps: 0, 10, 200"),
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(locate_checkpoint(folder + "@10", 200), doctest::Contains("give one of them"),
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(locate_checkpoint(folder + "/step-000010.safetensors", 10),
                       doctest::Contains("step applies to a run folder"), std::runtime_error);
  CHECK_THROWS_WITH_AS(locate_checkpoint(folder + "/none", -1), doctest::Contains("does not exist"),
                       std::runtime_error);
}

TEST_CASE("checkpoint: the settings come from config.json; a contradicting one is refused naming both values") {
  const Settings drawn = small_network(true, false, false);
  const std::string folder = fresh_folder("settings");
  std::string error;
  REQUIRE(save_checkpoint(folder + "/step-000000.safetensors", *fixed_network(drawn), drawn, error));
  Settings s;  // the defaults: parameter-free, d 64
  s.checkpoint = folder;
  s.n = 6;
  CHECK(apply_checkpoint_settings(s, [](std::string_view) { return false; }).empty());
  CHECK(s.random_weights());
  CHECK(s.weights == WeightsMode::fixed);
  CHECK(s.d == 16);
  CHECK(s.heads == 2);
  CHECK(s.vocab == 11);
  CHECK(s.weight_seed == 77);
  CHECK(validate(s).empty());
  Settings t;
  t.checkpoint = folder;
  t.d = 32;
  const auto errors = apply_checkpoint_settings(t, [](std::string_view key) { return key == "d"; });
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].setting == "d");
  CHECK(errors[0].message.find("d = 32 contradicts the checkpoint's config.json, which has d = 16") !=
        std::string::npos);
  // validate() refuses settings that differ from the config, and a step that is not there.
  s.heads = 4;
  REQUIRE_FALSE(validate(s).empty());
  CHECK(validate(s)[0].setting == "heads");
  s.heads = 2;
  s.step = 3;
  CHECK(validate(s)[0].message.find("has no step 3") != std::string::npos);
}

TEST_CASE("checkpoint: GPT-2's own config.json is read as GPT-2 (learned positions, LayerNorm, gelu_new)") {
  const nlohmann::json gpt2 = {{"activation_function", "gelu_new"},
                               {"architectures", {"GPT2LMHeadModel"}},
                               {"attn_pdrop", 0.1},
                               {"bos_token_id", 50256},
                               {"embd_pdrop", 0.1},
                               {"eos_token_id", 50256},
                               {"initializer_range", 0.02},
                               {"layer_norm_epsilon", 1e-05},
                               {"model_type", "gpt2"},
                               {"n_ctx", 1024},
                               {"n_embd", 768},
                               {"n_head", 12},
                               {"n_layer", 12},
                               {"n_positions", 1024},
                               {"resid_pdrop", 0.1},
                               {"vocab_size", 50257}};
  const CheckpointConfig c = parse_checkpoint_config(gpt2, "config.json");
  CHECK(c.model.d == 768);
  CHECK(c.model.layers == 12);
  CHECK(c.model.heads == 12);
  CHECK(c.model.vocab == 50257);
  CHECK(c.n_positions == 1024);
  CHECK(c.gelu_tanh);
  CHECK(c.model.learned_positions());
  CHECK(c.model.norm == Norm::layernorm);
  CHECK(c.model.gamma == 1.0);
  CHECK_FALSE(c.model.fixed_first_token());
  nlohmann::json bad = gpt2;
  bad["model_type"] = "llama";
  CHECK_THROWS_WITH_AS(parse_checkpoint_config(bad, "c.json"), doctest::Contains("model_type \"llama\""),
                       std::runtime_error);
  bad = gpt2;
  bad["layer_norm_epsilon"] = 1e-6;
  CHECK_THROWS_WITH_AS(parse_checkpoint_config(bad, "c.json"), doctest::Contains("layer_norm_epsilon"),
                       std::runtime_error);
  bad = gpt2;
  bad.erase("n_embd");
  CHECK_THROWS_WITH_AS(parse_checkpoint_config(bad, "c.json"), doctest::Contains("lacks n_embd"), std::runtime_error);
  bad = gpt2;
  bad["activation_function"] = "relu";
  CHECK_THROWS_WITH_AS(parse_checkpoint_config(bad, "c.json"), doctest::Contains("activation_function 'relu'"),
                       std::runtime_error);
  bad = gpt2;
  bad["n_head"] = 7;
  CHECK_THROWS_WITH_AS(parse_checkpoint_config(bad, "c.json"), doctest::Contains("not divisible"), std::runtime_error);
  // GPT-2 small's floats fit the checkpoint cap: 124 M parameters.
  const std::uint64_t params = 50257ull * 768 + 1024ull * 768 + 12ull * (12ull * 768 * 768 + 13ull * 768) + 2 * 768;
  CHECK(params * 4 < kMaxCheckpointMemoryBytes);
}

TEST_CASE("checkpoint: missing tensors, wrong shapes, strangers, an untied head and non-finite values are refused") {
  const Settings s = small_network(true, false, false);
  const auto held = fixed_network(s);
  const Network& net = *held;
  const std::string folder = fresh_folder("broken");
  const std::string path = folder + "/net.safetensors";
  std::string error;
  REQUIRE(save_checkpoint(path, net, s, error));
  const SafeTensorsFile good = checkpoint_tensors(net, s);
  auto write = [&](const SafeTensorsFile& f) { REQUIRE(write_safetensors(path, f, error)); };
  SafeTensorsFile f = good;
  f.tensors.erase(f.tensors.begin() + 3);  // h.0.attn.c_attn.weight... whichever is fourth
  const std::string missing_name = good.tensors[3].name;
  write(f);
  CHECK(load_error(path).find("tensor '" + missing_name + "'") != std::string::npos);
  CHECK(load_error(path).find("is missing") != std::string::npos);
  f = good;
  for (SafeTensor& t : f.tensors)
    if (t.name == "transformer.h.1.attn.c_proj.weight") t.shape = {8, 32};
  write(f);
  CHECK(load_error(path).find("tensor 'transformer.h.1.attn.c_proj.weight' has shape [8, 32]; config.json needs "
                              "[16, 16]") != std::string::npos);
  f = good;
  f.tensors.push_back({"transformer.h.2.attn.c_attn.weight", {16, 48}, std::vector<float>(768, 0.0f)});
  write(f);
  CHECK(load_error(path).find("tensor 'transformer.h.2.attn.c_attn.weight' is not part of GPT2LMHeadModel") !=
        std::string::npos);
  // lm_head: accepted when equal to wte, refused otherwise.
  f = good;
  f.tensors.push_back({"lm_head.weight", {11, 16}, net.embed});
  write(f);
  CHECK(load_error(path).empty());
  f.tensors.back().data[5] += 1.0f;
  write(f);
  CHECK(load_error(path).find("'lm_head.weight' differs") != std::string::npos);
  // Hugging Face's own file: no "transformer." prefix, and the causal-mask buffers (skipped).
  f = good;
  for (SafeTensor& t : f.tensors) t.name = t.name.substr(std::string("transformer.").size());
  f.tensors.push_back({"h.0.attn.bias", {1, 1, 6, 6}, std::vector<float>(36, 1.0f)});
  write(f);
  CHECK(load_error(path).empty());
  // A non-finite value: the tensor and its first bad index.
  std::string bytes = safetensors_bytes(good);
  const SafeTensorsHeader h = parse_safetensors_header(bytes, bytes.size(), "mem");
  for (const SafeTensorInfo& t : h.tensors)
    if (t.name == "transformer.h.0.mlp.c_fc.weight") {
      const float inf = std::numeric_limits<float>::infinity();
      std::memcpy(bytes.data() + h.data_start + t.begin + (2 * 64 + 5) * 4, &inf, 4);
    }
  REQUIRE(write_file_atomic(path, bytes, error));
  CHECK(load_error(path).find("tensor 'transformer.h.0.mlp.c_fc.weight' holds a non-finite value (inf) at index "
                              "[2, 5]") != std::string::npos);
  // The memory estimate refuses before reading.
  write(good);
  CHECK_THROWS_WITH_AS(load_checkpoint(path, -1, 1000), doctest::Contains("over the checkpoint limit"),
                       std::runtime_error);
  // A folder without config.json.
  fs::remove(folder + "/config.json");
  CHECK(load_error(path).find("config.json") != std::string::npos);
}
