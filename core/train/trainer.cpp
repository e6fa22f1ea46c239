// The training step (trainer.hpp): chunks on worker threads, a fixed summation tree, AdamW.
#include "core/train/trainer.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/train/parallel.hpp"
#include "core/train/parameters.hpp"

namespace maskscope::train {

int chunk_count(int rows) { return std::clamp(rows, 1, 8); }

namespace {

int chunk_begin(int rows, int chunks, int c) { return int(std::int64_t(c) * rows / chunks); }

void set_zero(Network& g) {
  for_each_tensor(g, [](const std::string&, std::vector<float>& v, bool) { std::fill(v.begin(), v.end(), 0.0f); });
}

// grads[0] = the sum of every chunk's gradient in the fixed tree ((0 + 1) + (2 + 3)) + ((4 + 5) + (6 + 7)), element
// by element: the work is cut into blocks of 2^16 entries of a tensor handed to the threads, and each block runs the
// whole tree, so every entry is summed in the same order whatever thread sums it.
void tree_sum(std::vector<Network>& grads, int threads) {
  const int chunks = int(grads.size());
  std::vector<std::vector<float*>> tensors(grads.size());
  std::vector<std::size_t> sizes;
  for (std::size_t c = 0; c < grads.size(); ++c)
    for_each_tensor(grads[c], [&](const std::string&, std::vector<float>& v, bool) {
      tensors[c].push_back(v.data());
      if (c == 0) sizes.push_back(v.size());
    });
  const std::vector<TensorBlock> blocks = tensor_blocks(sizes);
  parallel_chunks(0, int(blocks.size()), threads, [&](int, int k) {
    const TensorBlock& b = blocks[std::size_t(k)];
    for (int stride = 1; stride < chunks; stride *= 2)
      for (int c = 0; c + stride < chunks; c += 2 * stride) {
        float* a = tensors[std::size_t(c)][b.tensor];
        const float* o = tensors[std::size_t(c + stride)][b.tensor];
        for (std::size_t e = b.begin; e < b.end; ++e) a[e] += o[e];
      }
  });
}

}  // namespace

Trainer::Trainer(const Settings& s, const OptimizerSettings& o, int batch_rows, int threads)
    : s_(s),
      opt_(o),
      batch_rows_(batch_rows),
      threads_(std::max(1, threads)),
      chunks_(chunk_count(batch_rows)),
      params_(initial_network(s)) {
  if (batch_rows < 1) throw std::invalid_argument("batch must be at least 1");
  last_chunk_ = chunks_;
  adam_.m = zeros_like(params_);
  adam_.v = zeros_like(params_);
  chunk_grads_.assign(std::size_t(chunks_), zeros_like(params_));
  chunk_rows_ = (batch_rows + chunks_ - 1) / chunks_;
}

Trainer::~Trainer() = default;

void Trainer::set_chunk_range(int first, int last, ChunkExchange exchange) {
  first_chunk_ = first;
  last_chunk_ = last;
  exchange_ = std::move(exchange);
}

std::size_t Trainer::memory_bytes(const Settings& s, int batch_rows, int threads) {
  const std::size_t d = std::size_t(s.d), L = std::size_t(s.layers);
  const std::size_t per_block = 3 * d * d + d * d + 3 * d + d + 4 * d + (s.mlp ? 8 * d * d + 5 * d + 4 * d : 0);
  const std::size_t params =
      (std::size_t(s.vocab) + 1) * d + (s.learned_positions() ? std::size_t(s.n) * d : 0) + L * per_block + 2 * d;
  const int chunks = chunk_count(batch_rows);
  const int rows = (batch_rows + chunks - 1) / chunks;
  const std::size_t workers = std::size_t(std::min(std::max(1, threads), chunks));
  // parameters, the two moments, one gradient per chunk, a drawn copy while initializing, activations per worker
  return sizeof(float) * (params * (4 + std::size_t(chunks)) + workers * TrainPass::floats(s, rows));
}

StepResult Trainer::train_step(const TokenBatch& batch) {
  if (batch.rows != batch_rows_ || batch.n != s_.n)
    throw std::invalid_argument("train_step: the batch has " + std::to_string(batch.rows) + " rows of " +
                                std::to_string(batch.n) + " tokens, the trainer " + std::to_string(batch_rows_) +
                                " of " + std::to_string(s_.n));
  std::int64_t count = 0;
  for (std::int32_t t : batch.targets) count += t >= 0 ? 1 : 0;
  const float scale = count > 0 ? float(1.0 / double(count)) : 0.0f;
  const int workers = std::min(threads_, std::max(1, last_chunk_ - first_chunk_));
  while (int(passes_.size()) < workers) passes_.push_back(std::make_unique<TrainPass>(s_, chunk_rows_));
  std::vector<LossSum> losses(static_cast<std::size_t>(chunks_));
  for (int c = 0; c < chunks_; ++c)  // the chunks another process computes (their gradients arrive by exchange_)
    if (c < first_chunk_ || c >= last_chunk_) set_zero(chunk_grads_[std::size_t(c)]);
  parallel_chunks(first_chunk_, last_chunk_, workers, [&](int worker, int c) {
    set_zero(chunk_grads_[std::size_t(c)]);
    const int r0 = chunk_begin(batch_rows_, chunks_, c), r1 = chunk_begin(batch_rows_, chunks_, c + 1);
    const std::size_t at = std::size_t(r0) * std::size_t(s_.n);
    TrainPass& pass = *passes_[std::size_t(worker)];
    losses[std::size_t(c)] = pass.forward(params_, batch.tokens.data() + at, batch.targets.data() + at, r1 - r0);
    pass.backward(params_, scale, chunk_grads_[std::size_t(c)]);
  });
  if (exchange_) exchange_(chunk_grads_, losses);
  // The fixed tree: ((0 + 1) + (2 + 3)) + ((4 + 5) + (6 + 7)), whatever computed the chunks.
  tree_sum(chunk_grads_, threads_);
  double loss_sum = 0;
  for (const LossSum& l : losses) loss_sum += l.sum;
  StepResult result;
  result.loss = count > 0 ? loss_sum / double(count) : 0.0;
  result.lr = learning_rate(opt_, adam_.step);
  result.grad_norm = adamw_update(opt_, result.lr, params_, chunk_grads_[0], adam_, threads_);
  return result;
}

LossSum Trainer::evaluate(const TokenBatch& batch, std::int32_t* predicted) {
  LossSum total;
  const int per = chunk_rows_;
  const int parts = (batch.rows + per - 1) / per;
  const int workers = std::min(threads_, std::max(1, parts));
  while (int(passes_.size()) < workers) passes_.push_back(std::make_unique<TrainPass>(s_, chunk_rows_));
  std::vector<LossSum> losses(static_cast<std::size_t>(parts));
  parallel_chunks(0, parts, workers, [&](int worker, int c) {
    const int r0 = c * per, r1 = std::min(batch.rows, r0 + per);
    const std::size_t at = std::size_t(r0) * std::size_t(batch.n);
    losses[std::size_t(c)] = passes_[std::size_t(worker)]->forward(
        params_, batch.tokens.data() + at, batch.targets.data() + at, r1 - r0, predicted ? predicted + at : nullptr);
  });
  for (const LossSum& l : losses) {
    total.sum += l.sum;
    total.count += l.count;
  }
  return total;
}

}  // namespace maskscope::train
