// Block sums and their ordered merge into running moments.
#include "accumulator.hpp"

#include <algorithm>
#include <cmath>

namespace maskscope {

AccumLayout accum_layout(const Settings& s) {
  return s.random_weights() ? AccumLayout(s.n, s.layers, s.heads, true, s.mask, s.window)
                            : AccumLayout(s.n, s.layers, 1, false, s.mask, s.window);
}

void BlockSums::reset(std::size_t size) {
  count = 0;
  if (sum.size() == size) {
    std::fill(sum.begin(), sum.end(), 0.0);
    std::fill(sumsq.begin(), sumsq.end(), 0.0);
    return;
  }
  // New arrays: their memory is zero as allocated (BigAllocator), so nothing is written here. At
  // n 512 each is 12.6 MB, and a new run's first block would otherwise write them twice.
  sum = BigVector(size);
  sumsq = BigVector(size);
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
