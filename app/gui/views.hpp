// The window's panels: controls, per-layer heatmaps (raw and diagonal-normalized), h(j) and
// metrics plots, and the status line. Reads the newest snapshot each frame; never waits.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "colormap.hpp"
#include "controller.hpp"
#include "heatmap.hpp"
#include "panels.hpp"

namespace maskscope::gui {

class Views {
 public:
  explicit Views(Controller& controller);
  // Draws everything into the current full-window ImGui window.
  void draw(float ui_scale);
  ViewOptions& options() { return view_; }
  // Time from the last restart to the first heatmap of the new run on screen (seconds; < 0 if none yet).
  double last_time_to_first_heatmap() const { return first_heatmap_s_; }
  bool showing_final_snapshot() const;
  const std::vector<PanelData>& panels() const { return panels_; }

 private:
  void draw_controls(float ui_scale);
  void draw_status();
  void draw_heatmaps(bool diverging);
  void draw_h_of_j();
  void draw_metrics();
  void refresh_textures();

  Controller& controller_;
  HeatmapRenderer renderer_;
  ViewOptions view_;
  ViewOptions uploaded_view_;
  std::shared_ptr<const Snapshot> shown_;
  std::vector<PanelData> panels_;
  std::vector<SettingError> edit_errors_;
  bool requested_tab_ = true;  // view_.tab was set from outside: select it on the next frame
  int shown_restart_ = -1;
  double first_heatmap_s_ = -1;
};

}  // namespace maskscope::gui
