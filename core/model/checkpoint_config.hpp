// A checkpoint's config.json (docs/model.md, "Checkpoints"): Hugging Face GPT-2's keys (n_embd, n_layer, n_head,
// vocab_size, n_positions, activation_function, layer_norm_epsilon, ...) plus a "maskscope" object with the
// settings GPT-2 has no name for (NoPE, RoPE, BOS, norm kind, gamma, MLP on/off), read into Settings; where a
// checkpoint's tensors are (a file, or a run folder's step-NNNNNN.safetensors); and the rule that a checkpoint
// sets the model settings. The tensors themselves: core/train/checkpoint.hpp.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/settings.hpp"

namespace maskscope {

// GPT-2's LayerNorm epsilon, and maskscope's (kNormEps, docs/model.md section 7): a config with another is refused.
constexpr double kCheckpointLayerNormEps = 1e-5;

// Where a checkpoint is: its tensors, the config.json beside them, and its step (-1: a file not named step-N).
struct CheckpointLocation {
  std::string tensors, config;
  std::int64_t step = -1;
};
// "FILE.safetensors" (config.json in its folder), "DIR" (DIR/config.json and DIR/step-NNNNNN.safetensors: `step`, or
// the last when step is -1) or "DIR@STEP". Throws std::runtime_error naming the path, the steps there and what is
// valid.
CheckpointLocation locate_checkpoint(const std::string& path, std::int64_t step);
// The steps of a run folder's step-NNNNNN.safetensors files, ascending (empty for none).
std::vector<std::int64_t> checkpoint_steps(const std::string& folder);
// "DIR/step-000100.safetensors": a run folder's checkpoint name (6 digits at least).
std::string checkpoint_file_name(std::int64_t step);

// What a config.json says: the model settings (model random_weights, weights fixed, and the keys of
// checkpoint_model_keys()), GPT-2's table sizes and the GELU form.
struct CheckpointConfig {
  Settings model;
  int n_positions = 0;          // rows of transformer.wpe (learned positions); the longest sequence it was made for
  std::int64_t vocab_rows = 0;  // rows of transformer.wte: vocab, + 1 with a BOS token (first_token fixed, id vocab)
  bool gelu_tanh = true;        // activation_function gelu_new (tanh form, GPT-2's default); false: gelu (erf)
  bool written_by_maskscope = false;  // it has the "maskscope" object
  // A run folder of `maskscope-cli train` on one of Zuo et al.'s tasks (config.json's training.task): its
  // evaluation prompts (builtin:zuo-TASK) are the inputs a run of the checkpoint reads unless tokens are given.
  std::string task;
  // A run folder of `maskscope-cli train` at all (config.json has a training object), and for a run on a token file
  // that file and its format (training.tokens, training.tokens_format): the inputs the window shows its checkpoints on.
  bool training = false;
  std::string corpus;
  TokensFormat corpus_format = TokensFormat::ids;
};
// Parses a config.json; `name` names it in messages. Throws std::runtime_error for another model_type, a missing or
// out-of-range size, an activation, epsilon or layout maskscope does not compute (n_inner other than 4 n_embd,
// untied head, unscaled attention), or maskscope keys that contradict GPT-2's.
CheckpointConfig parse_checkpoint_config(const nlohmann::json& j, const std::string& name);
// Reads and parses a config.json through input_file.hpp, cached by path, modification time and size.
std::shared_ptr<const CheckpointConfig> load_checkpoint_config(const std::string& path);
// The config.json of a network with model settings `s` (n_positions: rows of its position table, or the sequence
// length it was made for without one).
nlohmann::json checkpoint_config_json(const Settings& s, int n_positions, bool gelu_tanh);

// The settings a checkpoint fixes (its config.json's): model, weights, d, layers, heads, vocab, norm, gamma, mlp,
// rope, rope_scramble, pos_embedding, first_token and the initialization's keys (provenance).
std::span<const char* const> checkpoint_model_keys();

// Sets s's model settings from s.checkpoint's config.json. With a task's run folder and neither tokens nor n given,
// the inputs are the task's evaluation prompts (tokens builtin:zuo-TASK as characters, n their length, + 1 with
// BOS). A key for which `given(key)` is true (the user set it)
// and whose value differs is an error naming both values; the others are set. Errors name "checkpoint" or the key.
// Nothing happens without a checkpoint.
std::vector<SettingError> apply_checkpoint_settings(Settings& s, const std::function<bool(std::string_view)>& given);
// For validate(): the checkpoint can be found, its config read, its model settings equal s's, s.n fits its position
// table, and step is used with a run folder only. Empty without a checkpoint.
std::vector<SettingError> check_checkpoint(const Settings& s);

}  // namespace maskscope
