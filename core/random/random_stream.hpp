// Per-sample random streams: every draw of sample s depends only on (seed, s), through the
// counter-based generator Philox4x32-10 (Salmon, Moraes, Dror, Shaw 2011, "Parallel random numbers:
// as easy as 1, 2, 3"). So a run's results do not depend on threads, block sizes or the number of
// layers that follow, and any range of samples can be computed anywhere.
//
// Normals come from Box-Muller on pairs of Philox words, 16 counters at a time. Normal m of a
// sample's stream is word w = (m / 16) % 4 of the Philox block with counter
// (sample_lo, sample_hi, g = 16 (m / 64) + m % 16, domain): words (0, 1) give r cos, r sin and
// words (2, 3) the next pair. The sampler is compiled without floating-point contraction, so its
// bits are the same on every x86-64 level (AVX-512, AVX2, baseline).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace maskscope {

// SplitMix64 step (Steele, Lea, Flood 2014): turns a counter into well-mixed 64-bit words
// (RoPE's scramble permutation).
inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// The counter's fourth word: independent sub-streams of one sample.
enum class StreamDomain : std::uint32_t { normals = 0, words = 1 };

// One Philox4x32-10 block (the reference, scalar form).
std::array<std::uint32_t, 4> philox4x32_10(std::array<std::uint32_t, 4> counter, std::array<std::uint32_t, 2> key);

// The 64 normals m in [64 G, 64 G + 64) of `sample`'s stream, in order.
void normal_group(std::uint64_t seed, std::uint64_t sample, std::uint64_t group, float* out);
// Groups group0 .. group0 + count - 1 (64 count normals, in order), as normal_group on each: the same
// bits, faster (two groups' Philox blocks at once).
void normal_groups(std::uint64_t seed, std::uint64_t sample, std::uint64_t group0, std::uint64_t count, float* out);
// The same group's first 32 normals (out[0 .. 32)), at half the Box-Muller work: a short last group.
void normal_group_head(std::uint64_t seed, std::uint64_t sample, std::uint64_t group, float* out);

// Normals of 16 samples at once (structure of arrays): out[16 w + t] = normal
// 64 (g / 16) + 16 w + g % 16 of sample first_sample + t, for w = 0..3.
void lane_normals(std::uint64_t seed, std::uint64_t first_sample, std::uint32_t g, float* out);

// The sampler's instruction-set level in use ("x86-64-v4", "x86-64-v3" or "x86-64"), and normal_group on the level
// named (the baseline "x86-64", else the one in use): for the test that every level gives the same bits.
std::string sampler_isa();
void normal_group_at(const std::string& level, std::uint64_t seed, std::uint64_t sample, std::uint64_t group,
                     float* out);

// Where normal m of a sample's stream comes from: counter g and word w (the inverse of the layout above).
inline std::uint32_t normal_counter(std::uint64_t m) { return static_cast<std::uint32_t>(16 * (m / 64) + m % 16); }
inline int normal_word(std::uint64_t m) { return static_cast<int>((m / 16) % 4); }

// The constants of SampleStream::chi for nu degrees of freedom: Gamma(a) with a = nu / 2, through
// Gamma(a + 1) U^(1 / a) when a < 1 (`boosted`, inv_a = 1 / a); d = a' - 1/3 and c = 1 / sqrt(9 d)
// of the shape a' drawn (a, or a + 1 when boosted).
struct ChiLaw {
  double inv_a = 0, dd = 0, c = 0;
  bool boosted = false;
  ChiLaw() = default;
  explicit ChiLaw(double nu);
};

// The stream of one sample: normals in order (each request starts at a multiple of 64, see
// normals()), and 64-bit words from an independent sub-stream.
class SampleStream {
 public:
  SampleStream(std::uint64_t seed, std::uint64_t sample) : seed_(seed), sample_(sample) {}

  // The next `count` normals; the position then moves to the next multiple of 64, so a request's
  // first normal is always the first of a group.
  void normals(float* out, std::size_t count);
  // Skips to normal m (a multiple of 64).
  void seek_normal(std::uint64_t m) { position_ = m; }
  std::uint64_t normal_position() const { return position_; }

  // The next 64-bit word of the words sub-stream.
  std::uint64_t next();
  // Uniform in (0, 1), from the top 53 bits of next().
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }

  std::uint64_t sample() const { return sample_; }

  // A standard normal from the words sub-stream (Box-Muller in double; for rare slow paths).
  double word_normal();
  // chi with nu > 0 degrees of freedom, sqrt(2 Gamma(nu / 2)) by Marsaglia & Tsang (2000): the first
  // attempt uses the given normal z and uniform u in (0, 1); rejections (about 1 in 50 at nu = 2,
  // fewer for larger nu) draw from the words sub-stream.
  double chi(double nu, double z, double u);
  // The same draw with the law's constants computed once (ChiLaw(nu)): the same bits.
  double chi(const ChiLaw& law, double z, double u);

 private:
  std::uint64_t seed_, sample_;
  std::uint64_t position_ = 0;  // next normal
  std::uint64_t word_counter_ = 0;
  std::array<std::uint32_t, 4> words_{};
  int words_left_ = 0;
};

}  // namespace maskscope
