// AdamW with linear warm-up and cosine decay, global-norm gradient clipping and decoupled weight decay on the 2-D
// tensors (docs/model.md, "Training"), as NanoGPT trains and torch.optim.AdamW computes it. Its state (the two
// moments) has the parameters' shape (parameters.hpp) and sits beside them.
#pragma once

#include <cstdint>

#include "core/kernel/network/random_weights.hpp"

namespace maskscope::train {

// NanoGPT's defaults (its shakespeare-char config, the closest small setting): lr 1e-3 warmed up linearly over
// `warmup` steps, then cosine decay to lr / 10 at the last step; betas 0.9, 0.99; weight decay 0.1; clip 1.0.
struct OptimizerSettings {
  double lr = 1e-3;
  double min_lr_ratio = 0.1;  // the cosine ends at lr * min_lr_ratio (NanoGPT: min_lr = lr / 10)
  std::int64_t warmup = 100;
  std::int64_t decay_steps = 5000;  // the step the cosine reaches its end (NanoGPT: lr_decay_iters = max_iters)
  double beta1 = 0.9, beta2 = 0.99, eps = 1e-8;
  double weight_decay = 0.1;
  double grad_clip = 1.0;  // 0: no clipping
};

// NanoGPT's get_lr at step `step` (0-based): lr (step + 1) / (warmup + 1) during the warm-up, then
// min + (lr - min) (1 + cos(pi t)) / 2 with t = (step - warmup) / (decay_steps - warmup), min after decay_steps.
double learning_rate(const OptimizerSettings& o, std::int64_t step);

struct AdamState {
  Network m, v;           // the first and second moments (zeros_like the parameters)
  std::int64_t step = 0;  // updates done
};

// The global L2 norm of the gradient: the squares of every entry summed in double, block by block of 2^16 entries
// (parallel.hpp) in for_each_tensor's order, then the blocks' sums in order.
double gradient_norm(const Network& grad);

// One AdamW update of `params` with `grad` at learning rate lr: the gradient scaled by min(1, clip / (norm +
// 1e-6)) when clip > 0 (torch.nn.utils.clip_grad_norm_), then torch.optim.AdamW's update (decoupled decay
// p *= 1 - lr wd on the tensors for_each_tensor marks, bias-corrected moments). Returns the gradient norm before
// clipping. On up to `threads` threads, with the same bits for any number.
double adamw_update(const OptimizerSettings& o, double lr, Network& params, Network& grad, AdamState& state,
                    int threads = 1);

}  // namespace maskscope::train
