// Philox4x32-10 on 16 counters at once and Box-Muller normals (random_stream.hpp). This file is
// compiled with -ffp-contract=off (CMakeLists.txt): every clone rounds the same way, so the normals
// are bit-identical on AVX-512, AVX2 and baseline x86-64.
#include "random_stream.hpp"

#include <cmath>
#include <cstring>

#if MASKSCOPE_TARGET_CLONES && defined(__x86_64__)
#define MASKSCOPE_SAMPLER_CLONES [[gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")]]
#else
#define MASKSCOPE_SAMPLER_CLONES
#endif

namespace maskscope {

namespace {

constexpr std::uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  // Philox4x32 multipliers
constexpr std::uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // Weyl key increments

// 8 lanes of 32 bits (one AVX2 register; AVX-512 machines such as Zen 4 run 512-bit vectors as two
// of these anyway, and wider generic vectors lower badly on AVX2). Two of them make the 16 counters.
typedef std::uint32_t u32x8 __attribute__((vector_size(32)));
typedef std::int32_t i32x8 __attribute__((vector_size(32)));
typedef std::uint64_t u64x4 __attribute__((vector_size(32)));
typedef float f32x8 __attribute__((vector_size(32)));

// Lane-wise 32 x 32 -> 64-bit products: the high and low words of m * b.
[[gnu::always_inline]] inline void mulhilo(std::uint32_t m, u32x8 b, u32x8& hi, u32x8& lo) {
  // Hide the constant multiplier from the optimiser: knowing it, GCC multiplied by shifts, adds and
  // subtractions (AVX2 has no 64-bit vector multiply) instead of one vpmuludq per product.
  asm("" : "+r"(m));
  u64x4 wide;
  std::memcpy(&wide, &b, sizeof wide);
  const u64x4 mask = u64x4{} + 0xFFFFFFFFull;
  const u64x4 mm = u64x4{} + std::uint64_t(m);
  const u64x4 even = (wide & mask) * (mm & mask);            // both factors below 2^32: vpmuludq
  const u64x4 odd = ((wide >> 32) & mask) * (mm & mask);
  // The products' low and high words interleaved back into counter order: two blends of 32-bit
  // words (with a shift each) instead of masks and ors.
  u32x8 e32, o32;
  std::memcpy(&e32, &even, sizeof e32);
  std::memcpy(&o32, &odd, sizeof o32);
  lo = __builtin_shufflevector(e32, o32, 0, 8, 2, 10, 4, 12, 6, 14);
  hi = __builtin_shufflevector(e32, o32, 1, 9, 3, 11, 5, 13, 7, 15);
}

struct Words8 {
  u32x8 w[4];
};

[[gnu::always_inline]] inline Words8 philox8(u32x8 c0, u32x8 c1, u32x8 c2, u32x8 c3, std::uint32_t k0,
                                               std::uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kW0;
      k1 += kW1;
    }
    u32x8 hi0, lo0, hi1, lo1;
    mulhilo(kM0, c0, hi0, lo0);
    mulhilo(kM1, c2, hi1, lo1);
    const u32x8 n0 = hi1 ^ c1 ^ k0;
    const u32x8 n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
  }
  return {{c0, c1, c2, c3}};
}

// ln x for x in (0, 1] (Cephes logf: x = m 2^e, m in [sqrt(1/2), sqrt(2)), a degree-9 polynomial in
// m - 1); relative error about 1e-7. N vectors at once, step by step: each is a chain of dependent
// operations, and side by side they overlap (the same operations on every lane as one at a time).
template <int N>
[[gnu::always_inline]] inline void log_unit(const f32x8* x, f32x8* out) {
  f32x8 m[N], fe[N], z[N], y[N];
  for (int i = 0; i < N; ++i) {
    i32x8 bits;
    std::memcpy(&bits, &x[i], sizeof bits);
    i32x8 e = ((bits >> 23) & 0xFF) - 126;
    const i32x8 mant_bits = (bits & 0x007FFFFF) | 0x3F000000;  // m in [0.5, 1)
    std::memcpy(&m[i], &mant_bits, sizeof m[i]);
    const i32x8 small = m[i] < 0.707106781186547524f;
    e += small;  // small lanes are -1: e - 1
    m[i] = small ? m[i] + m[i] - 1.0f : m[i] - 1.0f;
    fe[i] = __builtin_convertvector(e, f32x8);
    z[i] = m[i] * m[i];
  }
  for (int i = 0; i < N; ++i) y[i] = 7.0376836292e-2f * m[i] - 1.1514610310e-1f;
  for (int i = 0; i < N; ++i) y[i] = y[i] * m[i] + 1.1676998740e-1f;
  for (int i = 0; i < N; ++i) y[i] = y[i] * m[i] - 1.2420140846e-1f;
  for (int i = 0; i < N; ++i) y[i] = y[i] * m[i] + 1.4249322787e-1f;
  for (int i = 0; i < N; ++i) y[i] = y[i] * m[i] - 1.6668057665e-1f;
  for (int i = 0; i < N; ++i) y[i] = y[i] * m[i] + 2.0000714765e-1f;
  for (int i = 0; i < N; ++i) y[i] = y[i] * m[i] - 2.4999993993e-1f;
  for (int i = 0; i < N; ++i) y[i] = y[i] * m[i] + 3.3333331174e-1f;
  for (int i = 0; i < N; ++i) {
    y[i] = y[i] * m[i] * z[i];
    y[i] = y[i] + fe[i] * -2.12194440e-4f;
    y[i] = y[i] - 0.5f * z[i];
    out[i] = (m[i] + y[i]) + fe[i] * 0.693359375f;
  }
}

