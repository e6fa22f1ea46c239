// The block and segment grid of a run (sample_grid.hpp).
#include "core/stats/sample_grid.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "core/stats/accumulator.hpp"
#include "core/model/cost.hpp"

namespace maskscope {

SampleGrid sample_grid(const Settings& s) {
  SampleGrid g;
  g.samples = s.samples;
  g.block_size = samples_per_block(s);
  // Adding a segment exactly costs about 10 ns per value, so a segment spans enough blocks (about 1e7
  // multiply-adds each) to keep that near 1% of the work: one block up to 256 values per layer (n <= 12
  // causal), up to 64 blocks from n 74. (512 values a block until version 0.2.0: the lane kernel's blocks take
  // less time than their 1e7 multiply-adds suggest, and folding was 2.7% at n 50.) Per layer, not in
  // total, so layer l's bits do not depend on the layers after it.
  // Without the stage Gram matrices: turning them on must not regroup the blocks (the other sums' bits).
  Settings without_stages = s;
  without_stages.stage_grams = false;
  const std::uint64_t per_layer = accum_layout(without_stages).per_layer;
  g.segment_blocks = std::clamp<std::int64_t>(std::int64_t(std::bit_ceil((per_layer + 255) / 256)), 1, 64);
  if (s.random_weights() && s.weights == WeightsMode::fixed) {
    // A fixed network's block is a batch of samples, far more than 1e7 multiply-adds per layer: as many
    // blocks as keep the fold near 1% of their work, usually one.
    Settings one = s;
    one.layers = 1;
    const double block_work = double(g.block_size) * sample_cost(one);
    const double blocks = std::ceil(double(per_layer) * 1e7 / 256.0 / std::max(1.0, block_work));
    g.segment_blocks = std::clamp<std::int64_t>(std::int64_t(std::bit_ceil(std::uint64_t(blocks))), 1, 64);
  }
  return g;
}

SegmentRange shard_segments(const SampleGrid& g, std::int64_t k, std::int64_t count) {
  __extension__ typedef __int128 i128;
  const i128 G = g.segments();
  return {std::int64_t(G * (k - 1) / count), std::int64_t(G * k / count)};
}

std::string shard_error(const SampleGrid& g, std::int64_t k, std::int64_t count) {
  if (count < 1) return "N = " + std::to_string(count) + " shards: N must be at least 1";
  if (k < 1 || k > count)
    return "K = " + std::to_string(k) + " is out of range; valid: K in [1, N] = [1, " + std::to_string(count) + "]";
  if (count > g.segments())
    return "N = " + std::to_string(count) + " shards is more than this run's " + std::to_string(g.segments()) +
           " segments of " + std::to_string(g.segment_blocks * g.block_size) + " samples; valid: N in [1, " +
           std::to_string(g.segments()) + "] (or more samples)";
  return "";
}

}  // namespace maskscope
