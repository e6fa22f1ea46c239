// Checkpoints in GPT-2's layout (docs/model.md, "Checkpoints"): a Network and its model settings as a safetensors
// file with Hugging Face GPT2LMHeadModel's tensor names and shapes, and a config.json beside it (GPT-2's keys plus a
// "maskscope" object, checkpoint_config.hpp). A run folder holds config.json and step-NNNNNN.safetensors files.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>

#include "core/formats/safetensors.hpp"
#include "core/kernel/network/random_weights.hpp"
#include "core/model/checkpoint_config.hpp"
#include "core/model/settings.hpp"

namespace maskscope {

// The floats one checkpoint may hold in memory (GPT-2 small: 124 M parameters, 0.5 GB; GPT-2 XL 1.6 B, 6.2 GB).
constexpr std::uint64_t kMaxCheckpointMemoryBytes = 8ull << 30;

// The tensors of `net` under GPT-2's names ("transformer.wte.weight" [V (+1 with BOS), d], "transformer.wpe.weight"
// [n_positions, d] with learned positions only, per block l "transformer.h.l.ln_1.weight" / ".bias" [d],
// ".attn.c_attn.weight" [d, 3d] (Conv1D's [in, out]: maskscope's row-major d x 3d as it is, W_Q | W_K | W_V) and
// ".bias" [3d], ".attn.c_proj.weight" [d, d] / ".bias", ".ln_2.*", ".mlp.c_fc.weight" [d, 4d] / ".bias" [4d],
// ".mlp.c_proj.weight" [4d, d] / ".bias", "transformer.ln_f.weight" / ".bias"; no "lm_head.weight": tied to wte,
// and Hugging Face's save_pretrained leaves tied tensors out too). A parameter the network lacks (a drawn network's
// gains and biases) is written as GPT-2 holds it: LayerNorm gains 1 and biases 0, linear biases 0. RMSNorm has
// gains only; l2 and none write no norm tensors unless the network has gains. `s` gives the model settings.
SafeTensorsFile checkpoint_tensors(const Network& net, const Settings& s);
// config.json for `net` and `s` (checkpoint_config_json with the network's position rows and GELU form).
nlohmann::json checkpoint_config(const Network& net, const Settings& s);

// Writes `path` (a .safetensors file) and config.json in its folder (the config with `extra`'s keys merged in at
// the top level, e.g. the training run's), each through the atomic writer. False and `error` on failure.
bool save_checkpoint(const std::string& path, const Network& net, const Settings& s, std::string& error,
                     const nlohmann::json& extra = nlohmann::json::object());

// The network of a GPT-2-layout file given its config: every tensor GPT2LMHeadModel has for that config must be
// there (with or without the "transformer." prefix, as Hugging Face's own gpt2 file omits it), with its shape;
// "lm_head.weight" may be there if it equals wte; the causal-mask buffers ".attn.bias" / ".attn.masked_bias" are
// skipped; anything else is refused. Gains of exactly 1 and biases of exactly 0 throughout a tensor are kept as
// absent (the same network; the forward pass skips them). Throws std::runtime_error naming the tensor.
Network network_from_tensors(SafeTensorsFile&& file, const CheckpointConfig& config, const std::string& name);

struct Checkpoint {
  Settings settings;  // the model settings of config.json (checkpoint_model_keys), other settings default
  std::shared_ptr<const Network> network;
  CheckpointLocation location;
  int n_positions = 0;
};
// Opens a checkpoint: "FILE.safetensors", "DIR" (the last step), "DIR@STEP", or DIR with `step`. The memory its
// floats need is computed from the header and refused over `max_memory_bytes` before any tensor is read. Throws
// std::runtime_error (SafetensorsError, InputFileError) naming the file and the tensor and first bad index at fault.
Checkpoint load_checkpoint(const std::string& path, std::int64_t step = -1,
                           std::uint64_t max_memory_bytes = kMaxCheckpointMemoryBytes);

}  // namespace maskscope
