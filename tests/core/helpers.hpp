// Shared helpers for the core tests: small runs with fixed seeds.
#pragma once

#include "core/run/runner.hpp"
#include "core/model/settings.hpp"

namespace maskscope::test {

// The LayerNorm-recency setting of LN-recency Sec. 3 (n 10, scale 1/sqrt(d), no residual).
inline Settings ln_recency(int d, double alpha, std::int64_t samples) {
  Settings s;
  s.n = 10;
  s.d = d;
  s.layers = 2;
  s.alpha = alpha;
  s.norm = Norm::layernorm;
  s.scale = Scale::sqrt_d;
  s.gamma = 0.0;
  s.samples = samples;
  s.seed = 12345;
  s.threads = 2;
  return s;
}

// The Behind-RoPE setting (l2, scale 1, residual on, unit inputs).
inline Settings behind_rope(int n, int d, double alpha, std::int64_t samples) {
  Settings s;
  s.n = n;
  s.d = d;
  s.layers = 2;
  s.alpha = alpha;
  s.norm = Norm::l2;
  s.scale = Scale::one;
  s.gamma = 1.0;
  s.unit_input = true;
  s.samples = samples;
  s.seed = 777;
  s.threads = 2;
  return s;
}

}  // namespace maskscope::test
