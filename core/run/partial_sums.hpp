// Partial sums on disk (.msum): the exact sums (exact_sums.hpp) of a range of a run's segments,
// with the settings that produced them, so that shards computed anywhere (a Slurm array, GNU
// parallel, another machine) merge into the same bits as one run.
//
// Layout: the line "MASKSCOPE-SUMS 1", one line of JSON (settings, grid, segment and sample range,
// sample count, number of values, the maskscope version), then the values as little-endian words
// (6 per value), one invalid flag byte per value, and last the FNV-1a 64 checksum of everything
// before it (8 bytes, little-endian).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/stats/exact_sums.hpp"
#include "core/stats/sample_grid.hpp"
#include "core/model/settings.hpp"
#include "core/stats/snapshot.hpp"

namespace maskscope {

struct PartialSums {
  Settings settings;
  SegmentRange segments;
  std::int64_t first_sample = 0, end_sample = 0;  // the samples of `segments`
  double elapsed_s = 0;                           // compute time behind these sums (summed over merged parts)
  std::string version;                            // the maskscope that computed them
  std::string kernel;                             // the kernel that computed them (kernel_info.hpp kernel_name)
  ExactSums exact;

  bool complete() const { return segments.begin == 0 && segments.end == sample_grid(settings).segments(); }
};

constexpr const char* kPartialSumsExtension = ".msum";

// Writes atomically (atomic_file.hpp); false with `error` set on failure.
bool write_partial_sums(const std::string& path, const PartialSums& p, std::string& error);
// Reads and checks one file (magic, header, size, checksum). Throws std::runtime_error naming the file.
PartialSums read_partial_sums(const std::string& path);
// The header only (no values), for cheap checks before reading everything.
PartialSums read_partial_sums_header(const std::string& path);

// Merges files of one run: same settings and version, no overlap, no gap between them, and with
// `require_complete` every segment of the run. Reads one file at a time. Throws std::runtime_error
// naming the file(s) and what is wrong.
PartialSums merge_partial_sums_files(const std::vector<std::string>& paths, bool require_complete);

// The .msum files of a folder, grouped by the run they belong to (same settings), each group's
// files in the folder's name order. Throws std::runtime_error when the folder cannot be read or a
// file's header is corrupt (naming the file).
struct ResultFiles {
  Settings settings;
  std::vector<std::string> files;
};
std::vector<ResultFiles> scan_results_folder(const std::string& folder);

// The snapshot of merged sums (the numbers of a run with these settings, bit for bit).
Snapshot snapshot_of(const PartialSums& p);

}  // namespace maskscope
