// Scene pieces shared by the figure layouts and the charts: colormap lookup, palette, labelled colour bar.
#include "common/figure/scene_parts.hpp"

#include <array>
#include <cmath>
#include <vector>

#include "common/format.hpp"

namespace maskscope::gui {

Rgba from_map(const Colormap& cm, double v, float lo, float hi) {
  if (!std::isfinite(v)) return kMasked;
  const auto c = cm.at(hi > lo ? float((v - lo) / (hi - lo)) : 0.5f);
  return {c[0], c[1], c[2], 1};
}

Rgba palette(std::size_t k) {
  const auto c = series_color(k);
  return {c[0], c[1], c[2], 1};
}

Rgba end_color(const Colormap& cm, bool top) {
  const auto c = cm.at(top ? 1.0f : 0.0f);
  return {c[0], c[1], c[2], 1};
}

// A colour bar with its ends and middle labelled, and a triangle at each end whose values were
// clipped (as matplotlib's `extend`).
void add_colorbar(Scene& sc, float x0, float y0, float x1, float y1, const Colormap& cm, float lo, float hi, bool below,
                  bool above, float tick_size) {
  SceneColorbar bar{x0, y0, x1, y1, {}};
  for (int k = 0; k < 32; ++k) {
    const auto c = cm.at(float(k) / 31.0f);
    bar.stops.push_back({c[0], c[1], c[2], 1});
  }
  sc.items.push_back(bar);
  sc.items.push_back(SceneRect{x0, y0, x1, y1, {0, 0, 0, 0}, kGrey, 0.5f});
  const float tri = (x1 - x0) * 0.9f;
  // Filled in the end colour, outlined so that a light end (rocket's cream) shows on a white page.
  if (above) {
    const std::vector<std::array<float, 2>> t = {
        {x0, y0 - 1}, {x1, y0 - 1}, {(x0 + x1) / 2, y0 - 1 - tri}, {x0, y0 - 1}};
    sc.items.push_back(ScenePath{t, end_color(cm, true), 0.5f, false, true});
    sc.items.push_back(ScenePath{t, kGrey, 0.5f, false, false});
  }
  if (below) {
    const std::vector<std::array<float, 2>> t = {
        {x0, y1 + 1}, {x1, y1 + 1}, {(x0 + x1) / 2, y1 + 1 + tri}, {x0, y1 + 1}};
    sc.items.push_back(ScenePath{t, end_color(cm, false), 0.5f, false, true});
    sc.items.push_back(ScenePath{t, kGrey, 0.5f, false, false});
  }
  for (const ColorbarTick& t : colorbar_ticks(lo, hi)) {
    const float y = y1 - float((t.value - lo) / double(hi - lo)) * (y1 - y0);
    sc.items.push_back(ScenePath{{{x1, y}, {x1 + 2.5f, y}}, kGrey, 0.6f, false});
    sc.items.push_back(
        SceneText{x1 + 4, y + tick_size * 0.35f, tick_size, t.text, Anchor::start, false, false, kBlack});
  }
}

std::vector<std::string> wrap_words(const std::string& text, float size, float room) {
  std::vector<std::string> lines;
  std::string line;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t space = std::min(text.find(' ', at), text.size());
    const std::string word = text.substr(at, space - at);
    at = space + 1;
    if (!line.empty() && text_width(line + " " + word, size) > room) lines.push_back(line), line.clear();
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

}  // namespace maskscope::gui
