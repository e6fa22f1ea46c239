// Philox4x32-10 on 16 counters at once and Box-Muller normals (random_stream.hpp). The vector code
// (random_stream_body.inc) is compiled for baseline x86-64, x86-64-v3 (AVX2) and x86-64-v4 (AVX-512 on
// the same 8-lane vectors), and picked at run time. This file is compiled with -ffp-contract=off
// (CMakeLists.txt): every level rounds the same way, so the normals are bit-identical on all three.
#include "core/random/random_stream.hpp"

#include <cmath>
#include <cstring>

#if MASKSCOPE_TARGET_CLONES && defined(__x86_64__)
#define MASKSCOPE_SAMPLER_LEVELS 1
#else
#define MASKSCOPE_SAMPLER_LEVELS 0
#endif

#if MASKSCOPE_SAMPLER_LEVELS
#include <immintrin.h>
#endif

namespace maskscope {

namespace {

constexpr std::uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  // Philox4x32 multipliers
constexpr std::uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // Weyl key increments

namespace base {
#define MASKSCOPE_SAMPLER_PMULUDQ 0
#include "core/random/random_stream_body.inc"
#undef MASKSCOPE_SAMPLER_PMULUDQ
}  // namespace base

#if MASKSCOPE_SAMPLER_LEVELS
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v3")
namespace v3 {
#define MASKSCOPE_SAMPLER_PMULUDQ 1
#include "core/random/random_stream_body.inc"
#undef MASKSCOPE_SAMPLER_PMULUDQ
}  // namespace v3
#pragma GCC pop_options
// The same 8-lane code with AVX-512's 32 vector registers and three-input logic: four Philox chains
// (groups64) stay in registers. Wider vectors were slower on Zen 4, which splits them in two.
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v4")
namespace v4 {
#define MASKSCOPE_SAMPLER_PMULUDQ 1
#include "core/random/random_stream_body.inc"
#undef MASKSCOPE_SAMPLER_PMULUDQ
}  // namespace v4
#pragma GCC pop_options
#endif

struct SamplerLevel {
  const char* name;
  void (*group64)(std::uint64_t, std::uint64_t, std::uint64_t, float*);
  void (*group32)(std::uint64_t, std::uint64_t, std::uint64_t, float*);
  void (*groups64)(std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t, float*);
  void (*lanes16)(std::uint64_t, std::uint64_t, std::uint32_t, float*);
};

const SamplerLevel kBase{"x86-64", base::group64, base::group32, base::groups64, base::lanes16};

// The best level this processor runs (on 8-lane vectors at every level).
const SamplerLevel& sampler_level() {
#if MASKSCOPE_SAMPLER_LEVELS
  static const SamplerLevel v3_level{"x86-64-v3", v3::group64, v3::group32, v3::groups64, v3::lanes16};
  static const SamplerLevel v4_level{"x86-64-v4", v4::group64, v4::group32, v4::groups64, v4::lanes16};
  static const SamplerLevel& best = []() -> const SamplerLevel& {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("x86-64-v4")) return v4_level;
    return __builtin_cpu_supports("x86-64-v3") ? v3_level : kBase;
  }();
  return best;
#else
  return kBase;
#endif
}

}  // namespace

std::array<std::uint32_t, 4> philox4x32_10(std::array<std::uint32_t, 4> c, std::array<std::uint32_t, 2> key) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += kW0;
      key[1] += kW1;
    }
    const std::uint64_t p0 = std::uint64_t(kM0) * c[0], p1 = std::uint64_t(kM1) * c[2];
    c = {std::uint32_t(p1 >> 32) ^ c[1] ^ key[0], std::uint32_t(p1), std::uint32_t(p0 >> 32) ^ c[3] ^ key[1],
         std::uint32_t(p0)};
  }
  return c;
}

void normal_group(std::uint64_t seed, std::uint64_t sample, std::uint64_t group, float* out) {
  sampler_level().group64(seed, sample, group, out);
}

void normal_groups(std::uint64_t seed, std::uint64_t sample, std::uint64_t group0, std::uint64_t count, float* out) {
  sampler_level().groups64(seed, sample, group0, count, out);
}

void normal_group_head(std::uint64_t seed, std::uint64_t sample, std::uint64_t group, float* out) {
  sampler_level().group32(seed, sample, group, out);
}

void lane_normals(std::uint64_t seed, std::uint64_t first_sample, std::uint32_t g, float* out) {
  sampler_level().lanes16(seed, first_sample, g, out);
}

void normal_group_at(const std::string& level, std::uint64_t seed, std::uint64_t sample, std::uint64_t group,
                     float* out) {
  const SamplerLevel& l = level == kBase.name ? kBase : sampler_level();
  l.group64(seed, sample, group, out);
}

std::string sampler_isa() { return sampler_level().name; }

void SampleStream::normals(float* out, std::size_t count) {
  std::uint64_t g = position_ / 64;
  const std::size_t whole = count / 64, rest = count % 64;  // whole groups at once, then part of one
  if (whole > 0) normal_groups(seed_, sample_, g, whole, out);
  g += whole;
  if (rest > 0) {
    float group[64];
    if (rest <= 32) normal_group_head(seed_, sample_, g, group);
    else normal_group(seed_, sample_, g, group);
    std::memcpy(out + 64 * whole, group, rest * sizeof(float));
    ++g;
  }
  position_ = g * 64;
}

std::uint64_t SampleStream::next() {
  if (words_left_ < 2) {
    words_ = philox4x32_10({std::uint32_t(sample_), std::uint32_t(sample_ >> 32), std::uint32_t(word_counter_),
                            std::uint32_t(StreamDomain::words) | std::uint32_t(word_counter_ >> 32) << 8},
                           {std::uint32_t(seed_), std::uint32_t(seed_ >> 32)});
    ++word_counter_;
    words_left_ = 4;
  }
  const int at = 4 - words_left_;
  words_left_ -= 2;
  return std::uint64_t(words_[std::size_t(at)]) << 32 | words_[std::size_t(at + 1)];
}

double SampleStream::word_normal() {
  const double u1 = uniform(), u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

ChiLaw::ChiLaw(double nu) {
  double a = 0.5 * nu;
  inv_a = 1.0 / a;
  boosted = a < 1.0;
  if (boosted) a += 1.0;
  dd = a - 1.0 / 3.0;
  c = 1.0 / std::sqrt(9.0 * dd);
}

double SampleStream::chi(double nu, double z, double u) { return chi(ChiLaw(nu), z, u); }

double SampleStream::chi(const ChiLaw& law, double z, double u) {
  const double boost = law.boosted ? std::pow(uniform(), law.inv_a) : 1.0;  // Gamma(a) = Gamma(a + 1) U^(1/a)
  const double dd = law.dd, c = law.c;
  for (;;) {
    const double t = 1.0 + c * z;
    if (t > 0.0) {
      const double v = t * t * t;
      const double z2 = z * z;
      if (u < 1.0 - 0.0331 * z2 * z2 || std::log(u) < 0.5 * z2 + dd * (1.0 - v + std::log(v)))
        return std::sqrt(2.0 * dd * v * boost);
    }
    z = word_normal();
    u = uniform();
  }
}

}  // namespace maskscope
