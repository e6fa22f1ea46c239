// The JSON contract of `maskscope-cli run` (and of exported figures): settings and snapshot.
#pragma once

#include <nlohmann/json.hpp>

#include <initializer_list>
#include <string>
#include <vector>

#include "core/model/settings.hpp"
#include "core/model/settings_text.hpp"
#include "core/stats/position_probe.hpp"
#include "core/stats/snapshot.hpp"

namespace maskscope {

// config, samples, elapsed_s, samples_per_s, layers[...] as documented in docs/cli.md.
nlohmann::json snapshot_to_json(const Snapshot& snap);

// The position probes (position_probe.hpp): {"probe": {...options}, "layers": [{"layer": l, "x": {"pearson_r",
// "pearson_r_se", "nrmse", "nrmse_se"}, "var": {...}, "sim": {...}}]}, layer 0 the embeddings (docs/cli.md).
nlohmann::json probe_table_to_json(const ProbeTable& t, const ProbeRequest& r);

}  // namespace maskscope
