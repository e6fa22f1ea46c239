// The forward pass of docs/model.md section 2 on Monte Carlo inputs of section 1, and the
// accumulation of section 3 for one block of samples.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/stats/accumulator.hpp"
#include "core/random/random_stream.hpp"
#include "core/model/rope.hpp"
#include "core/kernel/kernel_choice.hpp"
#include "core/model/input_basis.hpp"
#include "core/model/key_ranges.hpp"
#include "core/model/settings.hpp"
#include "core/model/trace.hpp"

namespace maskscope {

struct Network;
struct SampleWork;
class RandomWeightsModel;
class LaneKernel;

// How Simulator::simulate_block runs a block (outside the class so that `= {}` can default it).
struct SimulateBlockOptions {
  // A block of one sample on the per-sample kernel stores no squares (BlockSums::squares_implied);
  // other blocks store them as usual.
  bool implied_squares = false;
  // The per-sample kernel's first sample of the block counts its later rows' pairs on a second
  // thread (for a core that is idle anyway: a new run's first sample). The same bits.
  bool split_first_sample = false;
  // Adds the samples to `sums` instead of resetting it: `sums` holds the samples just before them in
  // the same block, from earlier calls. The same bits as one call over the whole range when each
  // earlier call's count is a multiple of kBlockPartSamples (the lane kernel's batches start where
  // they would). The parameter-free model only (a stepped run's slices, runner.hpp); not random weights.
  bool append = false;
};

// The part a block may be computed in with SimulateBlockOptions::append (two 8-lane batches, one 16-lane).
constexpr std::int64_t kBlockPartSamples = 16;

class Simulator {
 public:
  using Kernel = KernelChoice;
  // s must be valid. `explicit_inputs` draws all d coordinates even where the reduced basis
  // (InputBasis) applies: the same law, for tests that compare the two.
  // `network`: a given network (trained or loaded, core/train/) in place of the one fixed weights draw from
  // s.weight_seed; s.weights must be fixed and the network must have s's shape.
  explicit Simulator(const Settings& s, bool explicit_inputs = false, Kernel kernel = Kernel::automatic,
                     std::shared_ptr<const Network> network = nullptr);
  bool uses_lanes() const { return lanes_ != nullptr; }
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  const AccumLayout& layout() const { return layout_; }

  using BlockOptions = SimulateBlockOptions;
  // Runs samples first_sample .. first_sample + count - 1 into `sums` (which it resets first).
  // Returns false, leaving `sums` partial, if `cancel` became true.
  bool simulate_block(std::uint64_t first_sample, std::int64_t count, BlockSums& sums,
                      const std::atomic<bool>* cancel = nullptr, BlockOptions options = {});

  // Sample `sample` of the run, with every intermediate.
  SampleTrace trace_sample(std::uint64_t sample);
  // Samples first_sample .. first_sample + count - 1, each with every intermediate (tests; the position
  // probes' hidden states).
  std::vector<SampleTrace> trace_block(std::uint64_t first_sample, std::int64_t count);

  // Number of (i, k, j) triples the recency probability counts per sample.
  std::int64_t recency_triples() const { return keys_.recency_triples; }

  // The drawn network of random_weights with fixed weights; nullptr otherwise.
  const Network* network() const;

 private:
  Settings s_;
  InputBasis basis_;
  AccumLayout layout_;
  KeyRanges keys_;
  RopeTables rope_;
  std::vector<ChiLaw> chi_laws_;                        // KernelArgs::chi_laws
  std::unique_ptr<SampleWork> work_;                    // parameter_free
  std::unique_ptr<LaneKernel> lanes_;                   // parameter_free where use_lane_kernel
  std::unique_ptr<RandomWeightsModel> random_weights_;  // random_weights
};

}  // namespace maskscope
