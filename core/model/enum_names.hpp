// One table of names per enum: to_string, parsing and the "valid: a, b, c" of error messages all read
// the same table, so a new value is added in one place.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace maskscope {

template <class E>
struct EnumName {
  E value;
  std::string_view name;
};

template <class E, std::size_t N>
using EnumTable = std::array<EnumName<E>, N>;

// The name of v in table t ("?" for a value the table lacks).
template <class E, std::size_t N>
constexpr std::string_view enum_name(const EnumTable<E, N>& t, E v) {
  for (const auto& e : t)
    if (e.value == v) return e.name;
  return "?";
}

// The value named `name`, or nullopt.
template <class E, std::size_t N>
constexpr std::optional<E> enum_value(const EnumTable<E, N>& t, std::string_view name) {
  for (const auto& e : t)
    if (e.name == name) return e.value;
  return std::nullopt;
}

// "a, b, c" (or with another separator, e.g. " | " for help texts).
template <class E, std::size_t N>
std::string enum_names_text(const EnumTable<E, N>& t, std::string_view separator = ", ") {
  std::string out;
  for (const auto& e : t) {
    if (!out.empty()) out += separator;
    out += e.name;
  }
  return out;
}

// The value named `name`; otherwise throws std::runtime_error "WHAT: 'name'; valid: a, b, c" (presets, view
// JSON and command lines name the bad value and the valid ones).
template <class E, std::size_t N>
E enum_value_or_throw(const EnumTable<E, N>& t, std::string_view name, std::string_view what) {
  if (const auto v = enum_value(t, name)) return *v;
  throw std::runtime_error(std::string(what) + ": '" + std::string(name) + "'; valid: " + enum_names_text(t));
}

}  // namespace maskscope
