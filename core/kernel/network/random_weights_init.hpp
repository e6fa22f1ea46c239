// GPT-2's initialization for the random-weight transformer (docs/model.md section 7): the standard
// deviations of its weights and the draws of entries and token ids, shared by the fixed network
// (random_weights_network.cpp) and the per-sample draws of the forward pass (random_weights.cpp).
// Internal to core/.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "core/model/settings.hpp"
#include "core/random/random_stream.hpp"

namespace maskscope::rw {

// Uniform integer in [0, v) (Lemire's multiply-shift; bias below v / 2^64).
inline std::int64_t uniform_below(SampleStream& rng, std::int64_t v) {
  __extension__ typedef unsigned __int128 u128;
  return static_cast<std::int64_t>((static_cast<u128>(rng.next()) * static_cast<std::uint64_t>(v)) >> 64);
}

// Fills out[0..count) with mu + s N(0, 1).
inline void draw_entries(SampleStream& rng, float mu, float s, float* out, std::size_t count) {
  rng.normals(out, count);
  for (std::size_t k = 0; k < count; ++k) out[k] = mu + s * out[k];
}

// Means and standard deviations of GPT-2's initialization (docs/model.md section 7): `mean` for E, W_QKV
// and W_1, `residual_mean` for the residual projections W_O and W_2 (0 with ResidualMean::zero).
struct InitStd {
  float mean, std, residual_std, embed_std, residual_mean, pos_std;
};
inline InitStd init_of(const Settings& s) {
  return {static_cast<float>(s.init_mean),
          static_cast<float>(s.init_std),
          static_cast<float>(s.init_std / std::sqrt(2.0 * s.layers)),
          static_cast<float>(s.embedding_std()),
          s.residual_mean == ResidualMean::zero ? 0.0f : static_cast<float>(s.init_mean),
          static_cast<float>(s.position_std())};
}

}  // namespace maskscope::rw
