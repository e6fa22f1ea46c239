// The training engine's thread helpers (trainer.cpp, optimizer.cpp): work items handed out in order to up to
// `threads` threads, and a network's tensors cut into fixed blocks, so that a result summed block by block in block
// order has the same bits for any thread count. Internal to core/train/.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace maskscope::train {

// Runs f(worker, c) for c in [first, last) on up to `threads` threads (c handed out in order; each c's work is its
// own).
template <class F>
void parallel_chunks(int first, int last, int threads, F&& f) {
  std::atomic<int> next{first};
  auto work = [&](int worker) {
    for (int c = next++; c < last; c = next++) f(worker, c);
  };
  std::vector<std::thread> pool;
  const int count = std::min(threads, last - first);
  for (int t = 1; t < count; ++t) pool.emplace_back(work, t);
  work(0);
  for (auto& t : pool) t.join();
}

// Entries [begin, end) of tensor `tensor` (an index into a list of tensors).
struct TensorBlock {
  std::size_t tensor, begin, end;
};

// The tensors of sizes `sizes` cut into blocks of at most 2^16 entries, in tensor order.
inline std::vector<TensorBlock> tensor_blocks(const std::vector<std::size_t>& sizes) {
  constexpr std::size_t kBlock = std::size_t(1) << 16;
  std::vector<TensorBlock> blocks;
  for (std::size_t t = 0; t < sizes.size(); ++t)
    for (std::size_t b = 0; b < sizes[t]; b += kBlock) blocks.push_back({t, b, std::min(sizes[t], b + kBlock)});
  return blocks;
}

}  // namespace maskscope::train
