// The Figure tab's preview: a Scene drawn with Dear ImGui (the same layout as the exports).
#pragma once

#include <imgui.h>

#include "common/figure/figure_render.hpp"

namespace maskscope::gui {

// Draws `scene` into `dl` with its origin at `o` and `s` screen pixels per scene unit.
void draw_scene(ImDrawList* dl, const Scene& scene, ImVec2 o, float s);

}  // namespace maskscope::gui
