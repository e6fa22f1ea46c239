// Exact, order-independent sums of a run's segments, so that a run split over threads, MPI ranks
// or shard files and merged in any order gives the same bits as one process.
//
// A segment (a fixed range of blocks, sample_grid.hpp) is summed in double, block after block, by
// whichever process computes it; its sums are then added here as 192-bit two's-complement
// fixed-point integers in units of 2^-100. Integer addition is exact and associative, so the total
// does not depend on how the segments were grouped. Means and M2 are read off the exact totals in
// long double (64-bit mantissa): M2 = S2 - S1^2 / N, with S1, S2 exact.
//
// Range: a segment's sum must have |x| < 2^48 (2.8e14) and be finite; anything else marks that
// value invalid (NaN in the results) instead of wrapping. Resolution 2^-100 (7.9e-31): a segment
// sum below that, such as a softmax weight under 1e-31 at every sample, counts as 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "core/stats/accumulator.hpp"
#include "core/stats/big_buffer.hpp"

namespace maskscope {

class ExactSums {
 public:
  static constexpr int kWordsPerValue = 6;  // sum (3 words, low first), then sum of squares (3 words)
  static constexpr int kFractionBits = 100;

  explicit ExactSums(std::size_t size = 0);
  ExactSums(const ExactSums& other);
  ExactSums& operator=(const ExactSums& other);
  ExactSums(ExactSums&&) noexcept = default;
  ExactSums& operator=(ExactSums&&) noexcept = default;

  std::size_t size() const { return invalid_.size(); }
  std::int64_t count() const { return count_; }
  // Adds a segment's double sums, exactly.
  void add(const BlockSums& segment);
  // Adds another process's exact sums (same size), exactly.
  void add(const ExactSums& other);
  // Means and M2 of everything added. `io` holds on input, in io.mean and io.m2, the sums (not
  // yet added here) of `pending_count` further samples, for a live picture mid-segment; pass
  // zeros and 0 for the exact result alone. Invalid values give NaN.
  void moments(RunMoments& io, std::int64_t pending_count) const;

  // The raw representation, for files and messages between processes.
  std::uint64_t* words() { return words_.get(); }
  const std::uint64_t* words() const { return words_.get(); }
  std::size_t word_count() const { return kWordsPerValue * size(); }
  std::vector<std::uint8_t>& invalid() { return invalid_; }
  const std::vector<std::uint8_t>& invalid() const { return invalid_; }
  void set_count(std::int64_t c) { count_ = c; }

 private:
  struct Free {
    std::size_t bytes;
    Free() noexcept : bytes(0) {}
    explicit Free(std::size_t b) noexcept : bytes(b) {}
    void operator()(std::uint64_t* p) const { big_free(p, bytes); }
  };
  std::int64_t count_ = 0;
  // big_zeroed_alloc'd: a large zero buffer costs no time until a segment is added (the kernel maps
  // zero pages, huge ones where it can).
  std::unique_ptr<std::uint64_t[], Free> words_;
  std::vector<std::uint8_t> invalid_;
};

// The exact fixed-point value of a 192-bit word triple, truncated to long double (tests, files).
long double exact_value(const std::uint64_t* words);
// Adds x to a word triple; false (nothing added) when x is not finite or |x| >= 2^48.
bool exact_add(std::uint64_t* words, double x);

}  // namespace maskscope
