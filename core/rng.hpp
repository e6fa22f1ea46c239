// Random streams: one counter-seeded xoshiro256+ stream per block of samples, so results do
// not depend on how blocks are spread over threads; standard normals by the ziggurat method.
#pragma once

#include <cmath>
#include <cstdint>

namespace maskscope {

// SplitMix64 step (Steele, Lea, Flood 2014): turns a counter into well-mixed 64-bit words.
inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Ziggurat tables for the standard normal (Marsaglia & Tsang 2000), 128 layers,
// computed at start-up from the defining recurrence.
struct ZigguratTables {
  std::uint32_t k[128];
  double w[128];
  double f[128];
};
const ZigguratTables& ziggurat_tables();

// xoshiro256+ (Blackman & Vigna). Seeded from (seed, block) so every block has its own stream.
class BlockStream {
 public:
  BlockStream(std::uint64_t seed, std::uint64_t block) {
    std::uint64_t sm = seed ^ (0xD1B54A32D192ED03ULL * (block + 1));
    for (auto& w : s_) w = splitmix64(sm);
  }

  std::uint64_t next() {
    const std::uint64_t result = s_[0] + s_[3];
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = (s_[3] << 45) | (s_[3] >> 19);
    return result;
  }

  // Uniform in (0, 1), never 0, from the top 53 bits.
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }

  // Standard normal from one 32-bit word: ziggurat layer from bits 0-6, signed value from
  // bits 8-31, so index and value never share bits. Two normals per 64-bit draw.
  double normal_from_word(const ZigguratTables& z, std::uint32_t u) {
    const unsigned layer = u & 127u;
    const std::int32_t h = static_cast<std::int32_t>(u & 0xFFFFFF00u);
    const std::uint32_t mag = h < 0 ? static_cast<std::uint32_t>(-(static_cast<std::int64_t>(h)))
                                    : static_cast<std::uint32_t>(h);
    if (mag < z.k[layer]) return h * z.w[layer];
    return normal_tail(z, h, layer);
  }

  // Fills out[0..count) with standard normals.
  void normals(const ZigguratTables& z, float* out, int count) {
    int i = 0;
    for (; i + 2 <= count; i += 2) {
      const std::uint64_t r = next();
      out[i] = static_cast<float>(normal_from_word(z, static_cast<std::uint32_t>(r)));
      out[i + 1] = static_cast<float>(normal_from_word(z, static_cast<std::uint32_t>(r >> 32)));
    }
    if (i < count) out[i] = static_cast<float>(normal_from_word(z, static_cast<std::uint32_t>(next())));
  }

 private:
  double normal_tail(const ZigguratTables& z, std::int32_t h, unsigned layer);
  std::uint64_t s_[4];
};

}  // namespace maskscope
