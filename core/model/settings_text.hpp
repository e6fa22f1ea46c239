// Settings as text, the one home for it: JSON (results, presets, lessons, figures), command-line
// flags and `--set key=value`, the setting keys, the flags' help, and the defaults and rules that every
// front end (CLI, window, presets) shares, such as the random-weight family's residual strength.
#pragma once

#include <nlohmann/json.hpp>

#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/settings.hpp"

namespace maskscope {

nlohmann::json settings_to_json(const Settings& s);
// Reads every present key; keys not present keep the values already in `s`. Throws
// std::runtime_error naming the key, the value and the valid range on a wrong type, a number that
// is not whole where it must be, out of range, or an unknown enum name (strict_number.hpp).
// `where` prefixes every key in messages ("settings" gives "settings.n: ..."; "" gives "n: ...").
void settings_from_json(const nlohmann::json& j, Settings& s, const std::string& where = "settings");
// One setting from command-line text ("--n 10", "--set n=10"): numbers strictly decimal, enums by
// name, booleans 0/1/true/false. Throws std::runtime_error naming the setting.
void setting_from_text(const std::string& key, const std::string& text, Settings& s);

// The setting names of the CLI, presets and `--set` (one list for all of them), and the same
// as "n, d, layers, ..." for messages.
const std::vector<std::string>& setting_keys();
std::string setting_keys_text();
// The label a reader knows for a setting's value as text (axis_value_text, JSON): an enum's name becomes its
// label ("scale", "d" gives "1/d"; "mask", "window:4" gives "sliding window 4"); other values come back as given.
std::string setting_value_label(std::string_view key, const std::string& value);
// settings_from_json for a partial settings object from a file or the command line: refuses
// unknown keys, and names `where` (e.g. "figure.rows[2].set") in every error. Switching to the
// random-weight family without a "gamma" key sets gamma to its default 1.
void apply_settings_json(const nlohmann::json& j, Settings& s, const std::string& where);

// Refuses a non-object or a key not in `keys`: "WHERE: unknown key 'k'; valid: a, b, c" (presets, lessons).
void check_object_keys(const nlohmann::json& j, const std::string& where, std::initializer_list<const char*> keys);

// The random-weight family's residual strength defaults to 1 (a GPT-2 block; docs/model.md section 7):
// a change of family to random_weights that did not give gamma sets it. Every front end (CLI flags,
// `--set`, presets, the window's model switch) applies this one rule.
void apply_family_default_gamma(Settings& s, bool was_random_weights, bool gamma_given);

// One command-line flag of a setting: the CLI's `run`, `leakage`, `sweep` and `probe` and the window take
// every row of the settings table (settings.hpp) as a flag. What a setting's text is for a sweep's ranges:
// a real number, a whole number (rounded from a range), or a name (an enum's, a mask, a path, or 0/1).
enum class SettingValue { real, whole, name };
using SettingFlag = SettingInfo;
SettingValue setting_value(const SettingInfo& row);
std::span<const SettingFlag> setting_flags();
// The row of a setting key ("init_std"), or nullptr (setting_info).
const SettingFlag* setting_flag(const std::string& key);
// The setting key of a flag name or of a key ("init-std" and "init_std" both give "init_std"); "" if none.
std::string setting_key_of(const std::string& name);
// The default value of a setting as help texts show it ("0.5", "layernorm", "1"); "" for one unset by
// default (an optional std, no token file).
std::string default_text(const std::string& key);

}  // namespace maskscope
