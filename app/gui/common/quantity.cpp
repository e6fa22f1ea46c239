// The quantity registry: one row per map kind the views show (quantity.hpp says what each field means).
#include "common/quantity.hpp"

#include <array>
#include <stdexcept>

namespace maskscope::gui {

namespace {

constexpr std::string_view kRecencyTooltip =
    "Recency probability (LN-recency Sec. 3): over triples i > k > j of one query's keys, the probability that "
    "the nearer key k scores higher (S_ik > S_ij), ties 1/2. 0.5 = no bias, > 0.5 recency, < 0.5 primacy. With "
    "several heads: the mean over heads, or the selected head's. ± one standard error over samples.";
constexpr std::string_view kStageTooltip =
    "The mean over samples of the inner products (or cosines) of this stage's rows s_i, s_j (docs/model.md "
    "section 10; Behind RoPE Fig. 3). Hover a cell for its standard error.";

// A stage's mean inner products <s_i, s_j> or cosines: the same row for every stage but its names.
constexpr QuantityInfo stage_row(Quantity id, std::string_view name, std::string_view symbol, Stage st, bool cosine) {
  return {.id = id,
          .name = name,
          .label = cosine ? "cos: " : "Gram: ",
          .symbol = symbol,
          .tooltip = kStageTooltip,
          .stage = st,
          .stage_mean = cosine ? &StageGram::cosine_mean : &StageGram::gram_mean,
          .stage_se = cosine ? &StageGram::cosine_se : &StageGram::gram_se,
          .unit_diagonal = cosine,
          .cells = cosine ? "E[cos(s_i, s_j)]" : "E[<s_i, s_j>]"};
}
constexpr QuantityInfo stage_gram_row(Quantity id, std::string_view name, std::string_view symbol, Stage st) {
  return stage_row(id, name, symbol, st, false);
}
constexpr QuantityInfo stage_cosine_row(Quantity id, std::string_view name, std::string_view symbol, Stage st) {
  return stage_row(id, name, symbol, st, true);
}

constexpr std::array<QuantityInfo, kQuantityCount> kRows{{
    {.id = Quantity::score,
     .name = "score",
     .label = "scores S",
     .symbol = "S",
     .tooltip = kRecencyTooltip,
     .mean = &LayerStats::score_mean,
     .se = &LayerStats::score_se,
     .diag_normalized = &LayerStats::score_diag_normalized,
     .masked = true,
     .per_head = true,
     .metric = &LayerStats::rp,
     .metric_label = "RP"},
    {.id = Quantity::weight,
     .name = "weight",
     .label = "weights A",
     .symbol = "A",
     .tooltip = kRecencyTooltip,
     .mean = &LayerStats::weight_mean,
     .se = &LayerStats::weight_se,
     .masked = true,
     .per_head = true,
     .metric = &LayerStats::rp,
     .metric_label = "RP"},
    {.id = Quantity::cosine,
     .name = "cosine",
     .label = "cosine of outputs",
     .symbol = "cos",
     .tooltip = "Adjacency probability score (Zuo et al. Sec. 4.1, App. A): over rows k >= 2 of the per-sample "
                "cosine matrix of this layer's outputs and pairs i < j < k, the probability that the nearer token "
                "j is more similar to k (C_ki < C_kj), ties 1/2, diagonal left out. 0.5 = no order; 1 = the "
                "nearer, the more similar. Layer 0 is the embeddings. ± one standard error over samples.",
     .mean = &LayerStats::cosine_mean,
     .se = &LayerStats::cosine_se,
     .unit_diagonal = true,
     .on_embeddings = true,
     .hidden_states = true,
     .metric = &LayerStats::adjacency,
     .metric_label = "adj"},
    {.id = Quantity::norm,
     .name = "norm",
     .label = "norms of outputs",
     .symbol = "||x||",
     .tooltip = "Norm adjacency (Zuo et al. Sec. 5.4, Table 6; docs/model.md section 7): over rows k >= 2 and "
                "pairs i < j < k, the probability that ||x_i|| < ||x_j||, ties 1/2. 0.5 = the norms carry no "
                "order (Chi et al.'s variance signal); below 0.5 later tokens have smaller norms. ± one standard "
                "error over samples.",
     .values = &LayerStats::norm_mean,
     .values_se = &LayerStats::norm_se,
     .range = RangeRule::from_zero,
     .on_embeddings = true,
     .hidden_states = true,
     .metric = &LayerStats::norm_adjacency,
     .metric_label = "norm adj"},
    stage_gram_row(Quantity::gram_input, "gram_input", "<s_i,s_j> input", Stage::input),
    stage_gram_row(Quantity::gram_normalized, "gram_normalized", "<s_i,s_j> normalized", Stage::normalized),
    stage_gram_row(Quantity::gram_query, "gram_query", "<s_i,s_j> query", Stage::query),
    stage_gram_row(Quantity::gram_key, "gram_key", "<s_i,s_j> key", Stage::key),
    stage_gram_row(Quantity::gram_mix, "gram_mix", "<s_i,s_j> mix", Stage::mix),
    stage_gram_row(Quantity::gram_attention, "gram_attention", "<s_i,s_j> attention", Stage::attention),
    stage_gram_row(Quantity::gram_residual, "gram_residual", "<s_i,s_j> residual", Stage::residual),
    stage_gram_row(Quantity::gram_mlp, "gram_mlp", "<s_i,s_j> mlp", Stage::mlp),
    stage_cosine_row(Quantity::cos_input, "cos_input", "cos(s_i,s_j) input", Stage::input),
    stage_cosine_row(Quantity::cos_normalized, "cos_normalized", "cos(s_i,s_j) normalized", Stage::normalized),
    stage_cosine_row(Quantity::cos_query, "cos_query", "cos(s_i,s_j) query", Stage::query),
    stage_cosine_row(Quantity::cos_key, "cos_key", "cos(s_i,s_j) key", Stage::key),
    stage_cosine_row(Quantity::cos_mix, "cos_mix", "cos(s_i,s_j) mix", Stage::mix),
    stage_cosine_row(Quantity::cos_attention, "cos_attention", "cos(s_i,s_j) attention", Stage::attention),
    stage_cosine_row(Quantity::cos_residual, "cos_residual", "cos(s_i,s_j) residual", Stage::residual),
    stage_cosine_row(Quantity::cos_mlp, "cos_mlp", "cos(s_i,s_j) mlp", Stage::mlp),
}};

// Every enum value has exactly one row, every name is distinct, and each row reads exactly one source.
constexpr bool rows_consistent() {
  for (std::size_t a = 0; a < kRows.size(); ++a) {
    const QuantityInfo& r = kRows[a];
    if (std::size_t(r.id) >= kQuantityCount || r.name.empty() || r.label.empty() || r.symbol.empty()) return false;
    const int sources = int(r.mean != nullptr) + int(r.values != nullptr) + int(r.stage.has_value());
    if (sources != 1 || (r.mean && !r.se) || (r.values && !r.values_se) || (r.stage && !(r.stage_mean && r.stage_se)))
      return false;
    for (std::size_t b = 0; b < a; ++b)
      if (kRows[b].id == r.id || kRows[b].name == r.name) return false;
  }
  return true;
}
static_assert(rows_consistent(), "quantity rows: one per Quantity, distinct names, one source each");

constexpr EnumTable<Quantity, kQuantityCount> names_of_rows() {
  EnumTable<Quantity, kQuantityCount> t{};
  for (std::size_t k = 0; k < kRows.size(); ++k) t[k] = {kRows[k].id, kRows[k].name};
  return t;
}

}  // namespace

constexpr EnumTable<Quantity, kQuantityCount> kQuantityNames = names_of_rows();

std::span<const QuantityInfo> quantities() { return kRows; }

const QuantityInfo& quantity_info(Quantity q) {
  for (const QuantityInfo& r : kRows)
    if (r.id == q) return r;
  throw std::logic_error("quantity_info: a Quantity without a registry row");  // rows_consistent() rules it out
}

std::string_view to_string(Quantity q) { return quantity_info(q).name; }
std::string_view to_string(Transform t) { return enum_name(kTransformNames, t); }
std::string_view symbol(Quantity q) { return quantity_info(q).symbol; }

std::string quantity_label(Quantity q, bool random_weights) {
  const QuantityInfo& r = quantity_info(q);
  if (!r.stage) return std::string(r.label);
  return std::string(r.label) + std::string(stage_label(*r.stage, random_weights));
}

Quantity parse_quantity(const std::string& text, const std::string& what) {
  return enum_value_or_throw(kQuantityNames, text, what);
}
Transform parse_transform(const std::string& text, const std::string& what) {
  return enum_value_or_throw(kTransformNames, text, what);
}

Stage stage_of(Quantity q) {
  const QuantityInfo& r = quantity_info(q);
  if (!r.stage) throw std::logic_error("stage_of: " + std::string(r.name) + " is not a stage quantity");
  return *r.stage;
}

Quantity stage_quantity(Stage st, bool cosine) {
  for (const QuantityInfo& r : kRows)
    if (r.stage == st && r.unit_diagonal == cosine) return r.id;
  throw std::logic_error("stage_quantity: no row for the stage");
}

bool family_has(const Settings& s, Quantity q) {
  const QuantityInfo& r = quantity_info(q);
  if (!r.stage) return true;
  Settings on = s;
  on.stage_grams = true;
  return (stage_bits(on) >> unsigned(*r.stage)) & 1u;
}

Settings settings_showing(Settings s, Quantity q) {
  if (is_stage(q) && family_has(s, q)) s.stage_grams = true;
  return s;
}

RangeRule range_rule(Quantity q, Transform t) {
  const QuantityInfo& r = quantity_info(q);
  // n values per position have no diagonals to normalize: they keep their own rule.
  return t == Transform::diagonal_normalized && !r.is_vector() ? RangeRule::symmetric : r.range;
}

namespace {
// The map quantity row `r` reads from `l` (its standard errors when `se`); nullptr for n values.
const Map* map_in(const LayerStats& l, const QuantityInfo& r, bool se) {
  if (r.stage) return &(l.stages[std::size_t(*r.stage)].*(se ? r.stage_se : r.stage_mean));
  if (r.mean) return &(l.*(se ? r.se : r.mean));
  return nullptr;
}

void quantity_values(const LayerStats& l, Quantity q, bool se, std::vector<double>& out) {
  const QuantityInfo& r = quantity_info(q);
  if (const Map* m = map_in(l, r, se)) return m->unpack(out);
  const std::vector<double>& v = l.*(se ? r.values_se : r.values);
  out.assign(v.begin(), v.end());
}
}  // namespace

bool has_quantity(const LayerStats& l, Quantity q) {
  const QuantityInfo& r = quantity_info(q);
  if (const Map* m = map_in(l, r, false)) return !m->empty();
  return !(l.*r.values).empty();
}

void mean_of(const LayerStats& l, Quantity q, std::vector<double>& out) { quantity_values(l, q, false, out); }
void se_of(const LayerStats& l, Quantity q, std::vector<double>& out) { quantity_values(l, q, true, out); }

}  // namespace maskscope::gui
