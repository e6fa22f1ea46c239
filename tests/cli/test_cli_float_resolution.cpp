// Values at float resolution in the JSON (docs/model.md section 4.1, issue 48): issue 48's two repros give
// exact values or null with the reason (KEY_note), a ratio to an insignificant denominator is null with its
// note, and an ordinary run carries no note at all.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "cli_test_helpers.hpp"

using namespace cli_test;

namespace {

// Every "KEY_note" in a JSON value, at any depth (object keys ending in "_note", and "note").
int float_notes_in(const nlohmann::json& v) {
  int count = 0;
  if (v.is_array())
    for (const auto& x : v) count += float_notes_in(x);
  if (v.is_object())
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string& k = it.key();
      if (k == "note" || (k.size() > 5 && k.compare(k.size() - 5, 5, "_note") == 0)) ++count;
      count += float_notes_in(it.value());
    }
  return count;
}

}  // namespace

TEST_CASE("run --alpha 1: RP and adjacency exactly 0.5 with SE 0, dR^2 null with its reason (issue 48's repro)") {
  REQUIRE(cli("run --alpha 1 --samples 2000 --threads 2 --quiet --out " + work("fr_alpha1.json")).code == 0);
  const nlohmann::json r = read_json(work("fr_alpha1.json"));
  for (const auto& l : r.at("layers")) {
    CAPTURE(l.at("layer").get<int>());
    CHECK(l.at("rp").get<double>() == 0.5);  // was 0.4930 +- 0.00012 at layer 2
    CHECK(l.at("rp_se").get<double>() == 0.0);
    CHECK(l.at("rp_ties").get<double>() == 1.0);  // every comparison a tie
    CHECK(l.at("adjacency").get<double>() == 0.5);
    CHECK(l.at("delta_r2").is_null());  // was 0.027 +- 0.0013 at layer 2
    CHECK(l.at("delta_r2_se").is_null());
    CHECK(l.at("delta_r2_note").get<std::string>().find("constant up to float resolution") != std::string::npos);
    CHECK(l.at("weight_delta_r2_se").get<double>() == 0.0);  // A_ij = 1 / (i + 1): exact structure
  }
}

TEST_CASE("run at d 2, alpha 1, scale 1/d, n 21, 24 layers, bidirectional: no SE above 1 (it was 7.7e7)") {
  REQUIRE(cli("run --d 2 --alpha 1 --scale d --n 21 --layers 24 --mask bidirectional --samples 300 --threads 2 "
              "--quiet --out " +
              work("fr_d2.json"))
              .code == 0);
  const nlohmann::json r = read_json(work("fr_d2.json"));
  for (const auto& l : r.at("layers")) {
    CAPTURE(l.at("layer").get<int>());
    for (const char* k : {"rp", "adjacency", "delta_r2", "weight_delta_r2", "sink_weight"}) {
      CAPTURE(k);
      const auto& v = l.at(k);
      const auto& se = l.at(std::string(k) + "_se");
      if (v.is_null()) {
        CHECK(se.is_null());
        CHECK(l.contains(std::string(k) + "_note"));  // a null says why
        continue;
      }
      CHECK(se.get<double>() <= 1.0);
      CHECK(se.get<double>() == 0.0);  // every sample the same up to float resolution
    }
    if (!l.at("delta_r2").is_null()) CHECK(l.at("delta_r2").get<double>() == 0.0);
  }
}

TEST_CASE("leakage: a ratio whose denominator is not significant is null with the reason") {
  // At alpha 1 the causal baseline's dR^2 is null (its logits are constant up to float resolution): r_l,
  // the ablations' ratios and the mask share have nothing to divide by.
  REQUIRE(cli("leakage --alpha 1 --samples 300 --threads 2 --quiet --out " + work("fr_leakage.json")).code == 0);
  const nlohmann::json r = read_json(work("fr_leakage.json"));
  for (const auto& l : r.at("layers")) {
    const auto& share = l.at("residual_stream_share");
    CHECK(share.at("value").is_null());
    CHECK(share.at("se").is_null());
    CHECK(share.at("note").get<std::string>().find("denominator is not significantly above 0") != std::string::npos);
    CHECK(l.at("bidirectional_ratio").at("value").is_null());
    CHECK(l.at("bidirectional_ratio").at("note").is_string());
  }
}

TEST_CASE("an ordinary run carries no note: its values are not at float resolution") {
  REQUIRE(cli("run --samples 500 --threads 2 --quiet --out " + work("fr_default.json")).code == 0);
  CHECK(float_notes_in(read_json(work("fr_default.json")).at("layers")) == 0);
  REQUIRE(cli("run --model random_weights --d 32 --heads 2 --layers 2 --histograms 8 --samples 100 --threads 2 "
              "--quiet --out " +
              work("fr_rw.json"))
              .code == 0);
  const nlohmann::json rw = read_json(work("fr_rw.json"));
  CHECK(float_notes_in(rw.at("layers")) == 0);
  CHECK(float_notes_in(rw.at("embeddings")) == 0);
}
