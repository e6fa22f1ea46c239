// maskscope-cli theory: the closed forms it prints, and its defaults and ranges, which are run's (Settings{}).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>

#include "cli_test_helpers.hpp"
#include "core/model/settings.hpp"
#include "core/model/theory.hpp"

using namespace cli_test;

TEST_CASE("theory prints the closed forms") {
  Result r = cli("theory --kind h_of_j --n 10 --d 64 --alpha 0.4 --gamma 1");
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["h"].size() == 10);
  CHECK(j["h"][4].get<double>() == doctest::Approx(maskscope::theory::ln_recency_h_of_j(5, 64, 0.4, 1.0)));
  r = cli("theory --kind behind_rope_layer2 --n 5 --alpha 0.2 --gamma 1");
  REQUIRE(r.code == 0);
  j = nlohmann::json::parse(r.out);
  CHECK(j["layer2_score"][4][1].get<double>() ==
        doctest::Approx(maskscope::theory::behind_rope_layer2_score(5, 2, 0.2, 1.0)));
  CHECK(j["layer2_score"][1][4].is_null());
  r = cli("theory --kind ln_recency_s2 --n 4 --d 16");
  REQUIRE(r.code == 0);
  j = nlohmann::json::parse(r.out);
  CHECK(j["layer2_score"][3][3].get<double>() == doctest::Approx(4.0));
}

TEST_CASE("theory's defaults are run's (Settings{}): alpha 0.5, n 10, d 64, gamma 0") {
  const maskscope::Settings s;
  const Result r = cli("theory --kind h_of_j");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["alpha"] == s.alpha);
  CHECK(j["alpha"] == 0.5);  // the one intended change: theory's alpha defaulted to 0 up to version 0.3.0
  CHECK(j["n"] == s.n);
  CHECK(j["d"] == s.d);
  CHECK(j["gamma"] == s.gamma);
  REQUIRE(j["h"].size() == std::size_t(s.n));
  CHECK(j["h"][2].get<double>() == doctest::Approx(maskscope::theory::ln_recency_h_of_j(3, s.d, s.alpha, s.gamma)));
  // Given explicitly, the same numbers as the defaults.
  CHECK(nlohmann::json::parse(cli("theory --kind h_of_j --n 10 --d 64 --alpha 0.5 --gamma 0").out) == j);
  // The help shows run's defaults.
  const Result help = cli("theory --help");
  CHECK(help.out.find("--alpha TEXT=0.5") != std::string::npos);
  CHECK(help.out.find("--n TEXT=10") != std::string::npos);
}

TEST_CASE("theory refuses what run refuses, with run's messages and ranges; exit 2") {
  const char* cases[][2] = {
      {"--n 0", "--n: 0 is out of range; valid: whole number in [1, 512]"},
      {"--n 513", "--n: 513 is out of range; valid: whole number in [1, 512]"},
      {"--d 70000", "--d: 70000 is out of range; valid: whole number in [1, 65536]"},
      {"--alpha 2", "--alpha: 2 is out of range; valid: number in [0, 1]"},
      {"--gamma -0.5", "--gamma: -0.5 is out of range; valid: number in [0, 1]"},
      {"--alpha ''", "--alpha: empty value"},
      {"--n 0x10", "--n: '0x10' is not a decimal number"},
  };
  for (const auto& c : cases) {
    INFO(c[0]);
    const Result t = cli(std::string("theory --kind h_of_j ") + c[0]);
    CHECK(t.code == 2);
    CHECK(t.err.find(c[1]) != std::string::npos);
    // run gives the same message for the same flag.
    const Result r = cli(std::string("run --samples 10 --quiet ") + c[0]);
    CHECK(r.code == 2);
    CHECK(r.err.find(c[1]) != std::string::npos);
  }
}
