// How long a run's publisher waits between pictures: long enough that building pictures (the
// snapshot, and what its readers spend on it: a window's panels and frames) takes at most a given
// share of the workers' time, and never less than the run's publish interval.
#pragma once

#include <chrono>

namespace maskscope {

// The share of the workers' time that pictures may take by default (RunOptions::picture_share): at
// n 512 a snapshot costs 15-45 ms and a window's panels and frame about as much again; one every
// 25 ms took a third of a core (issue 48).
inline constexpr double kDefaultPictureShare = 0.05;

// The wait after a picture that cost `cost` (wall time of its build, plus its readers' reported
// cost), with `workers` threads computing samples meanwhile: cost / (workers (cost + wait)) <= share,
// so wait = cost (1 / (share workers) - 1), at least `interval`. A share of workers' time of 1 or
// more (or no workers) leaves `interval`; a share <= 0 counts as kDefaultPictureShare.
std::chrono::nanoseconds publish_wait(std::chrono::nanoseconds interval, std::chrono::nanoseconds cost, int workers,
                                      double share);

}  // namespace maskscope
