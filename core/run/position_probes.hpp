// Position probes on the random-weight network (Zuo et al. `003` Sec. 5.5, Fig. 8): the hidden states of
// one fixed network on training and test sequences from disjoint sample ranges, and a probe per layer
// and feature (core/stats/position_probe.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/model/settings.hpp"
#include "core/stats/position_probe.hpp"

namespace maskscope {

// Every problem with probing these settings, each naming its setting ("train", "test", "weights", ...)
// and the valid range; empty when the probes can run. Includes validate(s).
// Memory included (memory_shortfall, resources.hpp): probe_memory_bytes against the machine's.
std::vector<SettingError> validate_probe(const Settings& s, const ProbeRequest& r);
// Bytes the probes need, about: the features, the fixed network (embedding table included), and each
// worker's buffers and one block's traces.
std::uint64_t probe_memory_bytes(const Settings& s, const ProbeRequest& r);

// Training sequences are samples 0 .. train-1 of the run's seed, test sequences samples train ..
// train+test-1 (disjoint inputs, one network: weights fixed). Hidden states on resolved_threads(s)
// threads, each sequence into its own rows; then the probes. `sequences_done` counts collected
// sequences. nullopt if cancelled.
std::optional<ProbeTable> run_position_probes(const Settings& s, const ProbeRequest& r,
                                              const std::atomic<bool>* cancel = nullptr,
                                              std::atomic<std::int64_t>* sequences_done = nullptr);

}  // namespace maskscope
