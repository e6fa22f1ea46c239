// The Figure tab (drawn with Dear ImGui) over a FigureWorkbench.
#pragma once

#include <string>

#include "common/figure/figure_workbench.hpp"

namespace maskscope::gui {

void draw_figure_tab(FigureWorkbench& wb, const Settings& live, const ViewOptions& view);
// The PNG size of an export: 1x, 2x, 4x of the layout's natural size, or a width in pixels.
void draw_png_size(ExportOptions& options, float scene_width);
// A text field bound to a std::string (Dear ImGui 1.86 has no std::string overload).
bool input_string(const char* label, std::string& s, float width);

}  // namespace maskscope::gui
