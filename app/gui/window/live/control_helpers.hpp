// Helpers shared by the left column's files (controls.cpp, view_controls.cpp): greying the controls of the
// other model family, with a tooltip that says why, and the view options' block.
#pragma once

#include <imgui.h>

#include <string>

#include "window/live/live.hpp"

namespace maskscope::gui {

// Greys the next controls when they do not apply to the chosen model family; the tooltip says why.
struct FamilyOnly {
  bool off;
  explicit FamilyOnly(bool applies) : off(!applies) { ImGui::BeginDisabled(off); }
  ~FamilyOnly() { ImGui::EndDisabled(); }
};

inline const char* kParameterFreeOnly =
    "\n\n(Greyed: applies to the parameter-free model only; the random-weight network "
    "reads token embeddings, not these inputs, and scales its scores by 1/sqrt(d_h).)";
inline const char* kRandomWeightsOnly =
    "\n\n(Greyed: applies to the random-weight network only; choose it under 'model'.)";

// Explains the last item, adding why it is greyed when it is.
inline void explain_family(const std::string& text, bool off, const char* why) {
  explain((off ? text + why : text).c_str());
}

// The view options (show, head, colour range, colormaps, diagonal, noise, theme): view_controls.cpp.
void view_controls(ViewOptions& view, const Settings& s);

}  // namespace maskscope::gui
