// h(j): which closed form applies to the current settings (LN-recency Eq. 42 for layernorm,
// Behind RoPE h(i) for l2, none otherwise) and the simulated counterpart after layer 1, shared
// by the live h(j) tab and the h(j) figures.
#pragma once

#include <string>
#include <vector>

#include "core/model/settings.hpp"
#include "core/stats/snapshot.hpp"

namespace maskscope::gui {

enum class HTheory { ln_recency_eq42, behind_rope, none };

HTheory h_theory(const Settings& s);
// One or two sentences for the screen: which equation is drawn and where it is only an
// approximation, or why no closed form is drawn (docs/model.md section 5).
std::string h_theory_note(const Settings& s);

// 1 / mean ||x_j^(1)|| (LN-recency: h(j) is the inverse norm after layer 1), scaled so that its
// j = 1 value equals `at_one`; standard errors by the delta method. NaN where the norm is 0.
void scaled_inverse_norms(const LayerStats& layer1, double at_one, std::vector<double>& value, std::vector<double>& se);

}  // namespace maskscope::gui
