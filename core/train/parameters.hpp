// The parameters the training engine trains (docs/model.md, "Training"): a Network (random_weights.hpp) with
// every optional tensor present, step 0 being the drawn network of `--weights fixed`, and the one list of its
// tensors (name, values, whether weight decay applies) that gradients, the optimizer and its state walk.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/kernel/network/random_weights.hpp"
#include "core/model/settings.hpp"

namespace maskscope::train {

// Whether the settings' Norm carries a gain (every norm but none) and a bias (LayerNorm only; RMSNorm and the
// l2 norm scale a row and have no shift, as RMSNorm has none in the papers that use it).
inline bool norm_has_gain(Norm norm) { return norm != Norm::none; }
inline bool norm_has_bias(Norm norm) { return norm == Norm::layernorm; }

// fixed_network(s) (the network `run --model random_weights --weights fixed` draws from s.weight_seed) with
// gains 1 and biases 0 stored explicitly (NanoGPT's bias=True): the forward pass gives its bits at step 0.
Network initial_network(const Settings& s);

// Every trained tensor of `net` in a fixed order (embedding, positions, blocks in order, ln_f), with its GPT-2
// name and whether AdamW decays it (NanoGPT: the 2-D tensors, matrices and embeddings; not gains or biases).
template <class Net, class F>
void for_each_tensor(Net& net, F&& f) {
  f("wte", net.embed, true);
  if (!net.pos.empty()) f("wpe", net.pos, true);
  for (std::size_t l = 0; l < net.blocks.size(); ++l) {
    auto& b = net.blocks[l];
    const std::string h = "h." + std::to_string(l) + ".";
    f(h + "ln_1.weight", b.ln1_gain, false);
    f(h + "ln_1.bias", b.ln1_bias, false);
    f(h + "attn.c_attn.weight", b.wqkv, true);
    f(h + "attn.c_attn.bias", b.bqkv, false);
    f(h + "attn.c_proj.weight", b.wo, true);
    f(h + "attn.c_proj.bias", b.bo, false);
    f(h + "ln_2.weight", b.ln2_gain, false);
    f(h + "ln_2.bias", b.ln2_bias, false);
    f(h + "mlp.c_fc.weight", b.w1, true);
    f(h + "mlp.c_fc.bias", b.b1, false);
    f(h + "mlp.c_proj.weight", b.w2, true);
    f(h + "mlp.c_proj.bias", b.b2, false);
  }
  f("ln_f.weight", net.lnf_gain, false);
  f("ln_f.bias", net.lnf_bias, false);
}

// A network of `like`'s shape with every present tensor zero (gradients, the optimizer's moments).
Network zeros_like(const Network& like);

// The number of trained values.
std::size_t parameter_count(const Network& net);

}  // namespace maskscope::train
