// The publisher's wait between pictures (see publish_pace.hpp).
#include "core/run/publish_pace.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace maskscope {

std::chrono::nanoseconds publish_wait(std::chrono::nanoseconds interval, std::chrono::nanoseconds cost, int workers,
                                      double share) {
  if (!(share > 0)) share = kDefaultPictureShare;
  const double of_workers = share * double(workers);  // the share in cores
  if (workers <= 0 || of_workers >= 1 || cost <= std::chrono::nanoseconds::zero()) return interval;
  const double wait = std::ceil(double(cost.count()) * (1.0 / of_workers - 1.0));
  // Beyond an hour (a picture costing minutes) the run publishes at its end anyway.
  const double capped = std::min(wait, 3600e9);
  return std::max(interval, std::chrono::nanoseconds(static_cast<std::int64_t>(capped)));
}

}  // namespace maskscope
