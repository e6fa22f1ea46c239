// The forward pass of MODEL.md section 2 on Monte Carlo inputs of section 1, and the
// accumulation of section 3 for one block of samples.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "accumulator.hpp"
#include "settings.hpp"

namespace maskscope {

// Every intermediate of one sample, for tests and inspection (row-major, NaN where masked).
struct LayerTrace {
  std::vector<float> normalized;  // Y = Norm(X), n x d
  std::vector<float> scores;      // S, n x n
  std::vector<float> weights;     // A, n x n (0 where masked)
  std::vector<float> output;      // X' = A Y + gamma X, n x d
  double recency = 0;             // this sample's recency probability (NaN if no triple)
  double adjacency = 0;           // this sample's adjacency score (NaN if n < 2)
};
struct SampleTrace {
  std::vector<float> input;  // X^(0), n x d
  std::vector<LayerTrace> layers;
};

// Samples per block: fixed by the settings (never by timing or threads) so the block
// streams and the merge order, hence the results, do not depend on the thread count.
std::int64_t samples_per_block(const Settings& s);

class Simulator {
 public:
  explicit Simulator(const Settings& s);  // s must be valid
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  const AccumLayout& layout() const { return layout_; }

  // Runs `count` samples of block `block` into `sums` (which it resets first).
  // Returns false, leaving `sums` partial, if `cancel` became true.
  bool simulate_block(std::uint64_t block, std::int64_t count, BlockSums& sums,
                      const std::atomic<bool>* cancel = nullptr);

  // The sample at `index` within `block`, with every intermediate.
  SampleTrace trace_sample(std::uint64_t block, std::int64_t index);

  // Row ranges of the mask: query i sees keys lo(i) <= j <= hi(i).
  int key_lo(int i) const { return lo_[i]; }
  int key_hi(int i) const { return hi_[i]; }
  // Number of (i, k, j) triples the recency probability counts per sample.
  std::int64_t recency_triples() const { return triples_; }

 struct Work;  // per-simulator scratch buffers (opaque)

 private:
  Settings s_;
  AccumLayout layout_;
  std::vector<int> lo_, hi_;
  std::vector<float> rope_cos_, rope_sin_;  // n x d/2
  std::int64_t triples_ = 0;
  Work* work_;
};

}  // namespace maskscope
