// Block sums and their ordered merge into running moments.
#include "core/stats/accumulator.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "core/model/stages.hpp"

namespace maskscope {

AccumLayout accum_layout(const Settings& s) {
  return s.random_weights() ? AccumLayout(s.n, s.layers, s.heads, true, s.mask, s.window, s.histograms, stage_bits(s))
                            : AccumLayout(s.n, s.layers, 1, false, s.mask, s.window, 0, stage_bits(s));
}

void BlockSums::reset(std::size_t size) {
  count = 0;
  // Arrays of another size (or none: a block with implied squares has no sumsq) are new ones, whose
  // memory is zero as allocated (BigAllocator), so nothing is written there. At n 512 each is
  // 12.6 MB, and a new run's first block would otherwise write them twice.
  if (sum.size() == size) std::fill(sum.begin(), sum.end(), 0.0);
  else sum = BigVector(size);
  if (sumsq.size() == size) std::fill(sumsq.begin(), sumsq.end(), 0.0);
  else sumsq = BigVector(size);
}

[[gnu::optimize("-ffp-contract=off")]] void squares_of(const BigVector& v, BigVector& out) {
  out.resize(v.size());  // every element is written below
  for (std::size_t k = 0; k < v.size(); ++k) out[k] = v[k] * v[k];
}

// Without contraction: b's implied squares are rounded products, as stored ones would have been,
// before they are added (a fused multiply-add would round once and change the last bit).
[[gnu::optimize("-ffp-contract=off")]] void BlockSums::add(const BlockSums& b) {
  const std::size_t n = sum.size();
  if (squares_implied()) squares_of(sum, sumsq);  // a run's first block, taken with its squares implied: due now
  if (b.sum.size() != n || sumsq.size() != n || (!b.squares_implied() && b.sumsq.size() != n))
    throw std::logic_error("BlockSums::add: size mismatch");
  for (std::size_t k = 0; k < n; ++k) sum[k] += b.sum[k];
  if (b.squares_implied()) {
    for (std::size_t k = 0; k < n; ++k) {
      const double sq = b.sum[k] * b.sum[k];
      sumsq[k] += sq;
    }
  } else {
    for (std::size_t k = 0; k < n; ++k) sumsq[k] += b.sumsq[k];
  }
  count += b.count;
}

[[gnu::optimize("-ffp-contract=off")]] void BlockSums::take(BlockSums& b) {
  if (b.squares_implied() && sumsq.empty()) {
    // This holds no arrays (a run's open segment before its first block): it takes b's values and
    // keeps the squares implied. At n 512 forming them would write 12.6 MB of fresh memory on a new
    // run's first picture's path; the next add forms them.
    std::swap(sum, b.sum);
  } else if (b.squares_implied()) {
    squares_of(b.sum, sumsq);
    std::swap(sum, b.sum);
  } else {
    std::swap(sum, b.sum);
    std::swap(sumsq, b.sumsq);  // a segment's first block is its sum (0 + x = x; block sums are never -0)
  }
  std::swap(count, b.count);
}

void RunMoments::merge(const BlockSums& block) {
  if (block.count == 0) return;
  const double nb = static_cast<double>(block.count);
  const double na = static_cast<double>(count);
  const double total = na + nb;
  const double wb = nb / total;
  const double cross = na * nb / total;
  const std::size_t size = mean.size();
  for (std::size_t k = 0; k < size; ++k) {
    const double mean_b = block.sum[k] / nb;
    const double m2_b = std::max(0.0, block.sumsq[k] - block.sum[k] * mean_b);
    const double delta = mean_b - mean[k];
    mean[k] += delta * wb;
    m2[k] += m2_b + delta * delta * cross;
  }
  count += block.count;
}

}  // namespace maskscope
