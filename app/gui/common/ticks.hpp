// Where an axis puts its ticks: the window's plots, the Leakage tab's bars and the figures' axes (their
// labels are format.hpp's tick_text).
#pragma once

#include <vector>

namespace maskscope::gui {

// "Nice" tick positions (1, 2, 5 x 10^k) covering [lo, hi] with about `target` ticks.
std::vector<double> nice_ticks(double lo, double hi, int target);

}  // namespace maskscope::gui
