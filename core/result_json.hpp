// The JSON contract of `maskscope-cli run` (and of exported figures): settings and snapshot.
#pragma once

#include <nlohmann/json.hpp>

#include <initializer_list>
#include <string>
#include <vector>

#include "settings.hpp"
#include "snapshot.hpp"

namespace maskscope {

nlohmann::json settings_to_json(const Settings& s);
// Reads every present key; keys not present keep the values already in `s`. Throws
// std::runtime_error naming the key, the value and the valid range on a wrong type, a number that
// is not whole where it must be, out of range, or an unknown enum name (strict_number.hpp).
// `where` prefixes every key in messages ("settings" gives "settings.n: ..."; "" gives "n: ...").
void settings_from_json(const nlohmann::json& j, Settings& s, const std::string& where = "settings");
// One setting from command-line text ("--n 10", "--set n=10"): numbers strictly decimal, enums by
// name, unit_input 0/1/true/false. Throws std::runtime_error naming the setting.
void setting_from_text(const std::string& key, const std::string& text, Settings& s);

// The setting names of the CLI, presets and `--set` (one list for all of them), and the same
// as "n, d, layers, ..." for messages.
const std::vector<std::string>& setting_keys();
std::string setting_keys_text();
// settings_from_json for a partial settings object from a file or the command line: refuses
// unknown keys, and names `where` (e.g. "figure.rows[2].set") in every error. Switching to the
// random-weight family without a "gamma" key sets gamma to its default 1.
void apply_settings_json(const nlohmann::json& j, Settings& s, const std::string& where);

// Refuses a non-object or a key not in `keys`: "WHERE: unknown key 'k'; valid: a, b, c" (presets, lessons).
void check_object_keys(const nlohmann::json& j, const std::string& where, std::initializer_list<const char*> keys);

// config, samples, elapsed_s, samples_per_s, layers[...] as documented in the README.
nlohmann::json snapshot_to_json(const Snapshot& snap);

}  // namespace maskscope
