// A sweep's outputs (issue 32): the sweep file (JSON, each point's layers exactly as `run` writes them) and
// the CSV table of its metric, one row per point and layer. One home for `maskscope-cli sweep`, `merge`
// (from shards, sweep_shard.hpp) and the window's Sweep tab.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/run/sweep.hpp"
#include "core/run/sweep_spec.hpp"

namespace maskscope {

// The table: every swept value, layer, metric, value, se, samples, ties; one row per point and layer, the
// points in the sweep's order (a point without a picture yet, in a sweep in progress, has none). Numbers in
// their shortest text that reads back as them; empty for NaN.
std::string sweep_csv(const std::vector<SweepAxis>& axes, const SweepMetric& metric, const SweepState& state);

// The sweep file: {"vary", "metric", "se", "samples", "elapsed_s", "maskscope_version", "points"}, where `se`
// and `samples` are the target SE and each point's cap (`--se`, `--samples`).
std::string sweep_json(const std::vector<SweepAxis>& axes, const SweepMetric& metric, const SweepState& state,
                       double se, std::int64_t samples);

// --- The parts of both, which a sweep joined from shards (sweep_shard.hpp) puts together the same way.

// "vary": [{"name": key, "values": [...]}]: numbers for numeric settings, names as typed for the others.
nlohmann::json sweep_vary_json(const std::vector<SweepAxis>& axes);
// One point of "points": settings, samples, stopped_early, kernel, layers (and embeddings), its `run` JSON's.
nlohmann::json sweep_point_json(const SweepPoint& p);
// The sweep file around its points' JSON, in the sweep's order.
std::string sweep_file_json(nlohmann::json vary, const std::string& metric, double se, std::int64_t samples,
                            double elapsed_s, nlohmann::json points);

// One point's rows of the table.
struct SweepTablePoint {
  std::vector<std::string> values;               // each swept setting's value (axis_value_text)
  std::int64_t samples = 0;                      // done
  std::vector<std::pair<int, Estimate>> layers;  // layer (1-based) and its metric
};
SweepTablePoint sweep_table_point(const std::vector<SweepAxis>& axes, const SweepMetric& metric, const SweepPoint& p);
// The table of `points` under a header of the swept settings' keys.
std::string sweep_csv_table(const std::vector<std::string>& keys, const std::string& metric,
                            const std::vector<SweepTablePoint>& points);

}  // namespace maskscope
