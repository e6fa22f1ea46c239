// The sweep's progress and time left (sweep_progress.hpp).
#include "common/sweep/sweep_progress.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

namespace maskscope::gui {

namespace {

// The samples point `p` is expected to end with; -1 when it has no picture to tell (a target SE, no
// preview yet).
std::int64_t planned_samples(const SweepPoint& p, const SweepMetric& metric, double target_se) {
  if (p.done) return p.samples;
  const std::int64_t cap = p.settings.samples;
  if (target_se <= 0) return cap;
  if (!p.snapshot || p.snapshot->layers.empty() || p.samples <= 0) return -1;
  double worst = 0;  // the largest SE / target over the layers, as the sweep's stopping rule reads it
  for (const LayerStats& l : p.snapshot->layers) {
    const double se = metric_value(l, metric).se;
    if (!std::isfinite(se)) return cap;
    worst = std::max(worst, se / target_se);
  }
  const double need = std::ceil(double(p.samples) * worst * worst);
  const double floor = double(std::max(p.samples, kSweepMinSamplesToStop));
  return std::int64_t(std::min(double(cap), std::max(need, floor)));
}

}  // namespace

SweepProgress sweep_progress(const SweepState& state, const SweepMetric& metric, double target_se) {
  SweepProgress r;
  r.points = state.points.size();
  // Points with no picture yet are planned as the mean of those with one (neighbours in a sweep need
  // similar samples), or to their cap when none has one.
  std::int64_t known = 0, known_points = 0;
  std::vector<std::int64_t> unknown_caps;
  for (const SweepPoint& p : state.points) {
    r.points_done += p.done ? 1 : 0;
    r.samples_done += p.samples;
    const std::int64_t planned = planned_samples(p, metric, target_se);
    if (planned < 0) unknown_caps.push_back(p.settings.samples);
    else known += planned, ++known_points;
  }
  r.samples_planned = known;
  for (std::int64_t cap : unknown_caps)
    r.samples_planned += known_points > 0 ? std::min(cap, (known + known_points - 1) / known_points) : cap;
  if (state.finished) r.eta_s = 0;
  else if (r.samples_done <= 0 || state.elapsed_s <= 0) r.eta_s = std::numeric_limits<double>::quiet_NaN();
  else
    r.eta_s = state.elapsed_s * double(std::max<std::int64_t>(0, r.samples_planned - r.samples_done)) /
              double(r.samples_done);
  return r;
}

std::string duration_text(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--";
  char text[48];
  const long long s = std::llround(seconds);
  if (s < 60) std::snprintf(text, sizeof text, "%lld s", s);
  else if (s < 3600) std::snprintf(text, sizeof text, "%lld min %02lld s", s / 60, s % 60);
  else std::snprintf(text, sizeof text, "%lld h %02lld min", s / 3600, (s % 3600) / 60);
  return text;
}

std::string sweep_progress_text(const SweepProgress& p) {
  const double share = p.samples_planned > 0 ? 100.0 * double(p.samples_done) / double(p.samples_planned) : 0.0;
  char text[96];
  // Floor, so that 99.6% does not read 100% before the end.
  std::snprintf(text, sizeof text, "%zu of %zu points, %d%% of the samples, ", p.points_done, p.points,
                int(std::floor(std::min(share, 100.0))));
  return text + (p.eta_s == 0 && p.points_done == p.points ? std::string("done") : "ETA " + duration_text(p.eta_s));
}

}  // namespace maskscope::gui
