// A small 2D line plot for Dear ImGui: axes with "nice" ticks and labels, series with markers and
// error bars, a legend, and a hover read-out. General enough for any x-y data.
#pragma once

#include <imgui.h>

#include <string>
#include <vector>

namespace maskscope::gui {

struct PlotSeries {
  std::string label;
  std::vector<double> x, y;
  std::vector<double> err;  // optional, same length as y: error bar half-heights
  ImU32 color = IM_COL32(31, 119, 180, 255);
  float thickness = 1.5f;
  bool markers = true;
  bool dashed = false;
};

struct PlotSpec {
  std::string title;
  std::string x_label, y_label;
  bool integer_x = false;  // ticks only at integers
  bool legend = true;
};

// Draws the plot filling `size` (negative components: take the remaining space).
void plot(const char* id, ImVec2 size, const PlotSpec& spec, const std::vector<PlotSeries>& series);

}  // namespace maskscope::gui
