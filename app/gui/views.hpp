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

namespace maskscope::gui {

enum class Tab { attention, diagonal, h_of_j, metrics };
enum class Quantity { score, weight, cosine };

struct ViewOptions {
  Tab tab = Tab::attention;
  Quantity quantity = Quantity::score;
  ColormapId sequential = ColormapId::rocket;
  ColormapId diverging = ColormapId::rdbu;
  bool hide_diagonal = true;  // LN-recency Fig. 1: diagonal masked except row 0
  bool shared_range = false;
  bool light_theme = false;
  bool operator==(const ViewOptions&) const = default;
};

// One displayed map: values as shown (NaN = masked or hidden), their standard errors, range.
struct PanelData {
  int layer = 0;
  std::vector<double> value, se;
  float lo = 0, hi = 1;
};

// Builds the panels for the current tab from a snapshot (no GL; tested without a window).
std::vector<PanelData> build_panels(const Snapshot& snap, const ViewOptions& view);

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
