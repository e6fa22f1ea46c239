// Values at float resolution (docs/model.md section 4.1): the one tolerance below which the kernels' float
// values are not told apart, the comparisons that use it, and why an estimate is null or has SE 0 (the notes
// the JSON, Python and the window show beside it).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string_view>

namespace maskscope {

// 64 float ulps of 1: two values a kernel compares tie when they are within kFloatResolution of the largest
// magnitude m among those it compares them with, |b - a| <= t, t = kFloatResolution m; an estimate is at
// float resolution when its per-sample values spread by no more than that. The rounding a value carries is
// that of every n-term softmax sum and d-term product it went through: at alpha 1 (every token the same, so
// every order is a tie) it reached 20-40 ulps at n 40 in a stack without Norm and with the residual, and 64
// ulps covered every setting tried up to n 128 (docs/numerics.md). A power of two, so t = m 2^-17 is exact
// on every path, fused or not, and scales exactly with the values.
inline constexpr float kFloatResolutionUlps = 64.0f;
inline constexpr float kFloatResolution = kFloatResolutionUlps * 0x1p-23f;
static_assert(kFloatResolution == 0x1p-17f, "a power of two: t is exact and scales with the values");

// The tie tolerance t of the values x[lo .. hi): kFloatResolution times their largest magnitude.
[[gnu::always_inline]] inline float tie_tolerance(const float* x, int lo, int hi) {
  float m = 0.0f;
  for (int a = lo; a < hi; ++a) m = std::max(m, std::fabs(x[a]));
  return kFloatResolution * m;
}

// The order of a later value b against an earlier value a at tolerance t: +1 (b above a by more than t),
// -1 (below by more than t), 0 (a tie). Evaluated as a < fl(b - t) and a > fl(b + t), the two comparisons
// the kernels' vector loops make; t = 0 is the exact comparison.
[[gnu::always_inline]] inline int order_at_resolution(float a, float b, float t) {
  return a < b - t ? 1 : a > b + t ? -1 : 0;
}

// Whether a spread (a standard deviation over samples) is at float resolution for values of magnitude up to
// `scale`: no more than kFloatResolution scale.
inline bool at_float_resolution(double spread, double scale) {
  return spread <= double(kFloatResolution) * std::fabs(scale);
}

// Why an estimate is null or has SE 0 though it averages many samples (docs/model.md section 4.1). The
// JSON writes the text beside the value (key_note), Python gives it as key_note, the window in a tooltip.
enum class EstimateNote : std::uint8_t {
  none,
  // SE 0: the samples' values differed, by float rounding only; the value is exact at that resolution.
  exact_at_float_resolution,
  // dR^2 null: the map's values are all equal up to float resolution (nothing for the position to explain).
  constant_at_float_resolution,
  // dR^2 0 with SE 0: the query position moves the values by less than float resolution in every sample.
  below_float_resolution,
  // a ratio null: its denominator is not significantly above 0 (within 3 SE of it).
  denominator_not_significant,
};

constexpr std::string_view note_text(EstimateNote n) {
  switch (n) {
    case EstimateNote::none: return "";
    case EstimateNote::exact_at_float_resolution:
      return "the samples differ by float rounding only: exact at float resolution, SE 0";
    case EstimateNote::constant_at_float_resolution:
      return "the map is constant up to float resolution: no variance for the query position to explain";
    case EstimateNote::below_float_resolution:
      return "the query position moves the values by less than float resolution: 0, SE 0";
    case EstimateNote::denominator_not_significant:
      return "the denominator is not significantly above 0 (within 3 SE): a ratio to noise";
  }
  return "";
}

}  // namespace maskscope
