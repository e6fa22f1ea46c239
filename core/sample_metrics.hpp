// Per-sample pair counts behind the recency probability (LN-recency Sec. 3) and the
// adjacency probability score (Zuo et al. Sec. 4.1 and App. A); shared by the kernel and tests.
#pragma once

#include <cstdint>

#include "simd.hpp"

namespace maskscope {

// Over the pairs a < b in [lo, hi): `wins` where the later (nearer) entry is strictly larger,
// row[b] > row[a], and `ties` where row[b] == row[a]. MODEL.md section 4 counts a tie as 1/2.
struct PairCounts {
  std::int64_t wins = 0, ties = 0;
  // Wins with ties counted 1/2, in half units (an integer): 2 wins + ties.
  std::int64_t half_units() const { return 2 * wins + ties; }
};

// Recency: row = S_i, range = the unmasked keys strictly below the diagonal.
// Adjacency: row = C_k, range = [0, k) (the diagonal C_kk = 1 left out); C_ka < C_kb for a < b.
// Reads up to 7 floats past row[hi - 1] (masked out): the row's buffer must have that slack.
[[gnu::always_inline]] inline PairCounts ordered_pairs(const float* row, int lo, int hi) {
  using simd::f8;
  using simd::i8;
  const i8 lane = {0, 1, 2, 3, 4, 5, 6, 7};
  i8 wins = {}, ties = {};  // per-lane counts; at most n^2 / 8 each, far from overflow
  for (int b = lo + 1; b < hi; ++b) {
    const f8 vb = {row[b], row[b], row[b], row[b], row[b], row[b], row[b], row[b]};
    int a = lo;
    for (; a + 8 <= b; a += 8) {
      const f8 va = simd::load(row + a);
      wins -= va < vb;  // -1 where row[a] < row[b]
      ties -= va == vb;
    }
    if (a < b) {
      const i8 inside = (lane + a) < b;
      const f8 va = simd::load(row + a);
      wins -= inside & (va < vb);
      ties -= inside & (va == vb);
    }
  }
  auto total = [](i8 v) { return std::int64_t((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7])); };
  return {total(wins), total(ties)};
}

}  // namespace maskscope
