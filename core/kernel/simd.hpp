// 8-lane float vectors (GCC vector extensions): AVX in the x86-64-v3 clone of the kernel,
// two SSE registers in the baseline one. Only for the simulation kernel's hot loops.
#pragma once

#include <cstdint>
#include <cstring>

namespace maskscope::simd {

typedef float f8 __attribute__((vector_size(32)));
typedef std::int32_t i8 __attribute__((vector_size(32)));

// Lanes of two vectors picked by constant indices (exact: no rounding): GCC's __builtin_shuffle, or
// clang's __builtin_shufflevector in the browser build (Emscripten), which has no __builtin_shuffle.
#if defined(__clang__)
#define MASKSCOPE_SHUFFLE(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define MASKSCOPE_SHUFFLE(a, b, ...) __builtin_shuffle(a, b, i8{__VA_ARGS__})
#endif

[[gnu::always_inline]] inline f8 load(const float* p) {
  f8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

[[gnu::always_inline]] inline float hsum(f8 v) {
  return ((v[0] + v[4]) + (v[1] + v[5])) + ((v[2] + v[6]) + (v[3] + v[7]));
}

// <a, b> over d entries.
[[gnu::always_inline]] inline float dot(const float* a, const float* b, int d) {
  f8 acc0 = {}, acc1 = {};
  int k = 0;
  for (; k + 16 <= d; k += 16) {
    acc0 += load(a + k) * load(b + k);
    acc1 += load(a + k + 8) * load(b + k + 8);
  }
  if (k + 8 <= d) {
    acc0 += load(a + k) * load(b + k);
    k += 8;
  }
  float s = hsum(acc0 + acc1);
  for (; k < d; ++k) s += a[k] * b[k];
  return s;
}

// <a, b0..b3>: four dot products sharing the loads of a (a register-blocked Gram row).
[[gnu::always_inline]] inline void dot4(const float* a, const float* b0, const float* b1, const float* b2,
                                        const float* b3, int d, float* out) {
  f8 c0 = {}, c1 = {}, c2 = {}, c3 = {};
  int k = 0;
  for (; k + 8 <= d; k += 8) {
    const f8 va = load(a + k);
    c0 += va * load(b0 + k);
    c1 += va * load(b1 + k);
    c2 += va * load(b2 + k);
    c3 += va * load(b3 + k);
  }
  // Transposing add: lane t of `e` (and of its upper half) collects the partial sums of c_t.
  const f8 a01 =
      MASKSCOPE_SHUFFLE(c0, c1, 0, 8, 2, 10, 4, 12, 6, 14) + MASKSCOPE_SHUFFLE(c0, c1, 1, 9, 3, 11, 5, 13, 7, 15);
  const f8 a23 =
      MASKSCOPE_SHUFFLE(c2, c3, 0, 8, 2, 10, 4, 12, 6, 14) + MASKSCOPE_SHUFFLE(c2, c3, 1, 9, 3, 11, 5, 13, 7, 15);
  const f8 e =
      MASKSCOPE_SHUFFLE(a01, a23, 0, 1, 8, 9, 4, 5, 12, 13) + MASKSCOPE_SHUFFLE(a01, a23, 2, 3, 10, 11, 6, 7, 14, 15);
  float s0 = e[0] + e[4], s1 = e[1] + e[5], s2 = e[2] + e[6], s3 = e[3] + e[7];
  for (; k < d; ++k) {
    s0 += a[k] * b0[k];
    s1 += a[k] * b1[k];
    s2 += a[k] * b2[k];
    s3 += a[k] * b3[k];
  }
  out[0] = s0;
  out[1] = s1;
  out[2] = s2;
  out[3] = s3;
}

// f.template operator()<V>() for V = count in 1..7 (nothing otherwise): a remainder of whole vectors
// handed to a loop whose length is a compile-time constant, so its accumulators stay in registers.
template <class F>
[[gnu::always_inline]] inline void with_count_1_to_7(int count, F&& f) {
  switch (count) {
    case 7: f.template operator()<7>(); break;
    case 6: f.template operator()<6>(); break;
    case 5: f.template operator()<5>(); break;
    case 4: f.template operator()<4>(); break;
    case 3: f.template operator()<3>(); break;
    case 2: f.template operator()<2>(); break;
    case 1: f.template operator()<1>(); break;
    default: break;
  }
}

// weighted_rows on the V whole vectors from entry k: V independent accumulators.
template <int V>
[[gnu::always_inline]] inline void weighted_rows_tail(const float* w, const float* rows, int d, int j0, int j1,
                                                      float gamma, const float* x, float* out, int k) {
  f8 acc[V];
  for (int v = 0; v < V; ++v) acc[v] = gamma * load(x + k + 8 * v);
  for (int j = j0; j <= j1; ++j) {
    const float* r = rows + std::size_t(j) * d + k;
    const float wj = w[j];
    for (int v = 0; v < V; ++v) acc[v] += wj * load(r + 8 * v);
  }
  std::memcpy(out + k, acc, sizeof acc);
}

// out = gamma * x + sum_{j in [j0, j1]} w[j] * rows[j], over d entries; the output is held in
// registers 64 floats at a time, so each row costs loads and multiply-adds only.
[[gnu::always_inline]] inline void weighted_rows(const float* w, const float* rows, int d, int j0, int j1, float gamma,
                                                 const float* x, float* out) {
  int k = 0;
  for (; k + 64 <= d; k += 64) {
    f8 acc[8];
    for (int v = 0; v < 8; ++v) acc[v] = gamma * load(x + k + 8 * v);
    for (int j = j0; j <= j1; ++j) {
      const float* r = rows + std::size_t(j) * d + k;
      const float wj = w[j];
      for (int v = 0; v < 8; ++v) acc[v] += wj * load(r + 8 * v);
    }
    std::memcpy(out + k, acc, sizeof acc);
  }
  // The remaining whole vectors, all in registers at once (no chain of one accumulator).
  with_count_1_to_7((d - k) / 8, [&]<int V>() __attribute__((always_inline)) {
    weighted_rows_tail<V>(w, rows, d, j0, j1, gamma, x, out, k);
  });
  k += (d - k) / 8 * 8;
  for (; k < d; ++k) {
    float acc = gamma * x[k];
    for (int j = j0; j <= j1; ++j) acc += w[j] * rows[std::size_t(j) * d + k];
    out[k] = acc;
  }
}

// a b + c rounded once, lane by lane (F a float vector type): one vfmadd where the caller's target has
// FMA, else a call to libm's correctly rounded fmaf per lane; the same bits either way. (Not in the
// browser build: WebAssembly has no fused multiply-add, and the lane kernel's portable body, which it
// runs, multiplies and adds; docs/web.md.)
template <class F>
[[gnu::always_inline]] inline F fused(F a, F b, F c) {
  F r;
  for (int t = 0; t < int(sizeof(F) / sizeof(float)); ++t) r[t] = __builtin_fmaf(a[t], b[t], c[t]);
  return r;
}

// a b + c: rounded once (Fused, `fused`) or twice (a multiply, then an add).
template <bool Fused, class F>
[[gnu::always_inline]] inline F multiply_add(F a, F b, F c) {
  if constexpr (Fused) return fused(a, b, c);
  else return a * b + c;
}

// e^x for x <= 0, lane-wise (Cody-Waite reduction x = n ln2 + r, degree-6 polynomial on
// |r| <= ln2/2, Cephes coefficients); relative error about 2e-7. Results below e^-87 flush to 0.
// F is a float vector type and I the int32 vector of the same lane count. `Fused` (the lane kernel's,
// version 0.3.0): each multiply and add that feeds the next rounded once, 19 operations instead of
// 30 (1.6x the throughput on Zen 3; largest relative error 8.3e-8 on [-87, 0]). Unfused, the steps
// are the same operations as a * b + c written out (the negations are exact).
template <class F, class I, bool Fused = false>
[[gnu::always_inline]] inline F exp_nonpositive_lanes(F x) {
  const F lo = F{} - 87.0f;
  const I tiny = x < lo;
  x = tiny ? lo : x;
  // > 0, so truncation rounds n = round(x log2 e)
  const F t = multiply_add<Fused>(x, F{} - 1.44269504088896341f, F{} + 0.5f);
  const I neg_n = __builtin_convertvector(t, I);
  const F neg_fn = __builtin_convertvector(neg_n, F);  // -n
  const F r = multiply_add<Fused>(neg_fn, F{} - 2.12194440e-4f,
                                  multiply_add<Fused>(neg_fn, F{} + 0.693359375f, x));  // (x - n c1) - n c2
  F p = multiply_add<Fused>(F{} + 1.9875691500e-4f, r, F{} + 1.3981999507e-3f);
  p = multiply_add<Fused>(p, r, F{} + 8.3334519073e-3f);
  p = multiply_add<Fused>(p, r, F{} + 4.1665795894e-2f);
  p = multiply_add<Fused>(p, r, F{} + 1.6666665459e-1f);
  p = multiply_add<Fused>(p, r, F{} + 5.0000001201e-1f);
  p = multiply_add<Fused>(p * r, r, r) + 1.0f;  // p r^2 + r + 1
  const I bits = (127 - neg_n) << 23;
  F scale;
  std::memcpy(&scale, &bits, sizeof scale);
  const F y = p * scale;
  return tiny ? F{} : y;
}

[[gnu::always_inline]] inline f8 exp_nonpositive(f8 x) { return exp_nonpositive_lanes<f8, i8>(x); }

}  // namespace maskscope::simd
