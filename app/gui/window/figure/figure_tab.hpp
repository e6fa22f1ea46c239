// The Figure tab (drawn with Dear ImGui) over a FigureWorkbench.
#pragma once

#include <string>

#include "model/figure/figure_workbench.hpp"

namespace maskscope::gui {

void draw_figure_tab(FigureWorkbench& wb, const Settings& live, const ViewOptions& view);
// A text field bound to a std::string (Dear ImGui 1.86 has no std::string overload).
bool input_string(const char* label, std::string& s, float width);

}  // namespace maskscope::gui
