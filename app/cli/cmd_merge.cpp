// maskscope-cli merge: a run's shards' partial sums (.msum) added exactly into the run's result (the same bits
// as one run), or into a larger .msum (merging in stages); or a sweep's shards (.msweep) joined into its file.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "commands.hpp"
#include "core/formats/atomic_file.hpp"
#include "core/formats/result_json.hpp"
#include "core/model/version.hpp"
#include "core/run/partial_sums.hpp"
#include "core/run/resources.hpp"
#include "core/stats/accumulator.hpp"
#include "core/run/sweep_shard.hpp"

namespace maskscope::cli {

namespace {

// A sweep's shards, in any order, into the sweep file (or its CSV): one process's file but for elapsed_s.
int merge_sweep(const MergeFlags& m) {
  if (!m.out.empty() && !ends_with(m.out, ".json") && !ends_with(m.out, ".csv"))
    return report_invalid({{"out", "'" + m.out + "': a sweep's shards join into FILE.json or FILE.csv"}});
  std::string text;
  try {
    std::vector<std::pair<SweepShard, std::string>> parts;
    for (const std::string& file : m.files) parts.emplace_back(read_sweep_shard(file), file);
    const SweepShard whole = join_sweep_shards(std::move(parts), true);
    text = ends_with(m.out, ".csv") ? sweep_shard_csv(whole) : sweep_shard_json(whole);
  } catch (const std::exception& e) {
    std::cerr << "maskscope-cli: merge refused: " << e.what() << "\n";
    return kExitInvalid;
  }
  return emit(m.out, text);
}

}  // namespace

CLI::App* add_merge(CLI::App& app, MergeFlags& m) {
  auto* merge = app.add_subcommand("merge",
                                   "add a run's shards (.msum) into its result, the same bits as one run; or join "
                                   "a sweep's shards (.msweep) into its file");
  merge->add_option("files", m.files, "a run's .msum files or a sweep's .msweep files, in any order")->required();
  merge->add_option("--out", m.out,
                    "result JSON (default: standard output), or FILE.msum for merged partial sums (may cover part "
                    "of the run); a sweep's: FILE.json or FILE.csv");
  return merge;
}

int cmd_merge(MergeFlags& m) {
  if (!m.out.empty())
    if (std::string why = check_output_path(m.out); !why.empty()) return report_invalid({{"out", why}});
  const auto is_sweep = [](const std::string& f) { return ends_with(f, kSweepShardExtension); };
  const auto sweeps = std::count_if(m.files.begin(), m.files.end(), is_sweep);
  if (sweeps > 0 && std::size_t(sweeps) < m.files.size()) {
    const auto run = std::find_if_not(m.files.begin(), m.files.end(), is_sweep);
    const auto sweep = std::find_if(m.files.begin(), m.files.end(), is_sweep);
    std::cerr << "maskscope-cli: merge refused: " << *sweep << " is a sweep's shard (" << kSweepShardExtension
              << ") and " << *run << " is not; merge the parts of one run (" << kPartialSumsExtension
              << ") or of one sweep\n";
    return kExitInvalid;
  }
  // Memory, as every subcommand checks it (resources.hpp): a run's merge holds a part's file and its exact
  // sums (49 bytes a value each), the merged sums, their moments and the snapshot; a sweep's, its shards' text
  // and parsed JSON (about ten times the files).
  std::uint64_t need = 0;
  std::string largest;
  for (const std::string& file : m.files) {
    std::error_code ec;
    const std::uint64_t size = std::filesystem::file_size(file, ec);
    std::uint64_t bytes = ec ? 0 : 10 * size;
    if (sweeps == 0) try {
        bytes = std::uint64_t(accum_layout(read_partial_sums_header(file).settings).total()) * (3 * 49 + 2 * 16);
      } catch (const std::exception&) { bytes = 0; }  // merge names what is wrong with the file
    if (sweeps > 0) need += bytes;
    else if (bytes > need) need = bytes, largest = file;
  }
  if (std::string why = memory_shortfall(need); !why.empty()) {
    std::cerr << "maskscope-cli: merge refused: "
              << (sweeps > 0 ? std::to_string(m.files.size()) + " sweep shards" : "the run of " + largest)
              << (sweeps > 0 ? " need " : " needs ") << why << "\n";
    return kExitInvalid;
  }
  if (sweeps > 0) return merge_sweep(m);

  const bool to_sums = ends_with(m.out, kPartialSumsExtension);
  PartialSums merged;
  try {
    // A merged .msum may cover a contiguous part of the run (merge in stages); a result needs all of it.
    merged = merge_partial_sums_files(m.files, !to_sums);
  } catch (const std::exception& e) {
    std::cerr << "maskscope-cli: merge refused: " << e.what() << "\n";
    return kExitInvalid;
  }
  std::string error;
  if (to_sums) {
    if (!write_partial_sums(m.out, merged, error)) {
      std::cerr << "maskscope-cli: " << error << "\n";
      return 1;
    }
    return 0;
  }
  nlohmann::json j = snapshot_to_json(snapshot_of(merged));
  j["maskscope_version"] = kVersion;
  j["kernel"] = merged.kernel;
  j["merged_files"] = m.files.size();
  return emit(m.out, j.dump(1) + "\n");
}

}  // namespace maskscope::cli
