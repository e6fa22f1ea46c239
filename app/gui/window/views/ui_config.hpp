// What the window remembers across sessions: the presentation scale, in
// $XDG_CONFIG_HOME/maskscope/ui.json (or ~/.config/maskscope/ui.json).
#pragma once

namespace maskscope::gui {

inline constexpr float kPresentationScaleMin = 1.0f, kPresentationScaleMax = 3.0f;

// The stored presentation scale (clamped to its range), or `fallback` when none is stored.
float load_presentation_scale(float fallback);
// Stores the scale, creating the folder; a failed write is ignored (the scale is a convenience).
void save_presentation_scale(float scale);

}  // namespace maskscope::gui
