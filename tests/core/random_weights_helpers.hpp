// Settings of the random-weight model shared by its core tests (test_random_weights.cpp,
// test_random_weights_batched.cpp).
#pragma once

#include <cstdint>

#include "core/model/settings.hpp"

namespace maskscope::test {

// A random-weight decoder, residual on, seed 2024, 2 threads.
inline Settings random_weights(int n, int d, int heads, int layers, std::int64_t samples) {
  Settings s;
  s.model = Model::random_weights;
  s.n = n;
  s.d = d;
  s.heads = heads;
  s.layers = layers;
  s.gamma = 1.0;
  s.samples = samples;
  s.seed = 2024;
  s.threads = 2;
  return s;
}

}  // namespace maskscope::test
