// maskscope-cli merge: shards' partial sums (.msum) added exactly into the run's result (the same bits as
// one run), or into a larger .msum (merging in stages).
#include <nlohmann/json.hpp>

#include <iostream>
#include <string>

#include "commands.hpp"
#include "core/formats/atomic_file.hpp"
#include "core/formats/result_json.hpp"
#include "core/model/version.hpp"
#include "core/run/partial_sums.hpp"

namespace maskscope::cli {

CLI::App* add_merge(CLI::App& app, MergeFlags& m) {
  auto* merge =
      app.add_subcommand("merge", "add shards' partial sums (.msum) into the run's result: the same bits as one run");
  merge->add_option("files", m.files, "the shards' .msum files, in any order")->required();
  merge->add_option(
      "--out", m.out,
      "result JSON (default: standard output), or FILE.msum for merged partial sums (may cover part of the run)");
  return merge;
}

int cmd_merge(MergeFlags& m) {
  const bool to_sums = ends_with(m.out, kPartialSumsExtension);
  if (!m.out.empty())
    if (std::string why = check_output_path(m.out); !why.empty()) return report_invalid({{"out", why}});
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
