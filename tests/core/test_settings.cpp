// Settings validation names every bad setting with its range; names round-trip. The settings descriptor
// table (settings.hpp), which JSON, --set, the flags, Python and the window read: every row round-trips,
// refuses its range's neighbours by name, and lists its enum's names exactly.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>

#include "core/formats/result_json.hpp"
#include "core/model/settings.hpp"
#include "core/model/settings_text.hpp"

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
      case SettingValue::name:  // not a name, nor 0/1; but a token file's or checkpoint's name is any path
        if (f.key == std::string("tokens") || f.key == std::string("checkpoint"))
          CHECK_NOTHROW(setting_from_text(f.key, "0.5", s));
        else CHECK_THROWS(setting_from_text(f.key, "0.5", s));
        break;
      case SettingValue::real:
        CHECK_NOTHROW(setting_from_text(f.key, f.key == std::string("rope") ? "1.5" : "0.5", s));
        break;
    }
  }
  CHECK(setting_flag("init-std") == nullptr);  // keys, not flag names
}

namespace {

// A value of the row other than its default, as settings_to_json writes it.
nlohmann::json other_value(const SettingInfo& row) {
  const nlohmann::json d = settings_to_json(Settings{}).at(row.key);
  switch (row.kind) {
    case SettingKind::whole: return d.get<double>() == row.max ? std::int64_t(row.min) : std::int64_t(row.max);
    case SettingKind::real: return d.get<double>() == row.max ? row.min : row.max;
    case SettingKind::optional_real: return row.max;  // default: unset (null)
    case SettingKind::u64: return d.get<std::uint64_t>() + 7;
    case SettingKind::boolean: return !d.get<bool>();
    case SettingKind::enumeration: {
      const std::string now = d.get<std::string>();
      for (std::size_t i = 0; i < row.names.count; ++i)
        if (row.names.name_at(i) != now) return std::string(row.names.name_at(i));
      return nullptr;
    }
    case SettingKind::text: return "builtin:zuo-reversal";
    case SettingKind::mask: return "window:3";
  }
  return nullptr;
}

}  // namespace

TEST_CASE("the JSON of the default settings has exactly the table's keys, and setting_keys() is them") {
  const nlohmann::json j = settings_to_json(Settings{});
  std::set<std::string> table, json, keys(setting_keys().begin(), setting_keys().end());
  for (const SettingInfo& row : setting_table()) table.insert(row.key);
  for (auto it = j.begin(); it != j.end(); ++it) json.insert(it.key());
  CHECK(table.size() == setting_table().size());  // no key twice
  CHECK(json == table);
  CHECK(keys == table);
}

TEST_CASE("every row has its flag (the key with dashes), a help text and a lookup back to itself") {
  std::set<std::string> flags;
  for (const SettingInfo& row : setting_table()) {
    CAPTURE(row.key);
    std::string dashed = row.key;
    std::replace(dashed.begin(), dashed.end(), '_', '-');
    CHECK(std::string(row.flag) == dashed);
    CHECK(std::string(row.help).size() > 10);
    CHECK(setting_info(row.key) == &row);
    CHECK(setting_key_of(row.flag) == row.key);
    CHECK(setting_family(row.key) == row.family);
    CHECK(flags.insert(row.flag).second);
    if (row.kind == SettingKind::real || row.kind == SettingKind::whole || row.kind == SettingKind::optional_real)
      CHECK(row.min < row.max);
  }
  CHECK(setting_info("no_such_setting") == nullptr);
}

TEST_CASE("every row round-trips a non-default value through settings_from_json and settings_to_json") {
  for (const SettingInfo& row : setting_table()) {
    CAPTURE(row.key);
    const nlohmann::json v = other_value(row);
    Settings s;
    settings_from_json(nlohmann::json{{row.key, v}}, s, "");
    CHECK_FALSE(s == Settings{});  // the row writes its member
    const nlohmann::json j = settings_to_json(s);
    CHECK(j.at(row.key) == v);
    // Only this key changed in the JSON.
    nlohmann::json d = settings_to_json(Settings{});
    d[row.key] = v;
    CHECK(j == d);
    Settings back;
    settings_from_json(j, back);
    CHECK(back == s);
  }
}

