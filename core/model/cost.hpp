// What one sample costs and how many samples make a block: pure functions of the settings, shared by
// the kernels, the sample grid and the run's memory estimate.
#pragma once

#include <cstdint>

#include "core/model/settings.hpp"

namespace maskscope {

// Multiply-adds of one sample, about: n d (1 + L (n + 4)) for the parameter-free model, more for
// random weights. samples_per_block and the window's auto sample count scale with it.
double sample_cost(const Settings& s);

// Floating-point operations of one random-weight sample's forward pass, counted as a dense
// implementation counts them (2 per multiply-add): the products 2 n d (3d + d (+ 4d + 4d with the MLP))
// and the heads' q k^T and A v, 4 n^2 d, per layer (Zuo et al.'s setting: 472 MFLOP). bench divides it by
// the time per sample for the forward pass's GFLOP/s. 0 for the parameter-free model.
double forward_flops(const Settings& s);

// Samples per block: fixed by the settings (never by timing, threads or the number of layers), so the
// merge order, hence the results, do not depend on the thread count; each sample's draws depend
// only on (seed, sample index) (random_stream.hpp).
std::int64_t samples_per_block(const Settings& s);

// Samples whose rows a fixed random-weight network multiplies at once ((B n) x d by d x m,
// random_weights_batched.hpp): a power of two from 1 to 32, at most 384 rows and at most 2 GFLOP per
// layer (so a GPT-2-small-sized block is one sample and the window's first picture comes soon). A fixed
// network's blocks hold exactly this many samples, on every processor, so the grid never depends on
// the machine; nor on the number of layers, so layer l's sums do not depend on the layers after it.
int fixed_batch_samples(const Settings& s);

}  // namespace maskscope
