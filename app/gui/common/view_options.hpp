// What the live window shows and how (the tab, the quantity, colormaps, colour range, diagonal, noise,
// theme, head) and its JSON in presets and lessons.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "core/model/enum_names.hpp"
#include "common/colormap.hpp"
#include "common/quantity.hpp"
#include "common/tabs.hpp"

namespace maskscope::gui {

// How a panel's colour range is chosen. all: min..max of every shown cell; visible: leaves out
// the diagonal (and so the (0,0) cell, sqrt(d) for LN scores) when it is hidden; robust: the
// 1% / 99% quantiles of the visible cells (Behind RoPE Fig. 5). Values beyond the range are
// clipped and the colorbar says so (end triangles).
enum class RangeMode { all, visible, robust };
inline constexpr EnumTable<RangeMode, 3> kRangeModeNames{
    {{RangeMode::all, "all"}, {RangeMode::visible, "visible"}, {RangeMode::robust, "robust"}}};
std::string_view to_string(RangeMode r);
// Throws std::runtime_error naming `what` and the valid names.
RangeMode parse_range_mode(const std::string& text, const std::string& what);

struct ViewOptions {
  Tab tab = Tab::attention;
  Quantity quantity = Quantity::score;
  ColormapId sequential = ColormapId::rocket;
  ColormapId diverging = ColormapId::rdbu;
  bool hide_diagonal = true;  // LN-recency Fig. 1: diagonal masked except row 0 (cosines: all of it)
  RangeMode range = RangeMode::robust;
  bool grey_noise = true;  // centred maps: grey where |value| <= 2 SE (noise looks like noise)
  bool shared_range = false;
  bool light_theme = false;
  int head = -1;  // random_weights: score and weight maps of one head (0-based); -1 the mean of heads
  bool operator==(const ViewOptions&) const = default;
};

// The map transform the tab shows: the Diagonal-normalized tab's, raw otherwise.
inline Transform transform_of(Tab t) { return t == Tab::diagonal ? Transform::diagonal_normalized : Transform::raw; }

nlohmann::json view_to_json(const ViewOptions& v);
// Reads the keys present; throws std::runtime_error naming the key on a bad value.
void view_from_json(const nlohmann::json& j, ViewOptions& v);

}  // namespace maskscope::gui
