// RoPE's rotation tables (Su et al., RoFormer Eq. 34), and the scrambled variant of Ruscio et al.
// (`004` Sec. 4): a fixed random permutation of the assignment of frequency bands to the query/key
// dimensions, which keeps the rotation magnitudes but breaks the pairing of the two coordinates a
// band rotates, and with it the relative-offset property (docs/model.md section 8).
#pragma once

#include <cstdint>
#include <vector>

namespace maskscope {

// For position i and pair p (coordinates 2p, 2p+1 of `dims`), the rotated pair is
//   q_2p   = y_2p cos(i w_a) - y_2p+1 sin(i w_a),   q_2p+1 = y_2p sin(i w_b) + y_2p+1 cos(i w_b)
// with a = band(2p), b = band(2p+1), w_k = base^(-2k/dims). Unscrambled, band(e) = e / 2, so a = b = p
// and this is RoPE. Scrambled (seed != 0), band(e) = perm(e) / 2 for a permutation of 0..dims-1 drawn
// from the seed: the same for queries and keys, for every layer and head.
struct RopeTables {
  int half = 0;
  std::vector<float> cos_a, sin_a, cos_b, sin_b;  // n x half
};
RopeTables rope_tables(int n, int dims, double base, std::uint64_t scramble_seed);

// The scrambled dimension order of rope_tables (perm[e] for e in 0..dims-1); the identity for seed 0.
std::vector<int> rope_scramble_permutation(int dims, std::uint64_t seed);

}  // namespace maskscope
