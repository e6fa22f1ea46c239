// Choice of the h(j) closed form and the simulated inverse norms (see h_of_j.hpp).
#include "common/h_of_j.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

namespace maskscope::gui {

HTheory h_theory(const Settings& s) {
  if (s.random_weights()) return HTheory::none;  // the closed forms are for the parameter-free model
  if (s.norm == Norm::layernorm) return HTheory::ln_recency_eq42;
  if (s.norm == Norm::l2) return HTheory::behind_rope;
  return HTheory::none;
}

std::string h_theory_note(const Settings& s) {
  char buf[600];
  switch (h_theory(s)) {
    case HTheory::ln_recency_eq42: {
      std::string note =
          "LN-recency Eq. 42 is a large-d approximation (docs/model.md section 5): it predicts the trend, h(j) "
          "strictly "
          "increasing in j, not the exact simulated values.";
      if (s.d < 1024) {
        std::snprintf(buf, sizeof buf,
                      " At d = %d the norms still fluctuate from sample to sample, so the simulated 1/E||x_j|| "
                      "departs from it.",
                      s.d);
        note += buf;
      }
      if (s.gamma > 0)
        note +=
            " With the residual the approximation keeps only the leading terms of the residual's share, and the "
            "simulation rises faster than Eq. 42 at moderate d.";
      return note;
    }
    case HTheory::behind_rope:
      return s.unit_input && s.scale == Scale::one
                 ? "Behind RoPE Eq. 3: h(i) = ||x_i^(1)|| for unit inputs whose inner products are exactly alpha; "
                   "exact as d grows."
                 : "Behind RoPE Eq. 3 assumes unit-norm inputs and score scale 1; these settings differ, so the "
                   "curve is only indicative.";
    case HTheory::none: break;
  }
  if (s.random_weights())
    return "No closed form for the random-weight network: LN-recency Eq. 42 and Behind RoPE h(i) describe the "
           "parameter-free model (docs/model.md section 5). The simulated curve is shown alone.";
  return "No closed form for norm '" + std::string(to_string(s.norm)) +
         "': LN-recency Eq. 42 needs layernorm and Behind RoPE h(i) needs l2. The simulated curve is shown alone.";
}

void scaled_inverse_norms(const LayerStats& layer1, double at_one, std::vector<double>& value,
                          std::vector<double>& se) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::size_t n = layer1.norm_mean.size();
  value.assign(n, nan);
  se.assign(n, nan);
  if (n == 0 || !(layer1.norm_mean[0] > 0)) return;
  const double ref = layer1.norm_mean[0] * at_one;  // ref / m_1 = at_one
  for (std::size_t j = 0; j < n; ++j) {
    const double m = layer1.norm_mean[j];
    if (!(m > 0)) continue;
    value[j] = ref / m;
    se[j] = ref * layer1.norm_se[j] / (m * m);
  }
}

}  // namespace maskscope::gui
