// Settings validation names every bad setting with its range; names round-trip.
#include <doctest/doctest.h>

#include <algorithm>

#include "core/formats/result_json.hpp"
#include "core/model/settings.hpp"

using namespace maskscope;

namespace {
bool names(const std::vector<SettingError>& errors, const std::string& setting) {
  return std::any_of(errors.begin(), errors.end(), [&](const SettingError& e) { return e.setting == setting; });
}
}  // namespace

TEST_CASE("defaults are valid and reproduce the LN-recency setting") {
  Settings s;
  CHECK(validate(s).empty());
  CHECK(s.norm == Norm::layernorm);
  CHECK(s.scale == Scale::sqrt_d);
  CHECK(s.mask == MaskKind::causal);
  CHECK_FALSE(s.rope());
}

TEST_CASE("every out-of-range setting is reported by name, all at once") {
  Settings s;
  s.n = 0;
  s.d = 0;
  s.layers = 49;
  s.alpha = 1.5;
  s.gamma = -0.1;
  s.samples = 0;
  s.threads = -1;
  const auto errors = validate(s);
  for (const char* name : {"n", "d", "layers", "alpha", "gamma", "samples", "threads"}) {
    INFO(name);
    CHECK(names(errors, name));
  }
  CHECK(errors.size() == 7);
  for (const auto& e : errors) CHECK(e.message.find('[') != std::string::npos);  // states the range
}

TEST_CASE("RoPE needs an even d, and a base of 0 or at least 1") {
  Settings s;
  s.rope_base = 10000;
  s.d = 15;
  auto errors = validate(s);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].setting == "rope");
  CHECK(errors[0].message.find("even") != std::string::npos);
  s.d = 16;
  CHECK(validate(s).empty());
  s.rope_base = 0.5;
  CHECK(names(validate(s), "rope"));
}

TEST_CASE("NaN and window widths are rejected") {
  Settings s;
  s.alpha = std::nan("");
  CHECK(names(validate(s), "alpha"));
  s = Settings{};
  s.mask = MaskKind::window;
  s.window = 0;
  CHECK(names(validate(s), "mask"));
  s.window = s.n + 1;
  CHECK(names(validate(s), "mask"));
  s.window = s.n;
  CHECK(validate(s).empty());
}

TEST_CASE("mask, norm and scale names parse back to themselves") {
  Settings s;
  CHECK(parse_mask("window:3", s));
  CHECK(s.mask == MaskKind::window);
  CHECK(s.window == 3);
  CHECK(mask_to_string(s) == "window:3");
  CHECK_FALSE(parse_mask("window:", s));
  CHECK_FALSE(parse_mask("window:3x", s));
  CHECK_FALSE(parse_mask("causl", s));
  for (Norm v : {Norm::none, Norm::l2, Norm::layernorm, Norm::rmsnorm}) CHECK(parse_norm(to_string(v)) == v);
  for (Scale v : {Scale::one, Scale::sqrt_d, Scale::d}) CHECK(parse_scale(to_string(v)) == v);
  CHECK_FALSE(parse_norm("LayerNorm").has_value());
}

TEST_CASE("settings survive a JSON round trip; bad JSON leaves them untouched") {
  Settings s;
  s.n = 33;
  s.alpha = 0.25;
  s.norm = Norm::rmsnorm;
  s.mask = MaskKind::window;
  s.window = 5;
  s.rope_base = 500;
  s.unit_input = true;
  s.seed = 99;
  Settings back;
  settings_from_json(settings_to_json(s), back);
  CHECK(back == s);

  Settings before = back;
  CHECK_THROWS(settings_from_json(nlohmann::json{{"n", "ten"}}, back));
  CHECK_THROWS(settings_from_json(nlohmann::json{{"norm", "batchnorm"}}, back));
  CHECK(back == before);
}

TEST_CASE("threads do not count as a different simulation") {
  Settings a, b;
  b.threads = 7;
  CHECK(a.same_simulation(b));
  b.seed = 2;
  CHECK_FALSE(a.same_simulation(b));
}

TEST_CASE("each setting flag's value kind is what its text conversion takes") {
  for (const SettingFlag& f : setting_flags()) {
    CAPTURE(f.key);
    REQUIRE(setting_flag(f.key) == &f);
    Settings s;
    s.n = Limits::n_max;  // so that mask window:W with a small W is in range
    switch (setting_value(f)) {
      case SettingValue::whole: CHECK_THROWS(setting_from_text(f.key, "1.5", s)); break;  // not whole
      case SettingValue::name:  // not a name, nor 0/1; but a token file's name is any path (validate() reads it)
        if (f.key == std::string("tokens")) CHECK_NOTHROW(setting_from_text(f.key, "0.5", s));
        else CHECK_THROWS(setting_from_text(f.key, "0.5", s));
        break;
      case SettingValue::real:
        CHECK_NOTHROW(setting_from_text(f.key, f.key == std::string("rope") ? "1.5" : "0.5", s));
        break;
    }
  }
  CHECK(setting_flag("init-std") == nullptr);  // keys, not flag names
}
