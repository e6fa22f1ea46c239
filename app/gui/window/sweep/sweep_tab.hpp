// The Sweep tab (drawn with Dear ImGui) over a SweepWorkbench: a metric against one or two settings, live.
#pragma once

#include "common/controller.hpp"
#include "common/figure/figure.hpp"
#include "common/sweep/sweep_workbench.hpp"

namespace maskscope::gui {

// `preset`: what the export writes as preset.json (the live settings, view and this sweep). A click on a point
// sets the live controls to it through the controller (one undo step: Ctrl+Z goes back).
void draw_sweep_tab(SweepWorkbench& wb, Controller& controller, const Preset& preset);

}  // namespace maskscope::gui
