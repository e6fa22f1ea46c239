// What a run will cost before it starts: memory (accumulators per worker, pending blocks, the
// merged moments, snapshots) and the size of its JSON result, so that the CLI and the window can
// refuse or adapt with a message instead of dying on an allocation.
#pragma once

#include <cstdint>
#include <string>

#include "core/model/cost.hpp"
#include "core/model/settings.hpp"

namespace maskscope {

struct RunCost {
  std::uint64_t memory_bytes = 0;  // peak, about
  std::uint64_t json_bytes = 0;    // `maskscope-cli run` output, about
};

// Bytes of the fixed random-weight network (shared by the workers); 0 otherwise.
std::uint64_t network_bytes(const Settings& s);

// For `threads` workers (resolved, >= 1). Matches Run's buffers: one block-sum buffer per worker
// plus the look-ahead of blocks waiting to merge, the open segment, the exact sums and the publisher's copy.
RunCost estimate_cost(const Settings& s, int threads);
// Blocks that may wait for their turn to merge, for `threads` workers (Run uses the same rule:
// fewer for very large layouts so that memory stays bounded).
std::int64_t merge_lookahead(const Settings& s, int threads);
// MemAvailable from /proc/meminfo, or MASKSCOPE_MEMORY_LIMIT (bytes) when that is smaller; 0 when unknown.
std::uint64_t available_memory_bytes();

// One worker's own buffers (estimate_cost's per-thread part): its sample's (or batch's) rows and maps.
std::uint64_t worker_bytes(const Settings& s);
// One snapshot's or RunMoments' arrays: mean and M2 of every accumulated value.
std::uint64_t moments_bytes(const Settings& s);

// The one memory check of every subcommand (run, sweep, probe, leakage, analyze, merge, bench): "" when
// `need` bytes fit in 80% of available_memory_bytes() (so MASKSCOPE_MEMORY_LIMIT caps it), or when that is
// unknown; else "about 3.1 GB; this machine has 1.2 GB available" for the caller to put after "needs".
std::string memory_shortfall(std::uint64_t need);

// A threaded run of `s` beside `extra` bytes its caller holds (leakage's finished snapshots): `wanted`
// threads, or fewer if those do not fit (the numbers do not depend on it); `refusal` says why not (the
// settings that count, the estimate, what to lower) when even one thread does not. `bytes`: the estimate.
struct RunMemoryPlan {
  int threads = 1;
  std::uint64_t bytes = 0;
  std::string refusal;
};
RunMemoryPlan plan_run_memory(const Settings& s, int wanted, std::uint64_t extra = 0);
// "1.6 GB", "340 MB".
std::string bytes_text(std::uint64_t bytes);
// The process's peak resident memory (VmHWM) in MiB; 0 where /proc is missing.
double peak_resident_mib();
// Starts peak_resident_mib() afresh from the current resident size (Linux: /proc/self/clear_refs),
// so that a benchmark's later case reports its own peak, not an earlier case's. False where the
// system does not allow it (the peak then stays the process's).
bool reset_peak_resident();

}  // namespace maskscope
