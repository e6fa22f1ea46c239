// The quantities the views show, one registry row each (after Polyscope's quantities): its name, words,
// symbol, what it reads from a LayerStats, how its colour range and map are chosen, which runs have it and
// its tooltip. The panels, the show list, the badges, the figures, presets, links and the command line read
// the rows; a new map kind is one enum value and one row (quantity.cpp).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/enum_names.hpp"
#include "core/model/settings.hpp"
#include "core/model/stages.hpp"
#include "core/stats/snapshot.hpp"

namespace maskscope::gui {

// norm: the layer's output norms ||x_i|| per position (Chi et al.'s variance signal; Zuo et al. Table 6).
// gram_* / cos_*: the mean inner products / cosines of one stage of the forward pass (stages.hpp;
// Settings::stage_grams, docs/model.md section 12).
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
inline constexpr std::size_t kQuantityCount = 20;  // rows of the registry (checked at compile time)

enum class Transform { raw, diagonal_normalized };  // Behind RoPE Fig. 4: each diagonal minus its mean
inline constexpr EnumTable<Transform, 2> kTransformNames{
    {{Transform::raw, "raw"}, {Transform::diagonal_normalized, "diagonal_normalized"}}};

// How a panel's colour range is chosen (Polyscope's data types) and so its colormap.
enum class RangeRule {
  data,       // the sequential map over the shown cells: min..max or the 1%/99% quantiles (RangeMode)
  symmetric,  // the diverging map, symmetric about 0: every diagonal-normalized map
  from_zero,  // bars from 0 to the largest value plus its SE (one value per position: the norms)
};

struct QuantityInfo {
  Quantity id = Quantity::score;
  std::string_view name{};     // as presets, view JSON, links and --show spell it
  std::string_view label{};    // the show list's words; a stage's: "Gram: " or "cos: ", then its stage_label
  std::string_view symbol{};   // in panel and figure titles and the hover read-out: S, A, cos, ||x||
  std::string_view tooltip{};  // the badge's explanation: its metric, or what the cells are
  // What it reads from a LayerStats, one of: an n x n map with its standard errors; n values per position;
  // or a stage's map (LayerStats::stages[stage]).
  Map LayerStats::*mean = nullptr;
  Map LayerStats::*se = nullptr;
  Map LayerStats::*diag_normalized = nullptr;  // the snapshot's own diagonal-normalized copy, when it keeps one
  std::vector<double> LayerStats::*values = nullptr;
  std::vector<double> LayerStats::*values_se = nullptr;
  std::optional<Stage> stage{};  // needs Settings::stage_grams and a family that has the stage (stage_bits)
  Map StageGram::*stage_mean = nullptr;
  Map StageGram::*stage_se = nullptr;
  RangeRule range = RangeRule::data;  // of the raw map (diagonal-normalized maps are symmetric)
  bool masked = false;         // NaN above the mask (scores, weights): hiding the diagonal keeps row 0's only cell
  bool unit_diagonal = false;  // the diagonal is 1 (cosines): never in the colour range, even when shown
  bool per_head = false;       // random weights with several heads: one head's map, or their mean
  bool on_embeddings = false;  // random weights: also layer 0, the embeddings (Zuo et al. Fig. 1)
  bool hidden_states = false;  // read from the hidden states, which a tensor folder may lack (d 0)
  // The metric its badge gives (a row of core/stats/metric_table.cpp, read through its LayerStats field) under
  // a short name, or nullptr (a stage's Gram matrix has no metric of its own).
  Estimate LayerStats::*metric = nullptr;
  std::string_view metric_label{};  // the badge's short name of the metric: "RP", "adj", "norm adj"
  std::string_view cells{};         // the badge when there is no metric: what a cell holds

  bool is_stage() const { return stage.has_value(); }
  bool is_vector() const { return values != nullptr; }  // n values (bars), not an n x n map
};

// Every quantity in the show list's order.
std::span<const QuantityInfo> quantities();
const QuantityInfo& quantity_info(Quantity q);
// The names of the quantities, from the registry (enum_names.hpp): --help, enum_value, enum_names_text.
extern const EnumTable<Quantity, kQuantityCount> kQuantityNames;

std::string_view to_string(Quantity q);
std::string_view to_string(Transform t);
std::string_view symbol(Quantity q);
// The show list's words for q in the family: "scores S", "Gram: Norm(x)", "cos: queries q".
std::string quantity_label(Quantity q, bool random_weights);
// Throw std::runtime_error naming `what` and the valid names.
Quantity parse_quantity(const std::string& text, const std::string& what);
Transform parse_transform(const std::string& text, const std::string& what);

// The stage quantities: which stage, and the quantity of a stage's inner products or cosines.
inline bool is_stage(Quantity q) { return quantity_info(q).is_stage(); }
Stage stage_of(Quantity q);  // q must be a stage quantity
Quantity stage_quantity(Stage st, bool cosine);
// Whether runs of `s` have quantity q once stage_grams is on (a stage the family lacks: no).
bool family_has(const Settings& s, Quantity q);
// `s` as a run that shows q needs it: stage_grams on for a stage quantity (the window restarts with it).
Settings settings_showing(Settings s, Quantity q);

// The colour range rule of q's map after transform t, and whether it is drawn with the diverging map.
RangeRule range_rule(Quantity q, Transform t);
inline bool diverging_map(Quantity q, Transform t) { return range_rule(q, t) == RangeRule::symmetric; }

// Whether layer `l` has quantity q (the embeddings have no scores or weights).
bool has_quantity(const LayerStats& l, Quantity q);
// Quantity q's means or standard errors as a full row-major array (n x n; n for the norms), into
// `out` (its memory reused).
void mean_of(const LayerStats& l, Quantity q, std::vector<double>& out);
void se_of(const LayerStats& l, Quantity q, std::vector<double>& out);

}  // namespace maskscope::gui
