// RoPE tables (see rope.hpp).
#include "core/model/rope.hpp"

#include <cmath>
#include <numeric>
#include <utility>

#include "core/random/random_stream.hpp"

namespace maskscope {

std::vector<int> rope_scramble_permutation(int dims, std::uint64_t seed) {
  std::vector<int> perm(std::size_t(std::max(0, dims)));
  std::iota(perm.begin(), perm.end(), 0);
  if (seed == 0) return perm;
  std::uint64_t state = seed ^ 0x52C6A1F0D3B7E495ULL;  // its own stream, whatever the sample seed
  for (int e = dims - 1; e > 0; --e) {                 // Fisher-Yates
    const std::uint64_t r = splitmix64(state);
    const int k = static_cast<int>(r % static_cast<std::uint64_t>(e + 1));
    std::swap(perm[std::size_t(e)], perm[std::size_t(k)]);
  }
  return perm;
}

RopeTables rope_tables(int n, int dims, double base, std::uint64_t scramble_seed) {
  RopeTables t;
  t.half = dims / 2;
  const std::vector<int> perm = rope_scramble_permutation(dims, scramble_seed);
  const std::size_t size = std::size_t(n) * t.half;
  t.cos_a.resize(size);
  t.sin_a.resize(size);
  t.cos_b.resize(size);
  t.sin_b.resize(size);
  auto angle = [&](int i, int e) { return i * std::pow(base, -2.0 * (perm[std::size_t(e)] / 2) / dims); };
  for (int i = 0; i < n; ++i)
    for (int p = 0; p < t.half; ++p) {
      const std::size_t at = std::size_t(i) * t.half + p;
      const double a = angle(i, 2 * p), b = angle(i, 2 * p + 1);
      t.cos_a[at] = static_cast<float>(std::cos(a));
      t.sin_a[at] = static_cast<float>(std::sin(a));
      t.cos_b[at] = static_cast<float>(std::cos(b));
      t.sin_b[at] = static_cast<float>(std::sin(b));
    }
  return t;
}

}  // namespace maskscope
