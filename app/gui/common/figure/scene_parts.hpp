// Scene pieces shared by the figure layouts (figure_layout.cpp) and the charts (chart*.cpp): the house
// colours, a colormap lookup, the series palette and the labelled colour bar.
#pragma once

#include <cstddef>

#include "common/colormap.hpp"
#include "common/figure/figure_render.hpp"

namespace maskscope::gui {

inline const Rgba kBlack{0, 0, 0, 1};
inline const Rgba kGrey{0.35f, 0.35f, 0.35f, 1};
inline const Rgba kMasked{1, 1, 1, 1};  // masked cells show the page

// The colour of v on `cm` over [lo, hi]; kMasked when v is not finite.
Rgba from_map(const Colormap& cm, double v, float lo, float hi);
// Series k's colour (series_color) as an opaque Rgba.
Rgba palette(std::size_t k);
// The colour at the top (hi) or bottom (lo) end of `cm`.
Rgba end_color(const Colormap& cm, bool top);

// A colour bar with its ends and middle labelled, and a triangle at each end whose values were
// clipped (as matplotlib's `extend`). Needs hi > lo.
void add_colorbar(Scene& sc, float x0, float y0, float x1, float y1, const Colormap& cm, float lo, float hi, bool below,
                  bool above, float tick_size);

// Words wrapped into lines no wider than `room` at `size` (a word longer than that gets a line of its own).
std::vector<std::string> wrap_words(const std::string& text, float size, float room);

}  // namespace maskscope::gui
