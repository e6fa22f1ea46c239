// Strict number conversions (see strict_number.hpp).
#include "core/model/strict_number.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace maskscope {

namespace {

std::string range_text(double lo, double hi) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "[%.17g, %.17g]", lo, hi);
  return buf;
}

[[noreturn]] void refuse(std::string_view key, const std::string& what) {
  throw NumberError(std::string(key) + ": " + what);
}

}  // namespace

std::string number_text(const nlohmann::json& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  if (v.is_number_float()) {  // the shortest form that reads back the same (10.7, not 10.699999999999999)
    char buf[64];
    const double x = v.get<double>();
    // A whole number past 64 bits (a seed of 2^70 typed as digits) as its digits, not 1.1805916207174113e+21:
    // the exact value of the double, which is the typed number wherever the double holds it.
    if (std::isfinite(x) && x == std::floor(x) && std::fabs(x) >= 9007199254740992.0 && std::fabs(x) < 0x1p127) {
      std::snprintf(buf, sizeof buf, "%.0f", x);
      return buf;
    }
    for (int digits = 15; digits <= 17; ++digits) {
      std::snprintf(buf, sizeof buf, "%.*g", digits, v.get<double>());
      if (std::strtod(buf, nullptr) == v.get<double>()) break;
    }
    return buf;
  }
  if (v.is_string()) {
    std::string quoted = "'";
    quoted += v.get<std::string>();
    quoted += "'";
    return quoted;
  }
  return v.dump();
}

nlohmann::json number_from_text(std::string_view key, std::string_view text) {
  const std::string t(text);
  if (t.empty()) refuse(key, "empty value; expected a decimal number");
  if (t.rfind("--", 0) == 0) refuse(key, "needs a value, got the flag '" + t + "'");
  // Grammar: -?digits(.digits)?([eE][+-]?digits)?  (no hex, inf, nan, spaces or '+').
  std::size_t k = 0;
  const bool negative = t[k] == '-';
  if (negative) ++k;
  const std::size_t int_start = k;
  while (k < t.size() && std::isdigit(static_cast<unsigned char>(t[k]))) ++k;
  bool integer = true;
  std::size_t digits = k - int_start;
  if (k < t.size() && t[k] == '.') {
    integer = false;
    ++k;
    const std::size_t f = k;
    while (k < t.size() && std::isdigit(static_cast<unsigned char>(t[k]))) ++k;
    digits += k - f;
  }
  if (digits > 0 && k < t.size() && (t[k] == 'e' || t[k] == 'E')) {
    integer = false;
    ++k;
    if (k < t.size() && (t[k] == '+' || t[k] == '-')) ++k;
    const std::size_t e = k;
    while (k < t.size() && std::isdigit(static_cast<unsigned char>(t[k]))) ++k;
    if (k == e) digits = 0;
  }
  if (digits == 0 || k != t.size()) refuse(key, "'" + t + "' is not a decimal number");
  if (integer) {
    errno = 0;
    char* end = nullptr;
    if (negative) {
      const long long v = std::strtoll(t.c_str(), &end, 10);
      if (errno == 0) return nlohmann::json(std::int64_t(v));
    } else {
      const unsigned long long v = std::strtoull(t.c_str(), &end, 10);
      if (errno == 0) return nlohmann::json(std::uint64_t(v));
    }
  }
  errno = 0;
  const double v = std::strtod(t.c_str(), nullptr);
  if (!std::isfinite(v)) refuse(key, "'" + t + "' is too large");
  return nlohmann::json(v);
}

std::int64_t whole_number(std::string_view key, const nlohmann::json& v, std::int64_t lo, std::int64_t hi) {
  const std::string valid = "; valid: whole number in " + range_text(double(lo), double(hi));
  if (v.is_number_integer() && !v.is_number_unsigned()) {
    const std::int64_t x = v.get<std::int64_t>();
    if (x < lo || x > hi) refuse(key, number_text(v) + " is out of range" + valid);
    return x;
  }
  if (v.is_number_unsigned()) {
    const std::uint64_t x = v.get<std::uint64_t>();
    if (hi < 0 || x > std::uint64_t(hi) || (lo > 0 && x < std::uint64_t(lo)))
      refuse(key, number_text(v) + " is out of range" + valid);
    return std::int64_t(x);
  }
  if (v.is_number_float()) {
    const double x = v.get<double>();
    if (!std::isfinite(x) || x != std::floor(x)) refuse(key, number_text(v) + " is not a whole number" + valid);
    if (x < double(lo) || x > double(hi)) refuse(key, number_text(v) + " is out of range" + valid);
    return std::int64_t(x);
  }
  refuse(key, number_text(v) + " is not a number" + valid);
}

std::uint64_t whole_number_u64(std::string_view key, const nlohmann::json& v) {
  const std::string valid = "; valid: whole number in [0, 18446744073709551615]";
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer()) {
    const std::int64_t x = v.get<std::int64_t>();
    if (x < 0) refuse(key, number_text(v) + " is out of range" + valid);
    return std::uint64_t(x);
  }
  if (v.is_number_float()) {
    const double x = v.get<double>();
    if (!std::isfinite(x) || x != std::floor(x)) refuse(key, number_text(v) + " is not a whole number" + valid);
    if (x < 0 || x >= 18446744073709551616.0) refuse(key, number_text(v) + " is out of range" + valid);
    return std::uint64_t(x);
  }
  refuse(key, number_text(v) + " is not a number" + valid);
}

double real_number(std::string_view key, const nlohmann::json& v, double lo, double hi) {
  const std::string valid = "; valid: number in " + range_text(lo, hi);
  if (!v.is_number()) refuse(key, number_text(v) + " is not a number" + valid);
  const double x = v.get<double>();
  if (!std::isfinite(x) || x < lo || x > hi) refuse(key, number_text(v) + " is out of range" + valid);
  return x;
}

bool boolean(std::string_view key, const nlohmann::json& v) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_string()) {
    const std::string t = v.get<std::string>();
    if (t == "1" || t == "true") return true;
    if (t == "0" || t == "false") return false;
  }
  if (v.is_number_integer() && (v.get<std::int64_t>() == 0 || v.get<std::int64_t>() == 1))
    return v.get<std::int64_t>() == 1;
  refuse(key, number_text(v) + " is not allowed; valid: 0, 1, true, false");
}

}  // namespace maskscope
