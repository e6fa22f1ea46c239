// How far a sweep is and when it should end: samples done against the samples its points are expected
// to need, and the time left at the rate so far (the Sweep tab's progress line, issue 48).
#pragma once

#include <cstdint>
#include <string>

#include "core/run/sweep.hpp"

namespace maskscope::gui {

struct SweepProgress {
  std::size_t points = 0, points_done = 0;
  std::int64_t samples_done = 0;  // over every point (their previews' few included)
  // A done point: its samples. Another: what it is expected to need, its cap or, with a target SE, the
  // samples at which its SE should reach the target (needed samples scale as (SE / target)^2, the sweep's
  // own stage rule), at least kSweepMinSamplesToStop and its samples so far; before its preview, the mean
  // of the points that have a picture (within its cap).
  std::int64_t samples_planned = 0;
  double eta_s = 0;  // seconds left at the rate so far; NaN until a sample is done (0 once finished)
};

// `target_se` <= 0: every point runs to its cap.
SweepProgress sweep_progress(const SweepState& state, const SweepMetric& metric, double target_se);

// "12 of 420 points, 3% of the samples, ETA 1 min 20 s" ("ETA --" until it can be estimated, "done").
std::string sweep_progress_text(const SweepProgress& p);

// A time left: "45 s", "3 min 20 s", "2 h 05 min"; "--" when not finite or negative.
std::string duration_text(double seconds);

}  // namespace maskscope::gui
