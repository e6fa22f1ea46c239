// What the window and the figures show of a snapshot, with no GL: the view options, and one
// displayed map per layer (raw or diagonal-normalized scores, weights or cosine similarities).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "colormap.hpp"
#include "core/snapshot.hpp"

namespace maskscope::gui {

enum class Tab { attention, diagonal, h_of_j, metrics, figure };
enum class Quantity { score, weight, cosine };
enum class Transform { raw, diagonal_normalized };  // Behind RoPE Fig. 4: each diagonal minus its mean

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

std::string_view to_string(Tab t);
std::string_view to_string(Quantity q);
std::string_view to_string(Transform t);
// Symbol of a quantity in figure titles: S, A or cos.
std::string_view symbol(Quantity q);

nlohmann::json view_to_json(const ViewOptions& v);
// Reads the keys present; throws std::runtime_error naming the key on a bad value.
void view_from_json(const nlohmann::json& j, ViewOptions& v);
// Name parsers shared by the preset reader and the command line; throw std::runtime_error naming `what`.
Tab parse_tab(const std::string& text, const std::string& what);
Quantity parse_quantity(const std::string& text, const std::string& what);
Transform parse_transform(const std::string& text, const std::string& what);
ColormapId parse_colormap(const std::string& text, const std::string& what);

// One displayed map: values as shown (NaN = masked or hidden), their standard errors, range.
struct PanelData {
  int layer = 0;
  int n = 0;
  std::vector<double> value, se;
  float lo = 0, hi = 1;
};

const std::vector<double>& mean_of(const LayerStats& l, Quantity q);
const std::vector<double>& se_of(const LayerStats& l, Quantity q);

// The map of layer index `k` (0-based) of `snap`. Raw maps hide the diagonal except row 0 when
// asked (not for cosines, whose diagonal is 1); diagonal-normalized maps get a range symmetric
// about 0, clipped at the 1% / 99% quantiles (Behind RoPE Fig. 5).
PanelData build_panel(const Snapshot& snap, std::size_t k, Quantity q, Transform t, bool hide_diagonal);
// All layers of the current tab.
std::vector<PanelData> build_panels(const Snapshot& snap, const ViewOptions& view);
// Gives every panel the union of their ranges (symmetric about 0 when `symmetric`).
void share_range(std::vector<PanelData*>& panels, bool symmetric);

// "Nice" tick positions (1, 2, 5 x 10^k) covering [lo, hi] with about `target` ticks.
std::vector<double> nice_ticks(double lo, double hi, int target);

}  // namespace maskscope::gui