// Lane-wise IEEE square root (GCC has no generic vector sqrt; this loop becomes sqrtps).
[[gnu::always_inline]] inline f32x8 sqrt8(f32x8 x) {
  f32x8 r;
  for (int t = 0; t < 8; ++t) r[t] = __builtin_sqrtf(x[t]);
  return r;
}

// Box-Muller on N word pairs (a[i], b[i]) side by side (as log_unit): a gives the radius
// sqrt(-2 ln u), u in (0, 1] from 31 bits; b the angle, its top two bits the quadrant and the next
// 30 bits phi in [-pi/4, pi/4) (Cephes sinf / cosf polynomials).
template <int N>
[[gnu::always_inline]] inline void box_muller(const u32x8* a, const u32x8* b, f32x8* z_cos, f32x8* z_sin) {
  f32x8 u[N], lg[N];
  for (int i = 0; i < N; ++i) u[i] = __builtin_convertvector(i32x8(a[i] >> 1), f32x8) * 0x1.0p-31f + 0x1.0p-32f;
  log_unit<N>(u, lg);
  for (int i = 0; i < N; ++i) {
    const f32x8 r = sqrt8(-2.0f * lg[i]);
    const u32x8 quadrant = b[i] >> 30;
    const f32x8 f = __builtin_convertvector(i32x8(b[i] & 0x3FFFFFFFu), f32x8) * 0x1.0p-30f;  // [0, 1)
    const f32x8 phi = (f - 0.5f) * 1.57079632679489662f;
    const f32x8 p2 = phi * phi;
    const f32x8 s = phi + phi * p2 * ((-1.9515295891e-4f * p2 + 8.3321608736e-3f) * p2 - 1.6666654611e-1f);
    const f32x8 c = 1.0f - 0.5f * p2 + p2 * p2 * ((2.443315711809948e-5f * p2 - 1.388731625493765e-3f) * p2 +
                                                  4.166664568298827e-2f);
    // Angle q pi/2 + phi: (cos, sin) = (c, s), (-s, c), (-c, -s), (s, -c) for q = 0..3.
    const i32x8 q = i32x8(quadrant);
    const i32x8 swap = (q & 1) != 0;
    const i32x8 neg_cos = (q == 1) | (q == 2);
    const i32x8 neg_sin = q >= 2;
    f32x8 cs = swap ? s : c;
    f32x8 sn = swap ? c : s;
    cs = neg_cos ? -cs : cs;
    sn = neg_sin ? -sn : sn;
    z_cos[i] = r * cs;
    z_sin[i] = r * sn;
  }
}

// Two Philox blocks of 8 counters each, round by round: the rounds of one block form a chain of
// dependent multiplies, and interleaving two chains keeps the multipliers busy (normal_group took
// 1.2x as long with one block after the other).
[[gnu::always_inline]] inline void philox8x2(u32x8 a0, u32x8 a1, u32x8 a2, u32x8 b2, u32x8 c3, std::uint32_t k0,
                                             std::uint32_t k1, Words8& a, Words8& b) {
  u32x8 b0 = a0, b1 = a1, a3 = c3, b3 = c3;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kW0;
      k1 += kW1;
    }
    u32x8 ahi0, alo0, ahi1, alo1, bhi0, blo0, bhi1, blo1;
    mulhilo(kM0, a0, ahi0, alo0);
    mulhilo(kM0, b0, bhi0, blo0);
    mulhilo(kM1, a2, ahi1, alo1);
    mulhilo(kM1, b2, bhi1, blo1);
    const u32x8 an0 = ahi1 ^ a1 ^ k0, bn0 = bhi1 ^ b1 ^ k0;
    const u32x8 an2 = ahi0 ^ a3 ^ k1, bn2 = bhi0 ^ b3 ^ k1;
    a0 = an0;
    a1 = alo1;
    a2 = an2;
    a3 = alo0;
    b0 = bn0;
    b1 = blo1;
    b2 = bn2;
    b3 = blo0;
  }
  a = {{a0, a1, a2, a3}};
  b = {{b0, b1, b2, b3}};
}

