// Metrics computed on averaged maps (docs/model.md section 4): the diagonal-normalized map and
// its display quantiles.
#pragma once

#include <array>
#include <span>
#include <vector>

namespace maskscope {

// Row-major n x n map with NaN at masked entries. Subtracts from every unmasked entry the mean
// of the unmasked entries on its diagonal (same offset i - j); a purely relative map becomes 0.
std::vector<double> diagonal_normalized(const std::vector<double>& map, int n);
// The same into `out` (its memory reused).
void diagonal_normalized(const std::vector<double>& map, int n, std::vector<double>& out);

// q-quantile (0..1, linear interpolation) of the finite entries; NaN when there are none.
double quantile(std::span<const double> values, double q);
// The q_lo- and q_hi-quantiles (q_lo <= q_hi) with one copy and one selection: quantile() of each.
std::array<double, 2> quantiles(std::span<const double> values, double q_lo, double q_hi);
// The same, copying into `scratch` (its contents replaced; its memory reused): a caller that keeps
// one saves a fresh allocation per call (2 MiB at n 512, page faults included).
std::array<double, 2> quantiles(std::span<const double> values, double q_lo, double q_hi, std::vector<double>& scratch);
// The same of `finite`, which holds only finite values (reordered here): for a caller that gathers
// them itself.
std::array<double, 2> quantiles_of_finite(std::vector<double>& finite, double q_lo, double q_hi);

}  // namespace maskscope
