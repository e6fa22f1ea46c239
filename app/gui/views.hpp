// The window's panels: controls, per-layer heatmaps (raw and diagonal-normalized), h(j) and
// metrics plots, the figure builder with its export, the presets menu, and the status line.
// Reads the newest snapshots each frame; never waits.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "colormap.hpp"
#include "controller.hpp"
#include "figure.hpp"
#include "figure_render.hpp"
#include "figure_runs.hpp"
#include "heatmap.hpp"
#include "panels.hpp"

namespace maskscope::gui {

class Views {
 public:
  explicit Views(Controller& controller, RunOptions run_options = {});
  // Draws everything into the current full-window ImGui window.
  void draw(float ui_scale);
  ViewOptions& options() { return view_; }
  // Time from the last restart to the first heatmap of the new run on screen (seconds; < 0 if none yet).
  double last_time_to_first_heatmap() const { return first_heatmap_s_; }
  bool showing_final_snapshot() const;
  const std::vector<PanelData>& panels() const { return panels_; }

  // Presets and figures. apply_preset replaces the settings, view, figure and export options.
  void apply_preset(const Preset& p);
  Preset current_preset() const;
  // Loads a preset file; on failure keeps everything as it was and returns false with `error`.
  bool load_preset(const std::string& path, std::string& error);
  FigureSpec& figure() { return figure_; }
  ExportOptions& export_options() { return export_; }
  std::string& export_folder() { return export_dir_; }
  // Distinct runs of the figure all finished (true when the figure has no rows).
  bool figure_complete() const;
  // Exports the figure as it is now into `dir`.
  ExportResult export_figure_now(const std::string& dir);
  // F12: the path for the next auto-numbered window screenshot in the export folder.
  std::string next_screenshot_path();
  void set_status_message(std::string m) { message_ = std::move(m); }

 private:
  void draw_controls(float ui_scale);
  void draw_status();
  void draw_heatmaps(bool diverging);
  void draw_h_of_j();
  void draw_metrics();
  void refresh_textures();
  void draw_menu();
  void draw_figure();
  void draw_figure_rows();
  void refresh_figure(bool force);

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

  FigureSpec figure_;
  FigureSpec running_figure_;  // the spec the runs were last updated for
  FigureRuns figure_runs_;
  FigureData figure_data_;
  Scene figure_scene_;
  std::chrono::steady_clock::time_point figure_built_{};
  std::string preset_name_ = "untitled";
  std::string preset_description_;
  ExportOptions export_;
  std::string export_dir_ = "maskscope-figures";
  std::string preset_path_ = "preset.json";
  std::string layers_text_ = "1,2";
  std::string message_;
  bool message_error_ = false;
  bool open_load_ = false, open_save_ = false;
};

}  // namespace maskscope::gui
