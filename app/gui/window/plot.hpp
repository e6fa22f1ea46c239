// A small 2D line plot for Dear ImGui: axes with "nice" ticks and labels, series with markers and
// error bars, a legend, and a hover read-out. General enough for any x-y data.
#pragma once

#include <imgui.h>

#include <limits>
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
  // Values the y axis shows whatever the data (NaN: none), e.g. 0 and 1 for a fraction, so that a flat
  // series sits on its true scale instead of being stretched over rounding.
  double y_include_lo = std::numeric_limits<double>::quiet_NaN();
  double y_include_hi = std::numeric_limits<double>::quiet_NaN();
};

// Draws the plot filling `size` (negative components: take the remaining space).
void plot(const char* id, ImVec2 size, const PlotSpec& spec, const std::vector<PlotSeries>& series);

}  // namespace maskscope::gui
