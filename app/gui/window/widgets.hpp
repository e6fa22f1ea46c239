// Dear ImGui widgets over maskscope's own tables: a combo box of an enum's name table (settings.hpp's
// k*Names), so the list, its order and the value written all come from the table and no int is cast; and
// a combo box of a settings table row's enum.
#pragma once

#include <imgui.h>

#include <array>
#include <cstddef>
#include <vector>

#include "core/model/enum_names.hpp"
#include "core/model/settings.hpp"

namespace maskscope::gui {

// A combo box of the values of `table`, shown as `shown` (one label per row of the table, in its order);
// true when the user picked another value, which is then in `value`.
template <class E, std::size_t N>
bool enum_combo(const char* label, E& value, const EnumTable<E, N>& table, const std::array<const char*, N>& shown) {
  int index = 0;
  for (std::size_t i = 0; i < N; ++i)
    if (table[i].value == value) index = int(i);
  if (!ImGui::Combo(label, &index, shown.data(), int(N)) || table[std::size_t(index)].value == value) return false;
  value = table[std::size_t(index)].value;
  return true;
}

// The same with the table's own names ("layernorm") as the labels.
template <class E, std::size_t N>
bool enum_combo(const char* label, E& value, const EnumTable<E, N>& table) {
  std::array<const char*, N> shown{};
  for (std::size_t i = 0; i < N; ++i) shown[i] = table[i].name.data();  // the tables' names are literals
  return enum_combo(label, value, table, shown);
}

// The same with a label table (settings.hpp's k*Labels: "1/sqrt(d)" for sqrt_d) as the labels.
template <class E, std::size_t N>
bool enum_combo(const char* label, E& value, const EnumTable<E, N>& table, const EnumTable<E, N>& labels) {
  std::array<const char*, N> shown{};
  for (std::size_t i = 0; i < N; ++i) shown[i] = enum_name(labels, table[i].value).data();  // literals
  return enum_combo(label, value, table, shown);
}

// A combo box of an enumeration row of the settings table (its names, in its table's order); true on a change.
inline bool setting_combo(const char* label, Settings& s, const SettingInfo& row) {
  std::vector<const char*> shown;
  for (std::size_t i = 0; i < row.names.count; ++i) shown.push_back(row.names.name_at(i).data());
  int index = int(row.names.index_of(s));
  if (!ImGui::Combo(label, &index, shown.data(), int(shown.size())) || std::size_t(index) == row.names.index_of(s))
    return false;
  row.names.set_index(s, std::size_t(index));
  return true;
}

}  // namespace maskscope::gui
