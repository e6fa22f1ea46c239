// Number and colour formatting shared by the live window and every export: one home for
// "value ± SE", tick labels, colorbar labels and the series palette.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/stats/estimate.hpp"

namespace maskscope::gui {

inline constexpr double kUnknownSe = std::numeric_limits<double>::quiet_NaN();

// "0.63824 ± 0.00003": at least 4 decimals (the papers' precision), more when the standard error
// needs them, so the SE always shows one or two significant digits. "n/a" when v is not finite.
// An SE that is not known (NaN) shows as "--": "0.4909 ± --".
std::string value_with_se(double v, double se);
// The same from `samples` samples: an SE from fewer than 2 is not known (the core reports 0), so "± --".
std::string value_with_se(double v, double se, std::int64_t samples);
// An estimate: "--" when it is null for a reason of float resolution (docs/model.md section 4.1; the reason,
// note_text(e.note), is for the value's tooltip).
inline std::string value_with_se(const Estimate& e) {
  if (!(e.mean == e.mean) && e.note != EstimateNote::none) return "--";  // NaN with a note
  return value_with_se(e.mean, e.se, e.samples);
}
// A tooltip's text: `description`, and the estimate's note on a line of its own when it has one.
inline std::string with_note(std::string description, const Estimate& e) {
  if (e.note != EstimateNote::none) description += "\n\n" + std::string(note_text(e.note));
  return description;
}
// An SE on its own ("0.00031"), "--" while not known (fewer than 2 samples, or NaN).
std::string se_text(double se, std::int64_t samples);

// Tick label for a tick at v on an axis whose ticks are `step` apart: enough decimals to tell
// neighbouring ticks apart, no more; "0" for a tick at zero, never "-0".
std::string tick_text(double v, double step);

// Colorbar labels for a range [lo, hi]: always both ends and the middle, each with the fewest
// significant digits (at least 2) that keep the three labels distinct and each within 1% of the
// range of its value. Used on screen and in exports.
struct ColorbarTick {
  double value = 0;
  std::string text;
};
std::vector<ColorbarTick> colorbar_ticks(double lo, double hi);

// A compact number: "0.00123", "1.2e-07", "3.5e+04" (the shortest of %g forms at `digits`).
std::string compact_number(double v, int digits);

// 1234567 -> "1,234,567".
std::string with_thousands(std::int64_t v);

// The series palette (matplotlib's tab10 order), RGB in [0, 1]. Series k keeps its colour.
std::array<float, 3> series_color(std::size_t k);

}  // namespace maskscope::gui
