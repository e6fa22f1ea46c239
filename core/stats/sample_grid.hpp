// How a run's samples are cut into blocks (the unit of work a thread takes) and segments (a fixed
// run of blocks whose double sums are added exactly into the total, exact_sums.hpp). The grid
// depends only on the settings, so every process that computes a segment computes the same bits,
// and a shard, an MPI rank or a thread may take any range of whole segments.
#pragma once

#include <cstdint>
#include <string>

#include "core/model/settings.hpp"

namespace maskscope {

struct SampleGrid {
  std::int64_t samples = 0;
  std::int64_t block_size = 1;      // samples per block (samples_per_block)
  std::int64_t segment_blocks = 1;  // blocks per segment

  std::int64_t blocks() const { return (samples + block_size - 1) / block_size; }
  std::int64_t segments() const { return (blocks() + segment_blocks - 1) / segment_blocks; }
  std::int64_t first_block(std::int64_t segment) const { return std::min(blocks(), segment * segment_blocks); }
  std::int64_t first_sample(std::int64_t segment) const { return std::min(samples, first_block(segment) * block_size); }
};

SampleGrid sample_grid(const Settings& s);

// Segments [begin, end).
struct SegmentRange {
  std::int64_t begin = 0, end = 0;
  bool operator==(const SegmentRange&) const = default;
};

// Shard k (1-based) of `count` near-equal shards: segments [floor((k-1) G / N), floor(k G / N)).
// Requires 1 <= k <= count <= G (check with shard_error first).
SegmentRange shard_segments(const SampleGrid& g, std::int64_t k, std::int64_t count);
// "" when shard k of `count` is valid for this grid; else what is wrong and the valid range.
std::string shard_error(const SampleGrid& g, std::int64_t k, std::int64_t count);

}  // namespace maskscope
