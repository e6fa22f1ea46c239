// Which keys each query attends to under a mask, and the counts and coefficients that follow from it.
#pragma once

#include <cstdint>
#include <vector>

#include "core/model/settings.hpp"

namespace maskscope {

// Which keys each query sees: query i attends to keys lo[i] <= j <= hi[i] (docs/model.md section 2).
struct KeyRanges {
  std::vector<int> lo, hi;
  std::int64_t recency_triples = 0;  // (i, k, j) with i > k > j, all keys of i: RP's comparisons
  std::int64_t adjacency_rows = 0;   // rows k >= 2 of the cosine matrix (pairs i < j < k exist)
  // Leakage (docs/model.md section 8): a sample's within-offset slope of a map M on the query position is
  // sum_c slope_coef[c] M_c, slope_coef[c] = (i_c - mean i of c's offset) / sum_c (i_c - mean)^2 over
  // the unmasked cells c = (i, j) (n x n, 0 where masked; all 0 when no offset has two cells).
  std::vector<float> slope_coef;
};

KeyRanges key_ranges(const Settings& s);

}  // namespace maskscope
