// The figure workflow with no window: the spec being edited, its background runs, the numbers
// and the laid-out scene they give, the preset it belongs to, and its export. The Figure tab
// (figure_tab.cpp) draws it; the headless --export-figure path drives it the same way.
#pragma once

#include <chrono>
#include <string>

#include "common/figure/figure.hpp"
#include "common/figure/figure_render.hpp"
#include "common/figure/figure_runs.hpp"

namespace maskscope::gui {

class FigureWorkbench {
 public:
  explicit FigureWorkbench(RunOptions run_options = {}) : runs_(std::move(run_options)) {}

  FigureSpec& spec() { return spec_; }
  const FigureSpec& spec() const { return spec_; }
  const FigureData& data() const { return data_; }
  const Scene& scene() const { return scene_; }
  const FigureRuns& runs() const { return runs_; }
  FigureRuns& runs() { return runs_; }
  ExportOptions& export_options() { return export_; }
  std::string& export_folder() { return export_dir_; }
  std::string& layers_text() { return layers_text_; }  // the Figure tab's "layers" field

  // Takes the preset's figure, export options, name and description (the settings and view are
  // the live window's: Views applies them).
  void load(const Preset& p);
  // The preset that reproduces this figure with the live window's settings and view.
  Preset preset(const Settings& live, const ViewOptions& view) const;
  const std::string& preset_name() const { return preset_name_; }
  void set_preset_name(std::string name) { preset_name_ = std::move(name); }

  // Starts / cancels runs for spec changes and rebuilds the data and scene: at once after an
  // edit, when `force` or once the runs have finished, else ten times a second while they refine.
  void refresh(bool force);
  bool complete() const { return runs_.all_done(); }  // every run finished (true without rows)
  // The data and scene on screen are built from finished runs only (what a screenshot waits for).
  bool shown_complete() const { return data_.complete; }
  ExportResult export_now(const std::string& dir, const Preset& preset);
  // The path for the next auto-numbered window screenshot (F12) in the export folder.
  std::string next_screenshot_path() const;

  std::string message;  // the last export / preset result, shown beside the export button
  bool message_error = false;

 private:
  FigureSpec spec_;
  FigureSpec running_spec_;  // the spec the runs were last updated for
  FigureRuns runs_;
  FigureData data_;
  Scene scene_;
  std::chrono::steady_clock::time_point built_{};
  std::string preset_name_ = "untitled";
  std::string preset_description_;
  ExportOptions export_;
  std::string export_dir_ = "maskscope-figures";
  std::string layers_text_ = "1,2";
};

// "1,2,4" <-> {1, 2, 4}; parse_layers is false (and leaves `out`) on anything but layer numbers in range.
std::string layers_to_text(const std::vector<int>& layers);
bool parse_layers(const std::string& text, std::vector<int>& out);

}  // namespace maskscope::gui
