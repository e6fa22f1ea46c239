// Emscripten 3.1.6's libc++ predates parts of C++20 that GCC 12's libstdc++ has and the sources use;
// the browser build includes this header first in every file (web.cmake). Only what is missing.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <version>

#ifndef __cpp_lib_bit_cast
namespace std {
// std::bit_cast as libc++ later defined it, on clang's builtin.
template <class To, class From>
constexpr To bit_cast(const From& from) noexcept {
  return __builtin_bit_cast(To, from);
}
}  // namespace std
#endif

#if defined(_LIBCPP_VERSION) && _LIBCPP_VERSION < 14000
namespace maskscope::web_compat {
// std::to_chars(first, last, double): the shortest text that reads back as x, fixed or scientific
// whichever is shorter (fixed on a tie), exponents of at least two digits; "inf", "nan", "-0".
inline std::to_chars_result shortest_chars(char* first, char* last, double x) {
  std::string out;
  if (std::isnan(x)) out = std::signbit(x) ? "-nan" : "nan";
  else if (std::isinf(x)) out = x < 0 ? "-inf" : "inf";
  else if (x == 0) out = std::signbit(x) ? "-0" : "0";
  else {
    char sci[64];
    int p = 1;
    for (; p < 17; ++p) {
      std::snprintf(sci, sizeof sci, "%.*e", p - 1, x);
      if (std::strtod(sci, nullptr) == x) break;
    }
    std::snprintf(sci, sizeof sci, "%.*e", p - 1, x);
    const std::string s = sci;
    const bool negative = s[0] == '-';
    const std::size_t e_at = s.find('e');
    std::string digits;
    for (std::size_t k = negative ? 1 : 0; k < e_at; ++k)
      if (s[k] != '.') digits += s[k];
    const int e = std::atoi(s.c_str() + e_at + 1);
    std::string fixed;
    if (e >= 0) {
      if (int(digits.size()) <= e + 1) fixed = digits + std::string(std::size_t(e + 1) - digits.size(), '0');
      else fixed = digits.substr(0, std::size_t(e + 1)) + "." + digits.substr(std::size_t(e + 1));
    } else {
      fixed = "0." + std::string(std::size_t(-e - 1), '0') + digits;
    }
    if (negative) fixed = "-" + fixed;
    out = fixed.size() <= s.size() ? fixed : s;
  }
  if (out.size() > std::size_t(last - first)) return {last, std::errc::value_too_large};
  std::memcpy(first, out.data(), out.size());
  return {first + out.size(), std::errc{}};
}
}  // namespace maskscope::web_compat

namespace std {
inline to_chars_result to_chars(char* first, char* last, double x) {
  return maskscope::web_compat::shortest_chars(first, last, x);
}
inline to_chars_result to_chars(char* first, char* last, float x) {
  return maskscope::web_compat::shortest_chars(first, last, double(x));
}
}  // namespace std
#endif
