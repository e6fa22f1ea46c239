// What the window and the figures show of a snapshot, with no GL: the view options, and one
// displayed map per layer (raw or diagonal-normalized scores, weights or cosine similarities).
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/enum_names.hpp"
#include "core/model/stages.hpp"
#include "core/stats/snapshot.hpp"
#include "model/colormap.hpp"

namespace maskscope::gui {

enum class Tab { attention, diagonal, h_of_j, metrics, figure, leakage, sweep, probes, histograms };
// norm: the layer's output norms ||x_i|| per position (Chi et al.'s variance signal; Zuo et al. Table 6).
// gram_* / cos_*: the mean inner products / cosines of one stage of the forward pass (stages.hpp, in Stage
// order; Settings::stage_grams, docs/model.md section 12).
enum class Quantity {
  score,
  weight,
  cosine,
  norm,
  gram_input,
  gram_normalized,
  gram_query,
  gram_key,
  gram_mix,
  gram_attention,
  gram_residual,
  gram_mlp,
  cos_input,
  cos_normalized,
  cos_query,
  cos_key,
  cos_mix,
  cos_attention,
  cos_residual,
  cos_mlp
};
enum class Transform { raw, diagonal_normalized };  // Behind RoPE Fig. 4: each diagonal minus its mean
// How a panel's colour range is chosen. all: min..max of every shown cell; visible: leaves out
// the diagonal (and so the (0,0) cell, sqrt(d) for LN scores) when it is hidden; robust: the
// 1% / 99% quantiles of the visible cells (Behind RoPE Fig. 5). Values beyond the range are
// clipped and the colorbar says so (end triangles).
enum class RangeMode { all, visible, robust };

// The names of each enum as presets, views and the command line spell them (enum_names.hpp).
inline constexpr EnumTable<Tab, 9> kTabNames{{{Tab::attention, "attention"},
                                              {Tab::diagonal, "diagonal"},
                                              {Tab::h_of_j, "hofj"},
                                              {Tab::metrics, "metrics"},
                                              {Tab::figure, "figure"},
                                              {Tab::leakage, "leakage"},
                                              {Tab::sweep, "sweep"},
                                              {Tab::probes, "probes"},
                                              {Tab::histograms, "histograms"}}};
inline constexpr EnumTable<Quantity, 20> kQuantityNames{{{Quantity::score, "score"},
                                                         {Quantity::weight, "weight"},
                                                         {Quantity::cosine, "cosine"},
                                                         {Quantity::norm, "norm"},
                                                         {Quantity::gram_input, "gram_input"},
                                                         {Quantity::gram_normalized, "gram_normalized"},
                                                         {Quantity::gram_query, "gram_query"},
                                                         {Quantity::gram_key, "gram_key"},
                                                         {Quantity::gram_mix, "gram_mix"},
                                                         {Quantity::gram_attention, "gram_attention"},
                                                         {Quantity::gram_residual, "gram_residual"},
                                                         {Quantity::gram_mlp, "gram_mlp"},
                                                         {Quantity::cos_input, "cos_input"},
                                                         {Quantity::cos_normalized, "cos_normalized"},
                                                         {Quantity::cos_query, "cos_query"},
                                                         {Quantity::cos_key, "cos_key"},
                                                         {Quantity::cos_mix, "cos_mix"},
                                                         {Quantity::cos_attention, "cos_attention"},
                                                         {Quantity::cos_residual, "cos_residual"},
                                                         {Quantity::cos_mlp, "cos_mlp"}}};
// The stage Gram quantities: which stage, inner products or cosines, and whether a family has it.
constexpr bool is_stage(Quantity q) { return q >= Quantity::gram_input; }
constexpr bool is_stage_cosine(Quantity q) { return q >= Quantity::cos_input; }
constexpr Stage stage_of(Quantity q) { return Stage((int(q) - int(Quantity::gram_input)) % kStageCount); }
constexpr Quantity stage_quantity(Stage st, bool cosine) {
  return Quantity(int(cosine ? Quantity::cos_input : Quantity::gram_input) + int(st));
}
// Whether runs of `s` have quantity q once stage_grams is on (a stage the family lacks: no).
inline bool family_has(const Settings& s, Quantity q) {
  if (!is_stage(q)) return true;
  Settings on = s;
  on.stage_grams = true;
  return (stage_bits(on) >> unsigned(stage_of(q))) & 1u;
}
// `s` as a run that shows q needs it: stage_grams on for a stage quantity (the window restarts with it).
inline Settings settings_showing(Settings s, Quantity q) {
  if (is_stage(q) && family_has(s, q)) s.stage_grams = true;
  return s;
}
inline constexpr EnumTable<Transform, 2> kTransformNames{
    {{Transform::raw, "raw"}, {Transform::diagonal_normalized, "diagonal_normalized"}}};
inline constexpr EnumTable<RangeMode, 3> kRangeModeNames{
    {{RangeMode::all, "all"}, {RangeMode::visible, "visible"}, {RangeMode::robust, "robust"}}};

// The value named `text` in table t; otherwise throws std::runtime_error "WHAT: 'text'; valid: a, b, c".
template <class E, std::size_t N>
E parse_enum(const EnumTable<E, N>& t, const std::string& text, const std::string& what) {
  if (const auto v = enum_value(t, text)) return *v;
  throw std::runtime_error(what + ": '" + text + "'; valid: " + enum_names_text(t));
}

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

std::string_view to_string(Tab t);
std::string_view to_string(Quantity q);
std::string_view to_string(Transform t);
std::string_view to_string(RangeMode r);
// Symbol of a quantity in figure titles: S, A, cos, ||x||, or "<s_i, s_j> Norm(x)" for a stage's Gram.
std::string_view symbol(Quantity q);
// The stage quantity's words in the family (the window's show list): "Gram: Norm(x)", "cos: queries q".
std::string stage_quantity_label(Quantity q, bool random_weights);

nlohmann::json view_to_json(const ViewOptions& v);
// Reads the keys present; throws std::runtime_error naming the key on a bad value.
void view_from_json(const nlohmann::json& j, ViewOptions& v);
// Name parsers shared by the preset reader and the command line; throw std::runtime_error naming `what`.
Tab parse_tab(const std::string& text, const std::string& what);
Quantity parse_quantity(const std::string& text, const std::string& what);
Transform parse_transform(const std::string& text, const std::string& what);
ColormapId parse_colormap(const std::string& text, const std::string& what);
RangeMode parse_range_mode(const std::string& text, const std::string& what);

// One displayed map: values as shown (NaN = masked or hidden), their standard errors, range.
struct PanelData {
  int layer = 0;  // 1-based; 0 = the embeddings (random_weights)
  int n = 0;
  bool norms = false;  // value and se hold n norms ||x_i|| (drawn as bars), not an n x n map
  std::vector<double> value, se;
  float lo = 0, hi = 1;
  bool centred = false;               // diverging map, range symmetric about 0
  bool below = false, above = false;  // some shown value lies outside [lo, hi] (clipped)
  std::vector<unsigned char> noise;   // 1 where a centred value is within 2 SE of 0 (greyed)
  double ties = 0;                    // tie fraction of the panel's metric (RP or adjacency)
  const char* metric_name = "";       // the panel's metric (panel_metric): "RP", "adj", "norm adj"
  double metric = 0, metric_se = 0;
  double max_se = -1;  // the largest finite SE where the value is finite (set by fit_range); -1: not known
};

// Sets p.lo / p.hi (and below / above) from p.value by `mode`; `skip_diagonal` leaves the
// diagonal out of the range (it is hidden, or it is the cosine's constant 1). A centred panel
// gets a range symmetric about 0; an all-zero one gets +-2 SE (or +-1 without SEs), never +-0.
void fit_range(PanelData& p, RangeMode mode, bool centred, bool skip_diagonal);
// Marks p.noise where |value| <= 2 SE (centred maps only).
void mark_noise(PanelData& p);

// Whether layer `l` has quantity q (the embeddings have no scores or weights).
bool has_quantity(const LayerStats& l, Quantity q);
// Quantity q's means or standard errors as a full row-major array (n x n; n for the norms), into
// `out` (its memory reused).
void mean_of(const LayerStats& l, Quantity q, std::vector<double>& out);
void se_of(const LayerStats& l, Quantity q, std::vector<double>& out);

// The map of layer index `k` (0-based) of `snap`. Raw maps hide the diagonal except row 0 when
// asked (cosines: the whole diagonal, which is 1); diagonal-normalized maps are centred.
struct PanelStyle {
  bool hide_diagonal = true;
  RangeMode range = RangeMode::robust;
  bool grey_noise = true;
};
PanelData build_panel(const Snapshot& snap, std::size_t k, Quantity q, Transform t, const PanelStyle& style);
// The same for layer statistics `l` (a block, the embeddings, or a head_view) of a run with n tokens.
PanelData build_panel(const LayerStats& l, int n, Quantity q, Transform t, const PanelStyle& style);
// The same into `p`, whose arrays keep their memory (a window rebuilds its panels at every snapshot).
void build_panel(const LayerStats& l, int n, Quantity q, Transform t, const PanelStyle& style, PanelData& p);
// The layers a tab shows: 1..L, and first the embeddings (layer 0) for cosines and norms of the
// random-weight family (Zuo et al. Fig. 1 starts there).
std::vector<int> shown_layers(const Snapshot& snap, Quantity q);
// The metric a panel's badge and a figure's title give: RP for S and A, adjacency for cos, norm
// adjacency for ||x||; name, value, SE and tie fraction.
struct PanelMetric {
  const char* name;
  double value, se, ties;
};
PanelMetric panel_metric(const LayerStats& l, Quantity q);
// All layers of the current tab.
std::vector<PanelData> build_panels(const Snapshot& snap, const ViewOptions& view);
// The same into `panels`, reusing its panels' memory.
void build_panels(const Snapshot& snap, const ViewOptions& view, std::vector<PanelData>& panels);
// The largest standard error among the shown (finite) cells of `panels` (0 when none): the status
// line shows it and --screenshot-at-se waits for it.
double largest_shown_se(const std::vector<PanelData>& panels);

// Gives every panel the union of their ranges (symmetric about 0 when `symmetric`) and
// recomputes which of them now clip.
void share_range(std::vector<PanelData*>& panels, bool symmetric);

// The map after the transform: raw, or each diagonal minus its mean (one place for both the
// window and the exports; the snapshot's score_diag_normalized is the same function).
std::vector<double> transformed(const LayerStats& l, Quantity q, Transform t, int n);
void transformed(const LayerStats& l, Quantity q, Transform t, int n, std::vector<double>& out);

// "Nice" tick positions (1, 2, 5 x 10^k) covering [lo, hi] with about `target` ticks.
std::vector<double> nice_ticks(double lo, double hi, int target);

}  // namespace maskscope::gui
