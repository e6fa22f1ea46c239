// The work of one sample and the block size that follows from it (cost.hpp).
#include "core/model/cost.hpp"

#include <algorithm>
#include <bit>

namespace maskscope {

double sample_cost(const Settings& s) {
  const double n = s.n, d = s.d;
  if (!s.random_weights()) return n * d * (1.0 + s.layers * (n + 4.0));
  // Per block: attention 2 n^2 d, plus the products of the 3d + d (+ 4d + d with the MLP) output
  // columns: fixed weights n d per column; per-sample draws a Gram matrix and n^2 + 5 n
  // (the normals) per column (random_weights.cpp).
  const double columns = s.mlp ? 9.0 * d : 4.0 * d;
  const double per_layer = s.weights == WeightsMode::fixed
                               ? n * (s.mlp ? 12.0 : 4.0) * d * d
                               : 0.5 * n * n * (s.mlp ? 7.0 : 2.0) * d + (n * n + 5.0 * n) * columns;
  return n * d + s.layers * (2.0 * n * n * d + per_layer);
}

double forward_flops(const Settings& s) {
  if (!s.random_weights()) return 0.0;
  const double n = s.n, d = s.d;
  return s.layers * (2.0 * n * d * (s.mlp ? 12.0 : 4.0) * d + 4.0 * n * n * d);
}

int fixed_batch_samples(const Settings& s) {
  Settings one = s;
  one.layers = 1;
  const double by_rows = 384.0 / std::max(1, s.n), by_work = 2e9 / std::max(1.0, forward_flops(one));
  const double b = std::clamp(std::min(by_rows, by_work), 1.0, 32.0);
  return int(std::bit_floor(static_cast<unsigned>(b)));
}

std::int64_t samples_per_block(const Settings& s) {
  // A fixed random-weight network: one batch of its products (version 0.4.0; one sample until then).
  if (s.random_weights() && s.weights == WeightsMode::fixed) return fixed_batch_samples(s);
  // About 1e7 multiply-adds per block and layer: a few milliseconds of work, so snapshots refresh
  // often and a new run's first picture waits for little (n 256: two samples, 7 ms), while the
  // per-block merge stays a few percent. The number of layers is left out, so layer l's sums (not
  // only its samples) are the same whatever follows.
  Settings one = s;
  one.layers = 1;
  const double target = 1e7 / std::max(1.0, sample_cost(one));
  if (target < 1.0) return 1;
  const std::int64_t p = std::int64_t(1) << (63 - std::countl_zero(static_cast<std::uint64_t>(target)));
  return std::clamp<std::int64_t>(p, 1, 4096);
}

}  // namespace maskscope