// The normals of B blocks' Philox words (8 counters each): block j's normals go to
// out[8 j + 16 k + t] for k < 2 K, t < 8 (K = 2: all four words; K = 1: the first two). With B = 1
// that is out[16 w + t] for its words w; with B = 2 the blocks' lanes interleave in runs of 8.
template <int B, int K = 2>
[[gnu::always_inline]] inline void normals_of(const Words8* w, float* out) {
  u32x8 a[B * K], b[B * K];
  for (int j = 0; j < B; ++j)
    for (int k = 0; k < K; ++k) {
      a[j * K + k] = w[j].w[2 * k];
      b[j * K + k] = w[j].w[2 * k + 1];
    }
  f32x8 zc[B * K], zs[B * K];
  box_muller<B * K>(a, b, zc, zs);
  for (int j = 0; j < B; ++j)
    for (int k = 0; k < K; ++k) {
      std::memcpy(out + 8 * j + 16 * (2 * k), &zc[j * K + k], sizeof(f32x8));
      std::memcpy(out + 8 * j + 16 * (2 * k + 1), &zs[j * K + k], sizeof(f32x8));
    }
}

// The 4 x 8 normals of 8 counters (c0, c1, c2, domain): out[16 w + t] for t < 8.
[[gnu::always_inline]] inline void normals8(std::uint64_t seed, u32x8 c0, u32x8 c1, u32x8 c2, float* out) {
  const Words8 w = philox8(c0, c1, c2, u32x8{} + std::uint32_t(StreamDomain::normals), std::uint32_t(seed),
                           std::uint32_t(seed >> 32));
  normals_of<1>(&w, out);
}

const u32x8 kLane = {0, 1, 2, 3, 4, 5, 6, 7};

// Group `group` of `sample`'s normals: all 64 (K = 2), or the first 32 (K = 1).
template <int K>
[[gnu::always_inline]] inline void group_normals(std::uint64_t seed, std::uint64_t sample, std::uint64_t group,
                                                 float* out) {
  const u32x8 c0 = u32x8{} + std::uint32_t(sample);
  const u32x8 c1 = u32x8{} + std::uint32_t(sample >> 32);
  const u32x8 c2 = std::uint32_t(16 * group) + kLane;
  Words8 w[2];
  philox8x2(c0, c1, c2, c2 + 8u, u32x8{} + std::uint32_t(StreamDomain::normals), std::uint32_t(seed),
            std::uint32_t(seed >> 32), w[0], w[1]);
  normals_of<2, K>(w, out);
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

MASKSCOPE_SAMPLER_CLONES
void normal_group(std::uint64_t seed, std::uint64_t sample, std::uint64_t group, float* out) {
  group_normals<2>(seed, sample, group, out);
}

MASKSCOPE_SAMPLER_CLONES
void normal_group_head(std::uint64_t seed, std::uint64_t sample, std::uint64_t group, float* out) {
  group_normals<1>(seed, sample, group, out);
}

MASKSCOPE_SAMPLER_CLONES
void lane_normals(std::uint64_t seed, std::uint64_t first_sample, std::uint32_t g, float* out) {
  for (std::uint32_t half = 0; half < 16; half += 8) {
    const u32x8 lo = std::uint32_t(first_sample) + half + kLane;
    const u32x8 carry = lo < std::uint32_t(first_sample);  // all ones where the low word wrapped
    const u32x8 c1 = std::uint32_t(first_sample >> 32) - carry;
    normals8(seed, lo, c1, u32x8{} + g, out + half);
  }
}

void SampleStream::normals(float* out, std::size_t count) {
  float group[64];
  std::size_t done = 0;
  std::uint64_t g = position_ / 64;
  while (done < count) {
    const std::size_t take = count - done < 64 ? count - done : 64;
    if (take == 64) {
      normal_group(seed_, sample_, g, out + done);
    } else {
      if (take <= 32)
        normal_group_head(seed_, sample_, g, group);
      else
        normal_group(seed_, sample_, g, group);
      std::memcpy(out + done, group, take * sizeof(float));
    }
    done += take;
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
