// Settings as text (settings_text.hpp).
#include "core/model/settings_text.hpp"

#include <algorithm>
#include <stdexcept>
#include <type_traits>
#include <variant>

#include "core/model/strict_number.hpp"

namespace maskscope {

namespace {

// A row's value as settings_to_json writes it.
nlohmann::json row_to_json(const SettingInfo& row, const Settings& s) {
  switch (row.kind) {
    case SettingKind::enumeration: return std::string(row.names.name_at(row.names.index_of(s)));
    case SettingKind::mask: return mask_to_string(s);
    default: break;
  }
  return std::visit(
      [&](auto member) -> nlohmann::json {
        using M = decltype(member);
        if constexpr (std::is_same_v<M, std::monostate>) return nullptr;
        else if constexpr (std::is_same_v<M, std::optional<double> Settings::*>)
          return (s.*member) ? nlohmann::json(*(s.*member)) : nlohmann::json(nullptr);  // null: follows another
        else if constexpr (std::is_same_v<M, std::string Settings::*>)
          return (s.*member).empty() ? nlohmann::json(nullptr) : nlohmann::json(s.*member);  // null: uniform ids
        else return s.*member;
      },
      row.member);
}

// One row from JSON through the one strict conversion (strict_number.hpp): no wrapping, no clamping.
// `label` names the key in messages ("settings.n").
void row_from_json(const SettingInfo& row, const nlohmann::json& v, const std::string& label, Settings& t) {
  auto name = [&] {
    if (!v.is_string()) throw std::runtime_error(label + ": " + number_text(v) + " is not a name");
    return v.get<std::string>();
  };
  switch (row.kind) {
    case SettingKind::enumeration: {  // by its name in the enum's one table, or a message listing the names
      const std::string text = name();
      for (std::size_t i = 0; i < row.names.count; ++i)
        if (row.names.name_at(i) == text) return row.names.set_index(t, i);
      std::string valid;
      for (std::size_t i = 0; i < row.names.count; ++i) valid += (i ? ", " : "") + std::string(row.names.name_at(i));
      throw std::runtime_error(label + ": '" + text + "'; valid: " + valid);
    }
    case SettingKind::mask: {
      const std::string text = name();
      if (!parse_mask(text, t))
        throw std::runtime_error(label + ": '" + text + "'; valid: causal, bidirectional, window:W with W in [1, n]");
      return;
    }
    default: break;
  }
  std::visit(
      [&](auto member) {
        using M = decltype(member);
        if constexpr (std::is_same_v<M, std::monostate>) return;
        else if constexpr (std::is_same_v<M, int Settings::*>)
          t.*member = int(whole_number(label, v, std::int64_t(row.min), std::int64_t(row.max)));
        else if constexpr (std::is_same_v<M, std::int64_t Settings::*>)
          t.*member = whole_number(label, v, std::int64_t(row.min), std::int64_t(row.max));
        else if constexpr (std::is_same_v<M, std::uint64_t Settings::*>) t.*member = whole_number_u64(label, v);
        else if constexpr (std::is_same_v<M, double Settings::*>) t.*member = real_number(label, v, row.min, row.max);
        else if constexpr (std::is_same_v<M, std::optional<double> Settings::*>) {
          if (v.is_null()) (t.*member).reset();  // null: follows another setting (init_std, the embedding std)
          else t.*member = real_number(label, v, row.min, row.max);
        } else if constexpr (std::is_same_v<M, bool Settings::*>) t.*member = boolean(label, v);
        else if constexpr (std::is_same_v<M, std::string Settings::*>)  // a path, checked by validate(); null: none
          t.*member = v.is_null() ? std::string() : name();
      },
      row.member);
}

}  // namespace

SettingValue setting_value(const SettingInfo& row) {
  switch (row.kind) {
    case SettingKind::real:
    case SettingKind::optional_real: return SettingValue::real;
    case SettingKind::whole:
    case SettingKind::u64: return SettingValue::whole;
    default: return SettingValue::name;
  }
}

nlohmann::json settings_to_json(const Settings& s) {
  nlohmann::json j = nlohmann::json::object();
  for (const SettingInfo& row : setting_table()) j[row.key] = row_to_json(row, s);
  return j;
}

void settings_from_json(const nlohmann::json& j, Settings& s, const std::string& where) {
  if (!j.is_object()) throw std::runtime_error(where + ": expected a JSON object of settings");
  Settings t = s;
  for (const SettingInfo& row : setting_table())
    if (j.contains(row.key))
      row_from_json(row, j.at(row.key), where.empty() ? std::string(row.key) : where + "." + row.key, t);
  s = t;
}

void setting_from_text(const std::string& key, const std::string& text, Settings& s) {
  const SettingInfo* row = setting_info(key);
  // Numbers strictly decimal; names, paths, masks and booleans as typed (boolean() reads "0", "1", "true", "false").
  const bool number = !row || setting_value(*row) != SettingValue::name;
  settings_from_json(nlohmann::json{{key, number ? number_from_text(key, text) : nlohmann::json(text)}}, s, "");
}

const std::vector<std::string>& setting_keys() {
  static const std::vector<std::string> keys = [] {
    const nlohmann::json defaults = settings_to_json(Settings{});
    std::vector<std::string> k;
    for (auto it = defaults.begin(); it != defaults.end(); ++it) k.push_back(it.key());
    return k;
  }();
  return keys;
}

std::string setting_value_label(std::string_view key, const std::string& value) {
  const SettingInfo* row = setting_info(key);
  if (!row) return value;
  if (row->kind == SettingKind::mask) {  // "window:4" is the sliding window of width 4
    if (value.rfind("window:", 0) == 0)
      return std::string(enum_name(kMaskKindLabels, MaskKind::window)) + " " + value.substr(7);
    const auto kind = enum_value(kMaskKindNames, value);
    return kind ? std::string(enum_name(kMaskKindLabels, *kind)) : value;
  }
  if (row->kind != SettingKind::enumeration || !row->names.label_at) return value;
  for (std::size_t i = 0; i < row->names.count; ++i)
    if (row->names.name_at(i) == value) return std::string(row->names.label_at(i));
  return value;
}

std::string setting_keys_text() {
  std::string text;
  for (const auto& k : setting_keys()) text += (text.empty() ? "" : ", ") + k;
  return text;
}

void apply_settings_json(const nlohmann::json& j, Settings& s, const std::string& where) {
  if (!j.is_object()) throw std::runtime_error(where + ": expected a JSON object of settings");
  const auto& keys = setting_keys();
  for (const auto& [key, value] : j.items())
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      throw std::runtime_error(where + ": unknown setting '" + key + "'; valid: " + setting_keys_text());
  const bool was_random_weights = s.random_weights();
  settings_from_json(j, s, where);
  apply_family_default_gamma(s, was_random_weights, j.contains("gamma"));
  // The window width means nothing without the sliding-window mask, and JSON does not carry it then.
  if (s.mask != MaskKind::window) s.window = Settings{}.window;
}

void check_object_keys(const nlohmann::json& j, const std::string& where, std::initializer_list<const char*> keys) {
  if (!j.is_object()) throw std::runtime_error(where + ": expected a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string key = it.key();
    if (std::none_of(keys.begin(), keys.end(), [&](const char* k) { return key == k; })) {
      std::string valid;
      for (const char* k : keys) valid += (valid.empty() ? "" : ", ") + std::string(k);
      throw std::runtime_error(where + ": unknown key '" + key + "'; valid: " + valid);
    }
  }
}

void apply_family_default_gamma(Settings& s, bool was_random_weights, bool gamma_given) {
  if (s.random_weights() && !was_random_weights && !gamma_given) s.gamma = 1.0;
}

std::span<const SettingFlag> setting_flags() { return setting_table(); }

const SettingFlag* setting_flag(const std::string& key) { return setting_info(key); }

std::string setting_key_of(const std::string& name) {
  for (const SettingInfo& row : setting_table())
    if (name == row.flag || name == row.key) return row.key;
  return "";
}

std::string default_text(const std::string& key) {
  const nlohmann::json defaults = settings_to_json(Settings{});
  if (!defaults.contains(key)) return "";
  const nlohmann::json& d = defaults.at(key);
  if (d.is_null()) return "";
  return d.is_string() ? d.get<std::string>() : d.is_boolean() ? (d.get<bool>() ? "1" : "0") : d.dump();
}

}  // namespace maskscope
