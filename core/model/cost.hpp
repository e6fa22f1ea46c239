// What one sample costs and how many samples make a block: pure functions of the settings, shared by
// the kernels, the sample grid and the run's memory estimate.
#pragma once

#include <cstdint>

#include "core/model/settings.hpp"

namespace maskscope {

// Multiply-adds of one sample, about: n d (1 + L (n + 4)) for the parameter-free model, more for
// random weights. samples_per_block and the window's auto sample count scale with it.
double sample_cost(const Settings& s);

// Samples per block: fixed by the settings (never by timing, threads or the number of layers), so the
// merge order, hence the results, do not depend on the thread count; each sample's draws depend
// only on (seed, sample index) (random_stream.hpp).
std::int64_t samples_per_block(const Settings& s);

}  // namespace maskscope
