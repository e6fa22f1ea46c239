// Noise-only maps (issue 48 item 6): a map whose cells differ by no more than their SEs explain is marked and drawn
// over a fixed range of +-4 typical SEs about its mean, not stretched over the whole colour range.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "figure_helpers.hpp"
#include "common/format.hpp"
#include "common/panels.hpp"

using namespace maskscope;
using namespace maskscope::gui;

namespace {

// Standard normal draws from a fixed-seed generator of our own (Box-Muller on a 64-bit LCG): the same on every
// platform, unlike std::normal_distribution.
struct Normal {
  std::uint64_t state = 12345;
  double uniform() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (double(state >> 11) + 0.5) / 9007199254740992.0;
  }
  double operator()() { return std::sqrt(-2 * std::log(uniform())) * std::cos(6.283185307179586 * uniform()); }
};

// An n x n map of `mean` plus `slope` SEs per unit of i + j, plus one SE of noise per cell.
PanelData synthetic(int n, double mean, double se, double slope) {
  PanelData p;
  p.n = n;
  Normal z;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      p.value.push_back(mean + se * (slope * double(i + j) + z()));
      p.se.push_back(se);
    }
  return p;
}

}  // namespace

TEST_CASE("a map of pure noise is noise only, drawn over +-4 SE about its mean; a gradient of a few SE is not") {
  PanelData noise = synthetic(32, 0.3, 0.01, 0);
  double m = 0, se = 0;
  REQUIRE(noise_only_map(noise, false, &m, &se));
  CHECK(m == doctest::Approx(0.3).epsilon(0.01));
  CHECK(se == doctest::Approx(0.01));
  fit_range(noise, RangeMode::robust, false, false);
  CHECK(noise.noise_only);
  CHECK(noise.lo == doctest::Approx(m - 0.04).epsilon(1e-4));
  CHECK(noise.hi == doctest::Approx(m + 0.04).epsilon(1e-4));
  // Stretched, the same cells would have filled the whole colour range: about +-2.3 SE (the 1% / 99% quantiles).
  CHECK(noise.hi - noise.lo > 1.5f * 0.01f * 2 * 2.3f);

  // Structure: 0.2 SE per step of i + j over a 32 x 32 map spans 12 SE, far more than the noise explains.
  PanelData structure = synthetic(32, 0.3, 0.01, 0.2);
  CHECK_FALSE(noise_only_map(structure, false));
  fit_range(structure, RangeMode::robust, false, false);
  CHECK_FALSE(structure.noise_only);
  // A single cell 8 SE off: structure too.
  PanelData spike = synthetic(32, 0.3, 0.01, 0);
  spike.value[5] += 0.08;
  CHECK_FALSE(noise_only_map(spike, false));

  // Centred (diagonal-normalized) noise: symmetric about 0.
  PanelData centred = synthetic(16, 0.0, 0.02, 0);
  fit_range(centred, RangeMode::robust, true, false);
  CHECK(centred.noise_only);
  CHECK(centred.lo == doctest::Approx(-centred.hi));
  CHECK(centred.hi < 0.1f);

  // Nothing to judge: no SEs, SEs all 0 (an exact map), one cell.
  PanelData exact = synthetic(8, 0.3, 0.01, 0);
  for (double& s : exact.se) s = 0;
  CHECK_FALSE(noise_only_map(exact, false));
  PanelData bare = synthetic(8, 0.3, 0.01, 0);
  bare.se.clear();
  CHECK_FALSE(noise_only_map(bare, false));
  PanelData one = synthetic(1, 0.3, 0.01, 0);
  CHECK_FALSE(noise_only_map(one, false));
}

TEST_CASE("a run's layer-1 score map is noise only; its layer-2 map with recency is not") {
  // Layer 1's scores x_i . x_j of exchangeable inputs have one mean off the diagonal; layer 2's carry the recency.
  Settings s = test::tiny();
  s.samples = 20000;
  const auto snap = run_to_completion(s);
  const PanelStyle style;
  const PanelData l1 = build_panel(*snap, 0, Quantity::score, Transform::raw, style);
  const PanelData l2 = build_panel(*snap, 1, Quantity::score, Transform::raw, style);
  CHECK(l1.noise_only);
  CHECK_FALSE(l2.noise_only);
}

TEST_CASE("the largest SE on screen is unknown (\"--\"), not 0, before any cell has an SE") {
  CHECK(std::isnan(largest_shown_se({})));
  PanelData none = synthetic(4, 0.3, 0.01, 0);
  for (double& s : none.se) s = NAN;  // one sample: no SE yet
  fit_range(none, RangeMode::robust, false, false);
  CHECK(std::isnan(none.max_se));
  CHECK(std::isnan(largest_shown_se({none})));
  CHECK(se_text(largest_shown_se({none}), 1) == "--");
  CHECK(se_text(largest_shown_se({none}), 1000) == "--");
  PanelData some = synthetic(4, 0.3, 0.01, 0);
  fit_range(some, RangeMode::robust, false, false);
  CHECK(largest_shown_se({none, some}) == doctest::Approx(0.01));
  CHECK(se_text(largest_shown_se({none, some}), 1000) == "0.01");
}
