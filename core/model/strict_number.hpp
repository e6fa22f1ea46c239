// The one checked conversion for every number maskscope reads from text (command line, --set)
// or JSON (presets, lessons): decimal only, the whole text, finite, whole where a whole number is
// needed, in range; anything else is refused with a message naming the key, the value and the
// valid range. No silent clamping, wrapping or C prefixes (010, 0x10).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

namespace maskscope {

struct NumberError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A decimal number written out in full: optional '-', digits, optional fraction and exponent.
// Integer literals that fit become JSON integers, others JSON floats. Throws NumberError naming
// `key` for empty text, hex, "inf"/"nan", spaces, a leading '+' or anything after the number.
nlohmann::json number_from_text(std::string_view key, std::string_view text);

// A whole number in [lo, hi] from JSON (an integer, or a float with no fraction); throws
// NumberError "key: VALUE is ...; valid: whole number in [lo, hi]".
std::int64_t whole_number(std::string_view key, const nlohmann::json& v, std::int64_t lo, std::int64_t hi);
// The same for the full unsigned 64-bit range (seeds).
std::uint64_t whole_number_u64(std::string_view key, const nlohmann::json& v);
// A finite number in [lo, hi].
double real_number(std::string_view key, const nlohmann::json& v, double lo, double hi);
// true/false from JSON booleans; from text "0", "1", "true", "false".
bool boolean(std::string_view key, const nlohmann::json& v);

// A number's text for messages: integers as integers, others with up to 17 digits.
std::string number_text(const nlohmann::json& v);

}  // namespace maskscope
