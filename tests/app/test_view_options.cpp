// The view options' JSON (presets' and lessons' "view"), the tab names and the axes' tick positions.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "common/tabs.hpp"
#include "common/ticks.hpp"
#include "common/view_options.hpp"

using namespace maskscope;
using namespace maskscope::gui;

TEST_CASE("view options: the defaults' JSON as presets spell it") {
  CHECK(view_to_json(ViewOptions{}).dump() ==
        R"({"colormap":"rocket","diverging":"rdbu","grey_noise":true,"head":-1,"hide_diagonal":true,)"
        R"("range":"robust","shared_range":false,"show":"score","tab":"attention","theme":"dark"})");
}

TEST_CASE("view options: every tab, quantity and option survives JSON and back") {
  int checked = 0;
  for (const auto& [tab, tab_name] : kTabNames)
    for (const auto& [q, q_name] : kQuantityNames) {
      ViewOptions v;
      v.tab = tab;
      v.quantity = q;
      const nlohmann::json j = view_to_json(v);
      CHECK(j.at("tab") == tab_name);
      CHECK(j.at("show") == q_name);
      ViewOptions back;
      view_from_json(j, back);
      CHECK(back == v);
      ++checked;
    }
  CHECK(checked == 10 * int(kQuantityCount));
  ViewOptions v;
  v.sequential = ColormapId::magma;
  v.diverging = ColormapId::coolwarm;
  v.hide_diagonal = false;
  v.range = RangeMode::visible;
  v.grey_noise = false;
  v.shared_range = true;
  v.light_theme = true;
  v.head = 3;
  ViewOptions back;
  view_from_json(nlohmann::json::parse(view_to_json(v).dump()), back);
  CHECK(back == v);
  CHECK_FALSE(back == ViewOptions{});
}

TEST_CASE("view options: only the keys present change; a bad value names its key and changes nothing") {
  ViewOptions v;
  view_from_json(nlohmann::json::parse(R"({"show": "cos_mix", "tab": "hofj"})"), v);
  CHECK(v.quantity == Quantity::cos_mix);
  CHECK(v.tab == Tab::h_of_j);
  CHECK(v.range == RangeMode::robust);
  const ViewOptions before = v;
  auto refused = [&](const char* text) {
    ViewOptions w = v;
    CHECK_THROWS(view_from_json(nlohmann::json::parse(text), w));
    CHECK(w == before);
  };
  CHECK_THROWS_WITH(view_from_json(nlohmann::json::parse(R"({"show": "scores"})"), v),
                    doctest::Contains("view.show: 'scores'; valid: score, weight"));
  CHECK_THROWS_WITH(view_from_json(nlohmann::json::parse(R"({"tab": "diag"})"), v),
                    "view.tab: 'diag'; valid: attention, diagonal, hofj, metrics, figure, leakage, sweep, probes, "
                    "histograms, training");
  CHECK_THROWS_WITH(view_from_json(nlohmann::json::parse(R"({"range": "some"})"), v),
                    "view.range: 'some'; valid: all, visible, robust");
  CHECK_THROWS_WITH(view_from_json(nlohmann::json::parse(R"({"colormap": "rdbu"})"), v),
                    "view.colormap: valid: rocket, viridis, magma");
  CHECK_THROWS_WITH(view_from_json(nlohmann::json::parse(R"({"shows": "score"})"), v),
                    doctest::Contains("view: unknown key 'shows'"));
  refused(R"({"tab": "metrics", "head": 99})");  // nothing of a refused view is kept, its good keys neither
  refused(R"({"theme": "grey"})");
  refused(R"({"hide_diagonal": 1})");
  refused(R"(["score"])");
  CHECK(v == before);
}

TEST_CASE("tab names read back; a bad one names the valid ones") {
  for (const auto& [tab, name] : kTabNames) CHECK(parse_tab(std::string(name), "--tab") == tab);
  CHECK_THROWS_WITH(parse_tab("Attention", "--tab"), doctest::Contains("--tab: 'Attention'; valid: attention"));
  CHECK(transform_of(Tab::diagonal) == Transform::diagonal_normalized);
  CHECK(transform_of(Tab::attention) == Transform::raw);
}

TEST_CASE("nice_ticks: steps of 1, 2 or 5 x 10^k covering the range, 0 exactly, none for an empty range") {
  const std::vector<double> unit = nice_ticks(0, 1, 5);
  REQUIRE(unit.size() == 6);
  for (std::size_t k = 0; k < unit.size(); ++k) CHECK(unit[k] == doctest::Approx(0.2 * double(k)));
  const std::vector<double> centred = nice_ticks(-0.3, 0.3, 4);  // a step of 0.15 rounds up to 0.2
  REQUIRE(centred.size() == 3);
  CHECK(centred[0] == doctest::Approx(-0.2));
  CHECK(centred[1] == 0.0);
  CHECK(centred[2] == doctest::Approx(0.2));
  CHECK(nice_ticks(0, 2500, 3) == std::vector<double>{0, 1000, 2000});
  CHECK(nice_ticks(1, 1, 5).empty());
  CHECK(nice_ticks(0, std::nan(""), 5).empty());
}
