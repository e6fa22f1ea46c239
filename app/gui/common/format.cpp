// Number formatting and the series palette (see format.hpp).
#include "common/format.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace maskscope::gui {

std::string value_with_se(double v, double se) {
  if (!std::isfinite(v)) return "n/a";
  int decimals = 4;
  if (std::isfinite(se) && se > 0) decimals = std::clamp(1 - int(std::floor(std::log10(se))), 4, 8);
  char buf[64];
  if (!std::isfinite(se)) std::snprintf(buf, sizeof buf, "%.*f \u00b1 --", decimals, v);  // not known
  else std::snprintf(buf, sizeof buf, "%.*f \u00b1 %.*f", decimals, v, decimals, se);
  return buf;
}

std::string value_with_se(double v, double se, std::int64_t samples) {
  return value_with_se(v, samples < 2 ? kUnknownSe : se);
}

std::string se_text(double se, std::int64_t samples) {
  return samples < 2 || !std::isfinite(se) ? "--" : compact_number(se, 2);
}

std::string tick_text(double v, double step) {
  const int decimals = !(step > 0) || step >= 1 ? 0 : std::min(8, int(std::ceil(-std::log10(step) - 1e-9)));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, std::fabs(v) < std::fabs(step) * 1e-6 ? 0.0 : v);
  return buf;
}

std::string compact_number(double v, int digits) {
  if (!std::isfinite(v)) return "n/a";
  if (v == 0) return "0";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::vector<ColorbarTick> colorbar_ticks(double lo, double hi) {
  const double mid = 0.5 * (lo + hi);
  const double span = std::fabs(hi - lo);
  std::vector<ColorbarTick> ticks = {{lo, ""}, {mid, ""}, {hi, ""}};
  for (int digits = 2; digits <= 8; ++digits) {
    bool ok = true;
    for (auto& t : ticks) {
      // A value within a millionth of the range of 0 is 0 (a symmetric range's middle).
      const double v = span > 0 && std::fabs(t.value) < span * 1e-6 ? 0.0 : t.value;
      t.text = compact_number(v, digits);
      const double back = std::strtod(t.text.c_str(), nullptr);
      if (span > 0 && std::fabs(back - v) > 0.01 * span) ok = false;
    }
    ok = ok && (span == 0 || (ticks[0].text != ticks[1].text && ticks[1].text != ticks[2].text));
    if (ok) break;
  }
  return ticks;
}

std::string with_thousands(std::int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v), out;
  for (std::size_t k = 0; k < digits.size(); ++k) {
    if (k > 0 && (digits.size() - k) % 3 == 0) out += ',';
    out += digits[k];
  }
  return v < 0 ? "-" + out : out;
}

std::array<float, 3> series_color(std::size_t k) {
  static const std::array<float, 3> tab10[] = {
      {0.122f, 0.467f, 0.706f}, {1.000f, 0.498f, 0.055f}, {0.173f, 0.627f, 0.173f}, {0.839f, 0.153f, 0.157f},
      {0.580f, 0.404f, 0.741f}, {0.549f, 0.337f, 0.294f}, {0.890f, 0.467f, 0.761f}, {0.498f, 0.498f, 0.498f}};
  return tab10[k % 8];
}

}  // namespace maskscope::gui
