// The Sweep tab's progress line (issue 48): samples done against the samples the points are expected to
// need, and the time left at the rate so far; "--" until a sample is done.
#include <doctest/doctest.h>

#include <cmath>

#include "core/run/runner.hpp"
#include "common/sweep/sweep_progress.hpp"

using namespace maskscope;
using namespace maskscope::gui;

namespace {

SweepPoint point(std::int64_t cap, std::int64_t samples, bool done) {
  SweepPoint p;
  p.settings.samples = cap;
  p.samples = samples;
  p.done = done;
  return p;
}

}  // namespace

TEST_CASE("sweep_progress: without a target every unfinished point is planned to its cap") {
  SweepState st;
  st.points = {point(1000, 1000, true), point(1000, 200, false), point(4000, 0, false)};
  st.elapsed_s = 6;
  const SweepProgress p = sweep_progress(st, SweepMetric{}, 0);
  CHECK(p.points == 3);
  CHECK(p.points_done == 1);
  CHECK(p.samples_done == 1200);
  CHECK(p.samples_planned == 6000);
  CHECK(p.eta_s == doctest::Approx(6.0 * 4800 / 1200));  // 200 samples a second, 4,800 left
  CHECK(sweep_progress_text(p) == "1 of 3 points, 20% of the samples, ETA 24 s");
}

TEST_CASE("sweep_progress: a point that stopped early counts its own samples, not its cap") {
  SweepState st;
  st.points = {point(100'000, 3000, true), point(100'000, 3000, true)};
  st.finished = true;
  st.elapsed_s = 2;
  const SweepProgress p = sweep_progress(st, SweepMetric{}, 0.01);
  CHECK(p.samples_planned == 6000);
  CHECK(p.eta_s == 0);
  CHECK(sweep_progress_text(p) == "2 of 2 points, 100% of the samples, done");
}

TEST_CASE("sweep_progress: before any sample the ETA is unknown, and the count moves before a point is done") {
  SweepState st;
  st.points = {point(1000, 0, false), point(1000, 0, false)};
  st.elapsed_s = 3;
  SweepProgress p = sweep_progress(st, SweepMetric{}, 0);
  CHECK(std::isnan(p.eta_s));
  CHECK(sweep_progress_text(p) == "0 of 2 points, 0% of the samples, ETA --");
  st.points[0].samples = 100;  // no point done yet, but samples are
  p = sweep_progress(st, SweepMetric{}, 0);
  CHECK(p.points_done == 0);
  CHECK(sweep_progress_text(p) == "0 of 2 points, 5% of the samples, ETA 57 s");
}

TEST_CASE("sweep_progress: with a target SE a point needs samples x (SE / target)^2, within its cap") {
  Settings s;
  s.n = 8;
  s.d = 8;
  s.layers = 2;
  s.samples = 400;
  s.threads = 1;
  const auto snap = run_to_completion(s);
  double se = 0;  // the largest RP SE over the layers
  for (const LayerStats& l : snap->layers) se = std::max(se, metric_value(l, SweepMetric{}).se);
  REQUIRE(se > 0);
  SweepPoint p = point(1'000'000, 400, false);
  p.snapshot = snap;
  SweepState st;
  st.points = {p};
  st.elapsed_s = 1;
  CHECK(sweep_progress(st, SweepMetric{}, se / 3).samples_planned == 3600);          // 400 x 3^2
  CHECK(sweep_progress(st, SweepMetric{}, se * 4).samples_planned == 400);           // reached: no fewer than done
  CHECK(sweep_progress(st, SweepMetric{}, se / 1000).samples_planned == 1'000'000);  // beyond the cap
  st.points[0].settings.samples = 2000;
  CHECK(sweep_progress(st, SweepMetric{}, se / 3).samples_planned == 2000);
  CHECK(sweep_progress(st, SweepMetric{}, 0).samples_planned == 2000);  // no target: the cap
}

TEST_CASE("duration_text: seconds, minutes, hours; -- when unknown") {
  CHECK(duration_text(0) == "0 s");
  CHECK(duration_text(44.6) == "45 s");
  CHECK(duration_text(200) == "3 min 20 s");
  CHECK(duration_text(7500) == "2 h 05 min");
  CHECK(duration_text(std::nan("")) == "--");
  CHECK(duration_text(-1) == "--");
}

TEST_CASE("sweep_progress: with a target SE, a point without a picture is planned as the mean of those with one") {
  SweepState st;
  st.points = {point(100'000, 3000, true), point(100'000, 5000, true), point(100'000, 0, false), point(2000, 0, false)};
  st.elapsed_s = 4;
  const SweepProgress p = sweep_progress(st, SweepMetric{}, 0.01);
  CHECK(p.samples_planned == 3000 + 5000 + 4000 + 2000);  // the mean 4,000; the last within its cap
  CHECK(p.eta_s == doctest::Approx(4.0 * 6000 / 8000));
  st.points = {point(100'000, 0, false), point(100'000, 0, false)};  // nothing known: the caps
  CHECK(sweep_progress(st, SweepMetric{}, 0.01).samples_planned == 200'000);
}
