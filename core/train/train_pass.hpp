// One forward and backward pass of the training engine on a chunk of token sequences (docs/model.md,
// "Training"): the random-weight network of section 7 plus a language-model head tied to the token embedding
// (logits = Norm_f(x) E^T, NanoGPT's tied weights), cross-entropy on the positions with a target. The forward
// pass runs the fixed-network kernel's own steps (random_weights_steps.hpp) and keeps the activations the
// backward pass needs, which is written beside it, step by step in reverse (llm.c's layout).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/kernel/network/random_weights.hpp"
#include "core/model/settings.hpp"

namespace maskscope::train {

// Sum of -log p(target) over the positions with a target (target != -1), and their number.
struct LossSum {
  double sum = 0;
  std::int64_t count = 0;
};

class TrainPass {
 public:
  // Activations for up to `max_rows` sequences of s.n tokens of the network s describes.
  TrainPass(const Settings& s, int max_rows);
  ~TrainPass();
  TrainPass(const TrainPass&) = delete;
  TrainPass& operator=(const TrainPass&) = delete;

  // The forward pass of `rows` sequences (tokens and targets rows x s.n, row-major) through `net`, keeping the
  // activations. `predicted` (optional, rows x n): the most likely next token at every position (the lowest id
  // on ties), the greedy answer's tokens given a right prefix.
  LossSum forward(const Network& net, const std::int32_t* tokens, const std::int32_t* targets, int rows,
                  std::int32_t* predicted = nullptr);
  // After forward: adds d(loss_scale * LossSum::sum) / d(parameter) into `grad` (zeros_like(net) or a sum in
  // progress): loss_scale 1 / (the batch's target count) makes it the gradient of the batch's mean loss.
  void backward(const Network& net, float loss_scale, Network& grad);

  // Floats of activations and scratch a TrainPass of `max_rows` sequences holds (the memory estimate).
  static std::size_t floats(const Settings& s, int max_rows);

  struct Buffers;

 private:
  std::unique_ptr<Buffers> b_;
};

}  // namespace maskscope::train
