// The quantity registry (common/quantity.hpp): each row's name reads back as its quantity, the names are
// distinct, and each quantity's colour range rule gives the expected range on a small known layer.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/model/key_ranges.hpp"
#include "core/stats/map.hpp"
#include "common/panels.hpp"
#include "common/quantity.hpp"

using namespace maskscope;
using namespace maskscope::gui;

namespace {

// A map of `shape` holding `cells` (its stored cells, row after row).
Map known_map(const std::shared_ptr<const MapShape>& shape, std::vector<double> cells) {
  REQUIRE(cells.size() == shape->cells());
  auto owned = std::make_shared<std::vector<double>>(std::move(cells));
  return Map(shape, std::shared_ptr<const double>(owned, owned->data()));
}

// One layer of n 3 with known values in every map the registry reads, standard errors 0.01.
//   scores (causal)  2 | -0.5 1.5 | 0.25 0.75 1     weights  1 | 0.25 0.75 | 0 0.5 0.5
//   cosines and every stage's cosines (symmetric, lower triangle)  1 | 0.2 1 | -0.1 0.6 1
//   every stage's Gram matrix (symmetric)  4 | 1 4 | -2 3 4     norms 1 2 3 with SEs 0.1 0.1 0.5
LayerStats known_layer() {
  Settings s;
  s.n = 3;
  const auto masked = masked_shape(key_ranges(s));
  const auto symmetric = symmetric_shape(3);
  const std::vector<double> se(6, 0.01);
  const std::vector<double> cosines{1, 0.2, 1, -0.1, 0.6, 1};
  LayerStats l;
  l.layer = 1;
  l.score_mean = known_map(masked, {2, -0.5, 1.5, 0.25, 0.75, 1});
  l.score_se = known_map(masked, se);
  l.score_diag_normalized = diagonal_normalized(l.score_mean);
  l.weight_mean = known_map(masked, {1, 0.25, 0.75, 0, 0.5, 0.5});
  l.weight_se = known_map(masked, se);
  l.cosine_mean = known_map(symmetric, cosines);
  l.cosine_se = known_map(symmetric, se);
  l.norm_mean = {1, 2, 3};
  l.norm_se = {0.1, 0.1, 0.5};
  for (StageGram& g : l.stages) {
    g.gram_mean = known_map(symmetric, {4, 1, 4, -2, 3, 4});
    g.gram_se = known_map(symmetric, se);
    g.cosine_mean = known_map(symmetric, cosines);
    g.cosine_se = known_map(symmetric, se);
  }
  return l;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

}  // namespace

TEST_CASE("quantity registry: one row per quantity, each name reads back as its quantity, names distinct") {
  REQUIRE(quantities().size() == kQuantityCount);
  std::set<std::string_view> names, symbols;
  std::set<int> ids;
  for (const QuantityInfo& q : quantities()) {
    CAPTURE(q.name);
    CHECK(quantity_info(q.id).name == q.name);
    CHECK(to_string(q.id) == q.name);
    CHECK(parse_quantity(std::string(q.name), "show") == q.id);
    CHECK(enum_value(kQuantityNames, q.name) == q.id);
    CHECK(names.insert(q.name).second);
    CHECK(symbols.insert(q.symbol).second);  // titles and hover read-outs tell every quantity apart
    CHECK(ids.insert(int(q.id)).second);
    CHECK_FALSE(q.tooltip.empty());
    CHECK((q.metric == nullptr) == !q.cells.empty());  // a badge shows a metric or what a cell is
  }
  CHECK(ids.size() == kQuantityCount);
  // The names presets, lessons, links and --show have spelled since they were written still read the same.
  const std::vector<std::pair<const char*, Quantity>> spelled{{"score", Quantity::score},
                                                              {"weight", Quantity::weight},
                                                              {"cosine", Quantity::cosine},
                                                              {"norm", Quantity::norm},
                                                              {"gram_input", Quantity::gram_input},
                                                              {"gram_normalized", Quantity::gram_normalized},
                                                              {"gram_key", Quantity::gram_key},
                                                              {"gram_mlp", Quantity::gram_mlp},
                                                              {"cos_query", Quantity::cos_query},
                                                              {"cos_mix", Quantity::cos_mix},
                                                              {"cos_attention", Quantity::cos_attention}};
  for (const auto& [name, q] : spelled) CHECK(parse_quantity(name, "show") == q);
  CHECK_THROWS_WITH(parse_quantity("cosines", "view.show"),
                    doctest::Contains("view.show: 'cosines'; valid: score, weight, cosine, norm, gram_input"));
  CHECK(std::string(symbol(Quantity::weight)) == "A");
  CHECK(std::string(symbol(Quantity::cos_mix)) == "cos(s_i,s_j) mix");
}

TEST_CASE("quantity registry: the show list's words are distinct within each family") {
  for (const bool random_weights : {false, true}) {
    Settings s;
    if (random_weights) s.model = Model::random_weights;
    std::set<std::string> labels;
    for (const QuantityInfo& q : quantities())
      if (family_has(s, q.id)) CHECK(labels.insert(quantity_label(q.id, random_weights)).second);
    CHECK(labels.count("cosine of outputs") == 1);
    CHECK(labels.count(random_weights ? "Gram: A V (before W_O)" : "Gram: A Y (before the residual)") == 1);
  }
}

TEST_CASE("quantity registry: each colour range rule on a known layer (raw, visible cells, diagonal shown)") {
  const LayerStats l = known_layer();
  const PanelStyle all{false, RangeMode::visible, false};
  for (const QuantityInfo& q : quantities()) {
    CAPTURE(q.name);
    REQUIRE(has_quantity(l, q.id));
    CHECK_FALSE(diverging_map(q.id, Transform::raw));
    const PanelData p = build_panel(l, 3, q.id, Transform::raw, all);
    CHECK_FALSE(p.centred);
    CHECK(p.norms == (q.id == Quantity::norm));
    if (q.id == Quantity::score) {  // min..max, the diagonal included
      CHECK(p.lo == -0.5f);
      CHECK(p.hi == 2.0f);
    } else if (q.id == Quantity::weight) {
      CHECK(p.lo == 0.0f);
      CHECK(p.hi == 1.0f);
    } else if (q.id == Quantity::norm) {  // bars from 0 to the largest norm plus its SE, 5% headroom
      CHECK(p.lo == 0.0f);
      CHECK(p.hi == float((3 + 0.5) * 1.05));
    } else if (starts_with(q.name, "gram_")) {
      CHECK(p.lo == -2.0f);
      CHECK(p.hi == 4.0f);
    } else {  // cosines: their diagonal of 1 is shown but does not set the range ("all cells" counts it)
      REQUIRE((q.id == Quantity::cosine || starts_with(q.name, "cos_")));
      CHECK(p.value[0] == 1.0);
      CHECK(p.lo == -0.1f);
      CHECK(p.hi == 0.6f);
      CHECK(build_panel(l, 3, q.id, Transform::raw, {false, RangeMode::all, false}).hi == 1.0f);
    }
  }
}

TEST_CASE("quantity registry: diagonal-normalized maps are symmetric about 0 on the diverging map") {
  const LayerStats l = known_layer();
  const PanelStyle all{true, RangeMode::all, true};
  for (const QuantityInfo& q : quantities()) {
    CAPTURE(q.name);
    const PanelData p = build_panel(l, 3, q.id, Transform::diagonal_normalized, all);
    if (q.id == Quantity::norm) {  // norms have no diagonals: the bars stay as they are
      CHECK_FALSE(diverging_map(q.id, Transform::diagonal_normalized));
      CHECK(range_rule(q.id, Transform::diagonal_normalized) == RangeRule::from_zero);
      CHECK(p.lo == 0.0f);
      continue;
    }
    CHECK(diverging_map(q.id, Transform::diagonal_normalized));
    CHECK(p.centred);
    CHECK(p.lo == -p.hi);
    // Each diagonal less its mean; the largest |value|: scores 0.625 (the first sub-diagonal -0.5, 0.75),
    // weights 0.25 (the main diagonal 1, 0.75, 0.5), cosines 0.2 (0.2, 0.6), Grams 1 (1, 3).
    const double expected = q.id == Quantity::score        ? 0.625
                            : q.id == Quantity::weight     ? 0.25
                            : starts_with(q.name, "gram_") ? 1.0
                                                           : 0.2;
    CHECK(p.hi == doctest::Approx(expected).epsilon(1e-6));
    // Within 2 SE (0.02) of 0: the cosines' main diagonal, all 1 before normalization, is greyed.
    if (q.id == Quantity::cosine || starts_with(q.name, "cos_")) CHECK(p.noise.at(0) == 1);
  }
}

TEST_CASE("quantity registry: hiding the diagonal keeps a masked map's row 0 and leaves it out of the range") {
  const LayerStats l = known_layer();
  const PanelStyle visible{true, RangeMode::visible, false};
  for (const QuantityInfo& q : quantities()) {
    if (q.is_vector()) continue;
    CAPTURE(q.name);
    const PanelData p = build_panel(l, 3, q.id, Transform::raw, visible);
    const bool masked = q.id == Quantity::score || q.id == Quantity::weight;
    CHECK(std::isfinite(p.value[0]) == masked);  // row 0's only key of a masked map stays
    CHECK(std::isnan(p.value[4]));
    CHECK(std::isnan(p.value[8]));
  }
  const PanelData s = build_panel(l, 3, Quantity::score, Transform::raw, visible);
  CHECK(s.lo == -0.5f);  // off the diagonal: -0.5, 0.25, 0.75
  CHECK(s.hi == 0.75f);
  CHECK(s.above);  // row 0's 2.0 is on screen, beyond the range
}

TEST_CASE("quantity registry: the rows' families, heads and layers") {
  Settings pf;
  Settings rw;
  rw.model = Model::random_weights;
  for (const QuantityInfo& q : quantities()) {
    CAPTURE(q.name);
    if (!q.is_stage()) {
      CHECK(family_has(pf, q.id));
      CHECK(settings_showing(pf, q.id) == pf);
      continue;
    }
    CHECK(settings_showing(rw, q.id).stage_grams);
    CHECK(stage_of(q.id) == *q.stage);
    CHECK(stage_quantity(*q.stage, q.unit_diagonal) == q.id);
  }
  for (Quantity q : {Quantity::score, Quantity::weight}) CHECK(quantity_info(q).per_head);
  for (Quantity q : {Quantity::cosine, Quantity::norm, Quantity::gram_query}) CHECK_FALSE(quantity_info(q).per_head);
  for (Quantity q : {Quantity::cosine, Quantity::norm}) CHECK(quantity_info(q).on_embeddings);
  for (Quantity q : {Quantity::score, Quantity::weight, Quantity::gram_input})
    CHECK_FALSE(quantity_info(q).on_embeddings);
  // The badges: RP for S and A, adjacency for cos, norm adjacency for ||x||, none for a stage.
  LayerStats l = known_layer();
  l.rp.mean = 0.7;
  l.adjacency.mean = 0.8;
  l.norm_adjacency.mean = 0.4;
  CHECK(std::string(panel_metric(l, Quantity::weight).name) == "RP");
  CHECK(panel_metric(l, Quantity::score).value == 0.7);
  CHECK(panel_metric(l, Quantity::cosine).value == 0.8);
  CHECK(panel_metric(l, Quantity::norm).value == 0.4);
  CHECK(std::isnan(panel_metric(l, Quantity::cos_mix).value));
}
