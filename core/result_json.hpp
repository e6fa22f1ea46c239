// The JSON contract of `maskscope-cli run` (and of exported figures): settings and snapshot.
#pragma once

#include <nlohmann/json.hpp>

#include "settings.hpp"
#include "snapshot.hpp"

namespace maskscope {

nlohmann::json settings_to_json(const Settings& s);
// Reads every present key; keys not present keep the values already in `s`. Throws
// std::runtime_error naming the key on a wrong type or an unknown enum name.
void settings_from_json(const nlohmann::json& j, Settings& s);

// config, samples, elapsed_s, samples_per_s, layers[...] as documented in the README.
nlohmann::json snapshot_to_json(const Snapshot& snap);

}  // namespace maskscope
