// A scalar estimate: a mean over samples with its standard error, the share of tied comparisons behind it
// (the order metrics RP and adjacency count ties 1/2; docs/model.md section 4), the samples it averages and,
// where it is null or has SE 0 for a reason of float resolution, that reason (docs/model.md section 4.1).
#pragma once

#include <cstdint>

#include "core/stats/float_resolution.hpp"

namespace maskscope {

struct Estimate {
  double mean = 0;
  double se = 0;    // standard error of mean over samples
  double ties = 0;  // mean share of its comparisons that were ties; 0 for a metric without comparisons
  std::int64_t samples = 0;
  EstimateNote note = EstimateNote::none;  // why mean is null (NaN) or se 0 (float_resolution.hpp)

  bool operator==(const Estimate&) const = default;
};

}  // namespace maskscope
