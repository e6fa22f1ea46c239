// The stage Gram matrices in the window's model and the figures (docs/window.md): the show names, the
// stages each family offers, a figure row showing a stage runs with stage_grams on and exports the
// snapshot's cells, and a stage the row's model lacks is refused.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "figure_helpers.hpp"
#include "common/figure/figure.hpp"
#include "common/figure/figure_render.hpp"
#include "core/model/settings_text.hpp"
#include "common/panels.hpp"

using namespace maskscope;
using namespace maskscope::gui;
using namespace maskscope::test;

TEST_CASE("stage quantities: names, stages and the families that have them") {
  CHECK(parse_quantity("gram_normalized", "show") == Quantity::gram_normalized);
  CHECK(parse_quantity("cos_mlp", "show") == Quantity::cos_mlp);
  CHECK(stage_of(Quantity::cos_query) == Stage::query);
  CHECK(stage_of(Quantity::gram_residual) == Stage::residual);
  CHECK(quantity_info(Quantity::cos_input).unit_diagonal);  // a stage's cosines
  CHECK_FALSE(quantity_info(Quantity::gram_input).unit_diagonal);
  CHECK(is_stage(Quantity::gram_mlp));
  CHECK_FALSE(is_stage(Quantity::norm));
  CHECK(quantity_label(Quantity::gram_query, false) == "Gram: queries/keys Rope(Norm(x))");
  CHECK(quantity_label(Quantity::cos_query, true) == "cos: queries q");
  CHECK(stage_quantity(Stage::mix, true) == Quantity::cos_mix);
  Settings pf = tiny();
  CHECK(family_has(pf, Quantity::gram_query));
  CHECK_FALSE(family_has(pf, Quantity::gram_key));  // Q = K: one stage
  CHECK_FALSE(family_has(pf, Quantity::cos_attention));
  CHECK(settings_showing(pf, Quantity::gram_mix).stage_grams);
  CHECK_FALSE(settings_showing(pf, Quantity::score).stage_grams);
  Settings rw = random_network();
  CHECK(family_has(rw, Quantity::gram_key));
  rw.mlp = false;
  CHECK_FALSE(family_has(rw, Quantity::gram_mlp));
}

TEST_CASE("a figure row showing a stage runs with stage_grams and exports its cells") {
  Preset p;
  p.name = "stage-test";
  p.settings = tiny();
  FigureSpec f;
  f.title = "stages";
  f.layers = {1, 2};
  f.hide_diagonal = false;
  f.rows = {FigureRow{"Norm(x)", tiny(), Quantity::gram_normalized, Transform::raw},
            FigureRow{"A Y", tiny(), Quantity::cos_mix, Transform::raw}};
  p.figure = f;
  CHECK(validate(f).empty());
  CHECK(cell_settings(f, 0, 0).stage_grams);
  Reference ref;
  const FigureData data = build_figure(f, std::ref(ref));
  const fs::path dir = scratch("stage-export");
  const ExportResult res = export_figure(data, p, dir.string(), {1.0, 0});
  REQUIRE_MESSAGE(res.ok, res.error);
  const auto meta = nlohmann::json::parse(read_text(dir / "figure.json"));
  REQUIRE(meta["panels"].size() == 4);
  int checked = 0;
  for (const auto& panel : meta["panels"]) {
    Settings s = p.settings;
    settings_from_json(panel["settings"], s);
    CHECK(s.stage_grams);
    const auto snap = ref(s);
    const int layer = panel["layer"];
    const int row = panel["row"];
    const StageGram& g =
        snap->layers[std::size_t(layer - 1)].stages[std::size_t(row == 0 ? Stage::normalized : Stage::mix)];
    const Map& expect = row == 0 ? g.gram_mean : g.cosine_mean;
    const auto csv = parse_csv(read_text(dir / panel["file"].get<std::string>()));
    REQUIRE(csv.size() == expect.size());
    for (std::size_t e = 0; e < csv.size(); ++e) CHECK(csv[e] == expect[e]);
    ++checked;
  }
  CHECK(checked == 4);
  // A stage the row's model lacks is refused, naming the row.
  f.rows[1].quantity = Quantity::gram_key;
  const auto errors = validate(f);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].setting == "figure.rows[1].show");
}

TEST_CASE("the Attention tab's panels of a stage: the run's stage map, its diagonal hidden when asked") {
  Settings s = tiny();
  s.stage_grams = true;
  s.samples = 200;
  const auto snap = run_to_completion(s);
  ViewOptions v;
  v.quantity = Quantity::gram_input;
  v.hide_diagonal = true;
  const auto panels = build_panels(*snap, v);
  REQUIRE(panels.size() == std::size_t(s.layers));  // no embeddings in the parameter-free model
  const Map& m = snap->layers[0].stages[std::size_t(Stage::input)].gram_mean;
  for (int i = 0; i < s.n; ++i)
    for (int j = 0; j < s.n; ++j) {
      const double shown = panels[0].value[std::size_t(i * s.n + j)];
      if (i == j) CHECK(std::isnan(shown));
      else CHECK(shown == m(i, j));
    }
  CHECK(std::string(symbol(Quantity::gram_input)) == "<s_i,s_j> input");
}