TEST_CASE("every numeric row refuses the neighbours of its range, naming the key and the range") {
  for (const SettingInfo& row : setting_table()) {
    if (row.kind != SettingKind::real && row.kind != SettingKind::whole && row.kind != SettingKind::optional_real)
      continue;
    CAPTURE(row.key);
    for (const double bad : {row.min - 1, row.max + 1}) {
      Settings s;
      const nlohmann::json v = row.kind == SettingKind::whole ? nlohmann::json(std::int64_t(bad)) : nlohmann::json(bad);
      std::string message;
      try {
        settings_from_json(nlohmann::json{{row.key, v}}, s, "settings");
      } catch (const std::exception& e) { message = e.what(); }
      CAPTURE(message);
      CHECK(message.rfind(std::string("settings.") + row.key + ": ", 0) == 0);
      CHECK(message.find("out of range") != std::string::npos);
      CHECK(message.find("[") != std::string::npos);
      CHECK(s == Settings{});  // nothing applied
    }
    for (const double good : {row.min, row.max}) {  // the ends themselves are valid
      Settings s;
      const nlohmann::json v =
          row.kind == SettingKind::whole ? nlohmann::json(std::int64_t(good)) : nlohmann::json(good);
      CHECK_NOTHROW(settings_from_json(nlohmann::json{{row.key, v}}, s, ""));
    }
  }
  // The limits the table holds are Limits' own (one home for a range).
  CHECK(setting_info("n")->max == Limits::n_max);
  CHECK(setting_info("heads")->max == Limits::heads_max);
  CHECK(setting_info("init_mean")->min == -Limits::init_mean_max);
}

TEST_CASE("every enum row lists exactly its enum's name table, in order, and writes the value of each") {
  const auto check = [](const char* key, const auto& table) {
    CAPTURE(key);
    const SettingInfo* row = setting_info(key);
    REQUIRE(row != nullptr);
    CHECK(row->kind == SettingKind::enumeration);
    REQUIRE(row->names.count == table.size());
    for (std::size_t i = 0; i < table.size(); ++i) {
      CHECK(row->names.name_at(i) == table[i].name);
      Settings s;
      row->names.set_index(s, i);
      CHECK(row->names.index_of(s) == i);
      CHECK(settings_to_json(s).at(key) == std::string(table[i].name));
    }
  };
  check("model", kModelNames);
  check("norm", kNormNames);
  check("scale", kScaleNames);
  check("residual_mean", kResidualMeanNames);
  check("hidden", kHiddenStateNames);
  check("weights", kWeightsNames);
  check("pos_embedding", kPosEmbeddingNames);
  check("first_token", kFirstTokenNames);
  check("tokens_format", kTokensFormatNames);
  std::size_t enums = 0;
  for (const SettingInfo& row : setting_table()) enums += row.kind == SettingKind::enumeration;
  CHECK(enums == 9);  // every enum row checked above
}

TEST_CASE("text of a setting: numbers strictly, names as typed, and an unknown enum name lists the valid ones") {
  Settings s;
  CHECK_THROWS_WITH(setting_from_text("residual_mean", "half", s), "residual_mean: 'half'; valid: init_mean, zero");
  CHECK_THROWS_WITH(setting_from_text("mask", "window", s),
                    "mask: 'window'; valid: causal, bidirectional, window:W with W in [1, n]");
  CHECK_THROWS_WITH(setting_from_text("n", "0x10", s), doctest::Contains("not a decimal number"));
  setting_from_text("mlp", "false", s);
  CHECK_FALSE(s.mlp);
  setting_from_text("embed_std", "0.5", s);
  CHECK(s.embed_std == 0.5);
  settings_from_json(nlohmann::json{{"embed_std", nullptr}}, s);
  CHECK_FALSE(s.embed_std.has_value());
}

TEST_CASE("the sweep column: samples and threads are not axes, each with its reason") {
  for (const SettingInfo& row : setting_table()) {
    CAPTURE(row.key);
    const bool axis = row.not_swept == nullptr;
    CHECK(axis == (std::string(row.key) != "samples" && std::string(row.key) != "threads"));
    if (row.window_sweep) CHECK(axis);  // the window offers only what a sweep can vary
  }
}
