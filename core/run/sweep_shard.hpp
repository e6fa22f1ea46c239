// A part of a sweep (issue 32): some of its points, computed anywhere (`sweep --shard K/N`, an MPI rank), as
// a .msweep file that `maskscope-cli merge` joins, in any order, into the sweep file of one process. A sweep
// splits by points: a point's stages and stopping read only its own SE (sweep.cpp), so its numbers depend only
// on its settings, seed, cap and the target SE, never on which other points ran beside it.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/model/settings.hpp"
#include "core/run/sweep.hpp"
#include "core/run/sweep_output.hpp"
#include "core/run/sweep_spec.hpp"

namespace maskscope {

constexpr const char* kSweepShardExtension = ".msweep";

struct SweepShard {
  // What every part of one sweep shares, so a part of another is refused: vary, metric, se, samples (the
  // cap), base (the fixed settings, without threads), gamma_given, points (how many in all),
  // maskscope_version, kernel.
  nlohmann::json sweep;
  std::int64_t k = 1, n = 1;  // shard K of N (1/1: the whole sweep)
  double elapsed_s = 0;       // wall time behind these points (summed over joined parts)
  struct Point {
    std::size_t index = 0;  // in the sweep's order (the first axis outermost)
    nlohmann::json json;    // sweep_point_json
    SweepTablePoint table;  // its rows of the CSV
  };
  std::vector<Point> points;  // by index
};

// Shard K of N's points of a sweep of `points`: every N-th from the (K-1)-th, so that the costly end of a
// range (large d or n) spreads over the shards. Requires sweep_shard_error(...) == "".
std::vector<std::size_t> sweep_shard_points(std::size_t points, std::int64_t k, std::int64_t n);
// "" when K/N is a shard of a sweep of `points` points; else what is wrong and the valid range.
std::string sweep_shard_error(std::size_t points, std::int64_t k, std::int64_t n);

// SweepShard::sweep for these flags; `kernel` is kernel_name of the sweep's first point (every part must
// run where it is the same: processors of different kinds round differently); `gamma_given` as for
// sweep_points (with the rest, what re-derives every point's settings when the shard is read).
nlohmann::json sweep_identity(const std::vector<SweepAxis>& axes, const SweepMetric& metric, double se,
                              const Settings& base, bool gamma_given, std::size_t points, const std::string& kernel);
// Shard K of N from a finished sweep of its points: `state.points[q]` is point `indices[q]` of the sweep.
SweepShard make_sweep_shard(nlohmann::json sweep, std::int64_t k, std::int64_t n,
                            const std::vector<std::size_t>& indices, const std::vector<SweepAxis>& axes,
                            const SweepMetric& metric, const SweepState& state);

// The .msweep text (one line of JSON, then its FNV-1a 64 checksum line) and back. Parsing throws
// std::runtime_error naming `name` for a file without its checksum (a shard of layout 1, naming the version
// that wrote it; a truncated file), a checksum that does not match, or a point that is not the sweep's: every
// point's settings and values are re-derived from the header's spec (vary, metric, se, base, gamma_given),
// indices are integers of this shard within the sweep, samples within the cap, elapsed_s finite and >= 0, and
// no text that reaches the CSV, the JSON or a message holds a control character.
std::string sweep_shard_text(const SweepShard& s);
SweepShard parse_sweep_shard(const std::string& text, const std::string& name);
// parse_sweep_shard of the file, read by read_input_file (input_file.hpp) with the cap kMaxPartFileBytes.
SweepShard read_sweep_shard(const std::string& path);

// Joins parts of one sweep, in any order: the same sweep, no point twice, every shard among them whole and,
// with `whole`, every shard of N. The result is the parts' one shard K/N, or 1/1 once it is the whole sweep.
// Throws std::runtime_error naming the part(s) (each pair's second) and what is wrong.
SweepShard join_sweep_shards(std::vector<std::pair<SweepShard, std::string>> parts, bool whole);

// The sweep file and table of a whole sweep, through sweep_output.hpp's writers: the same text as one
// process's, but for elapsed_s (here the parts' sum).
std::string sweep_shard_json(const SweepShard& whole);
std::string sweep_shard_csv(const SweepShard& whole);

}  // namespace maskscope
