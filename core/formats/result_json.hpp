// The JSON contract of `maskscope-cli run` (and of exported figures): settings and snapshot.
#pragma once

#include <nlohmann/json.hpp>

#include <initializer_list>
#include <string>
#include <vector>

#include "core/model/settings.hpp"
#include "core/model/settings_text.hpp"
#include "core/stats/metric_table.hpp"
#include "core/stats/position_probe.hpp"
#include "core/stats/snapshot.hpp"

namespace maskscope {

// One estimate as every JSON writes it: KEY, KEY_se and (ties) KEY_ties; non-finite numbers null.
void add_estimate(nlohmann::json& out, std::string_view key, const Estimate& e, bool ties);
// A layer's estimates of the metric table (metric_table.hpp) of one group (all: every row), those of the
// random-weight family only with `random_weights`.
void add_metrics(nlohmann::json& out, const LayerStats& l, bool random_weights, MetricGroup only = MetricGroup::all);
// A layer's leakage as `run` writes it: layer, the leakage estimates and delta_r2_mean_map, r2_base and
// delta_r2_bins (docs/model.md section 8); `leakage` writes its ablations' layers with it.
nlohmann::json leakage_layer_json(const LayerStats& l);
// A ratio of estimates (leakage.hpp's Ratio, e.g. r_l = residual_stream_share) as every JSON writes it:
// {"value", "se"}, null where undefined, and "note" (why it is null) when it is (docs/model.md section 4.1).
nlohmann::json ratio_json(const Ratio& r);

// config, samples, elapsed_s, samples_per_s, layers[...] as documented in docs/cli.md. maps = false leaves out
// the n x n maps and the n-vectors (the Python module reads those as NumPy arrays: python/src/bind_snapshot.cpp
// lists the same keys, and a test checks that the two sets agree).
nlohmann::json snapshot_to_json(const Snapshot& snap, bool maps = true);

// The position probes (position_probe.hpp): {"probe": {...options}, "layers": [{"layer": l, "x": {"pearson_r",
// "pearson_r_se", "nrmse", "nrmse_se"}, "var": {...}, "sim": {...}}]}, layer 0 the embeddings (docs/cli.md).
nlohmann::json probe_table_to_json(const ProbeTable& t, const ProbeRequest& r);

}  // namespace maskscope
