// The training engine's step (docs/model.md, "Training"): a batch split into a fixed number of chunks that depends
// on the batch size only, each chunk's gradient computed on a worker thread (TrainPass), the chunks summed in a
// fixed binary tree over their index, then one AdamW update. So the parameters after any number of steps are the
// same bytes for any thread count, and for any split of the chunks over processes (MPI) that sums them in the
// same tree.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/kernel/network/random_weights.hpp"
#include "core/model/settings.hpp"
#include "core/train/batch.hpp"
#include "core/train/optimizer.hpp"
#include "core/train/train_pass.hpp"

namespace maskscope::train {

// The number of chunks a batch of `rows` sequences is cut into: min(rows, 8). Chunk c holds rows
// [c rows / C, (c + 1) rows / C).
int chunk_count(int rows);

struct StepResult {
  double loss = 0;       // the batch's mean loss before the update
  double grad_norm = 0;  // before clipping
  double lr = 0;
};

// How the chunks' gradients of a step are completed across processes: given the chunks this process computed
// (the others zero), makes every process hold every chunk's gradient (MPI: an all-gather), and the loss sums.
// Null: one process computes every chunk.
using ChunkExchange = std::function<void(std::vector<Network>& chunk_grads, std::vector<LossSum>& chunk_losses)>;

class Trainer {
 public:
  // The network s describes, initialized as initial_network(s) (step 0 = the drawn network), trained on batches
  // of `batch_rows` sequences with `threads` workers.
  Trainer(const Settings& s, const OptimizerSettings& o, int batch_rows, int threads);
  ~Trainer();

  const Network& parameters() const { return params_; }
  Network& parameters() { return params_; }
  AdamState& optimizer_state() { return adam_; }
  const AdamState& optimizer_state() const { return adam_; }
  std::int64_t step() const { return adam_.step; }

  // The chunks this process computes: [first, last) of chunk_count(batch_rows) (all of them by default).
  void set_chunk_range(int first, int last, ChunkExchange exchange);

  // One training step on `batch` (batch_rows sequences of s.n tokens): forward, backward, clip, AdamW.
  StepResult train_step(const TokenBatch& batch);

  // The loss (sum and count) of `batch` (any number of rows) without an update; `predicted` (optional, rows x n)
  // gets the argmax next token at every position.
  LossSum evaluate(const TokenBatch& batch, std::int32_t* predicted = nullptr);

  // Bytes a Trainer of these settings holds (parameters, gradients of every chunk, moments, activations).
  static std::size_t memory_bytes(const Settings& s, int batch_rows, int threads);

 private:
  Settings s_;
  OptimizerSettings opt_;
  int batch_rows_, threads_, chunks_;
  int first_chunk_ = 0, last_chunk_ = 0;
  ChunkExchange exchange_;
  Network params_;
  AdamState adam_;
  std::vector<Network> chunk_grads_;
  std::vector<std::unique_ptr<TrainPass>> passes_;  // one per worker
  int chunk_rows_;
};

}  // namespace maskscope::train
