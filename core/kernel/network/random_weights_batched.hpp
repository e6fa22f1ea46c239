// A fixed random-weight network's forward pass on batches of samples (docs/model.md section 7;
// docs/performance.md, "Random weights: batched products"): the rows of B samples go through each
// product at once, (B n) x d by d x m, with Eigen's GEMM (eigen_gemm.hpp). Internal to core/.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/kernel/network/random_weights_steps.hpp"

namespace maskscope::rw {

// Samples first_sample .. first_sample + count - 1 of the fixed network k.net into `sums` (when given),
// the last into `trace` (when given; with `trace_every`, sample t into trace[t - first_sample]); false if
// cancelled. Batches are aligned: sample s sits in slot
// s mod w.batch of the batch that starts at s - s mod w.batch, and every product runs on all w.batch n
// rows (a slot outside the range keeps whatever finite rows it held), so each sample's bits depend on
// its index alone, not on the range it was computed in.
bool run_batched(const RwArgs& k, RandomWeightsModel::Work& w, std::uint64_t first_sample, std::int64_t count,
                 BlockSums* sums, SampleTrace* trace, const std::atomic<bool>* cancel, bool trace_every);

}  // namespace maskscope::rw
