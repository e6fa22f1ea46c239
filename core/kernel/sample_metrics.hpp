// Per-sample pair counts behind the recency probability (LN-recency Sec. 3) and the
// adjacency probability score (Zuo et al. Sec. 4.1 and App. A); shared by the kernel and tests.
#pragma once

#include <cstdint>

#include "core/kernel/simd.hpp"
#include "core/stats/float_resolution.hpp"

namespace maskscope {

// Over the pairs a < b in [lo, hi): `wins` where the later (nearer) entry is larger by more than the row's
// tie tolerance t (tie_tolerance, core/stats/float_resolution.hpp), row[a] < row[b] - t, and `ties` where neither is
// (|row[b] - row[a]| <= t). docs/model.md section 4 counts a tie as 1/2.
struct PairCounts {
  std::int64_t wins = 0, ties = 0;
  // Wins with ties counted 1/2, in half units (an integer): 2 wins + ties.
  std::int64_t half_units() const { return 2 * wins + ties; }
};

// Recency: row = S_i, range = the unmasked keys strictly below the diagonal.
// Adjacency: row = C_k, range = [0, k) (the diagonal C_kk = 1 left out); C_ka < C_kb for a < b.
// Reads up to 7 floats past row[hi - 1] (masked out): the row's buffer must have that slack.
// Ties are the pairs that neither win nor lose: counting losses costs what counting exact ties did (two
// compares a pair), so the tolerance is free in the loop.
[[gnu::always_inline]] inline PairCounts ordered_pairs(const float* row, int lo, int hi) {
  using simd::f8;
  using simd::i8;
  const i8 lane = {0, 1, 2, 3, 4, 5, 6, 7};
  auto splat = [](float x) { return f8{x, x, x, x, x, x, x, x}; };
  const float t = tie_tolerance(row, lo, hi);
  const f8 tv = splat(t);
  // Per-lane counts (at most n^2 / 8 each, far from overflow), one pair of accumulators per later entry of a
  // group of four, so that no add waits for another.
  i8 wins[4] = {}, losses[4] = {};
  // The earlier entries a in [from, b) against row[b], each vector masked to a < b (no read past
  // row[b + 6]): a group of four's pairs past its last whole vector, and the last later entries.
  auto earlier = [&](int from, int b, i8& w, i8& l) {
    const f8 vb = splat(row[b]), below = vb - tv, above = vb + tv;
    for (int a = from; a < b; a += 8) {
      const i8 inside = (lane + a) < b;
      const f8 va = simd::load(row + a);
      w -= inside & (va < below);  // -1 where row[a] < row[b] - t
      l -= inside & (va > above);
    }
  };
  int b = lo + 1;
  // Four later entries at once: each vector of earlier entries is loaded once for four pairs of compares
  // (at n 512 these counts were half of a sample's time); the few pairs within the group of four,
  // past the last whole vector, go one later entry at a time.
  for (; b + 4 <= hi; b += 4) {
    // Four broadcasts, as many as exact comparisons took (a broadcast is a chain of inserts here); the bounds
    // from them by vector adds, the same rounding as the scalar fl(row[b] -+ t).
    const f8 v0 = splat(row[b]), v1 = splat(row[b + 1]), v2 = splat(row[b + 2]), v3 = splat(row[b + 3]);
    const f8 lo0 = v0 - tv, lo1 = v1 - tv, lo2 = v2 - tv, lo3 = v3 - tv;
    const f8 hi0 = v0 + tv, hi1 = v1 + tv, hi2 = v2 + tv, hi3 = v3 + tv;
    int a = lo;
    for (; a + 8 <= b; a += 8) {
      const f8 va = simd::load(row + a);
      wins[0] -= va < lo0;  // -1 where row[a] < row[b] - t
      losses[0] -= va > hi0;
      wins[1] -= va < lo1;
      losses[1] -= va > hi1;
      wins[2] -= va < lo2;
      losses[2] -= va > hi2;
      wins[3] -= va < lo3;
      losses[3] -= va > hi3;
    }
    for (int k = 0; k < 4; ++k) earlier(a, b + k, wins[k], losses[k]);
  }
  for (; b < hi; ++b) earlier(lo, b, wins[0], losses[0]);  // at most three
  const i8 w = (wins[0] + wins[1]) + (wins[2] + wins[3]), l = (losses[0] + losses[1]) + (losses[2] + losses[3]);
  auto total = [](i8 v) { return std::int64_t((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7])); };
  const std::int64_t m = hi > lo ? hi - lo : 0, pairs = m * (m - 1) / 2;
  return {total(w), pairs - total(w) - total(l)};
}

}  // namespace maskscope
