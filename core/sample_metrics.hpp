// Per-sample pair counts behind the recency probability (LN-recency Sec. 3) and the
// adjacency probability score (Zuo et al. Sec. 4.1); shared by the simulation kernel and tests.
#pragma once

#include <cstdint>

#include "simd.hpp"

namespace maskscope {

// Number of pairs a < b in [lo, hi) with row[b] > row[a] strictly: the later (nearer) entry wins.
// Recency: row = S_i, range = the unmasked keys strictly below the diagonal.
// Adjacency: row = C_k, range = [0, k]; C_ka < C_kb for a < b.
// Reads up to 7 floats past row[hi - 1] (masked out): the row's buffer must have that slack.
[[gnu::always_inline]] inline std::int64_t ordered_pairs(const float* row, int lo, int hi) {
  using simd::f8;
  using simd::i8;
  const i8 lane = {0, 1, 2, 3, 4, 5, 6, 7};
  i8 wins = {};  // per-lane counts; at most n^2 / 8 each, far from overflow
  for (int b = lo + 1; b < hi; ++b) {
    const f8 vb = {row[b], row[b], row[b], row[b], row[b], row[b], row[b], row[b]};
    int a = lo;
    for (; a + 8 <= b; a += 8) wins -= simd::load(row + a) < vb;  // -1 where row[a] < row[b]
    if (a < b) wins -= ((lane + a) < b) & (simd::load(row + a) < vb);
  }
  return (wins[0] + wins[1]) + (wins[2] + wins[3]) + (wins[4] + wins[5]) + (wins[6] + wins[7]);
}

}  // namespace maskscope
