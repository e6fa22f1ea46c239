// Links that open a view (view_link.hpp; the browser build's ?query): the query becomes the window's
// command line, and "Copy link" writes a query that reads back as the same settings and view.
#include <doctest/doctest.h>

#include <algorithm>

#include "core/model/settings_text.hpp"
#include "common/view_link.hpp"

using namespace maskscope;
using namespace maskscope::gui;

namespace {
// What the window's --set would make of a link's arguments (the settings half of app_options.cpp).
Settings apply_sets(const std::vector<std::string>& args) {
  Settings s;
  for (std::size_t k = 0; k + 1 < args.size(); k += 2)
    if (args[k] == "--set") {
      const auto eq = args[k + 1].find('=');
      setting_from_text(args[k + 1].substr(0, eq), args[k + 1].substr(eq + 1), s);
    }
  return s;
}
}  // namespace

TEST_CASE("a link's query is the window's command line: settings as --set, view names as their options") {
  std::vector<std::string> errors;
  const auto args =
      link_arguments(parse_query("?preset=behind-rope-fig4&tab=diagonal&alpha=0.5&d=16&json=1"), {"json"}, errors);
  CHECK(errors.empty());
  const std::vector<std::string> expected = {"--preset", "behind-rope-fig4", "--tab", "diagonal",
                                             "--set",    "alpha=0.5",        "--set", "d=16"};
  CHECK(args == expected);
  errors.clear();
  const auto present = link_arguments(parse_query("lesson=layernorm-recency&step=2&present=1"), {}, errors);
  CHECK(errors.empty());
  CHECK(std::find(present.begin(), present.end(), "--present") != present.end());
}

TEST_CASE("an unknown link name is refused, naming the valid ones; bad values are left to the option parser") {
  std::vector<std::string> errors;
  const auto args = link_arguments(parse_query("colour=red&alpha=7"), {}, errors);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].find("unknown name 'colour'") != std::string::npos);
  CHECK(errors[0].find("alpha") != std::string::npos);  // the settings are listed
  // alpha=7 goes on as --set alpha=7, which the window's parser refuses with the setting's range.
  CHECK(args == std::vector<std::string>{"--set", "alpha=7"});
}

TEST_CASE("a link names only shipped presets, lessons and token files: never a path") {
  std::vector<std::string> errors;
  const auto args = link_arguments(
      parse_query("preset=%2Fdev%2Furandom&lesson=/dev/zero&tokens=/etc/passwd&tab=%1b%5b31m"), {}, errors);
  REQUIRE(errors.size() == 3);
  CHECK(errors[0].find("preset '/dev/urandom' is not a shipped preset") != std::string::npos);
  CHECK(errors[0].find("behind-rope-fig4") != std::string::npos);  // the valid names are listed
  CHECK(errors[1].find("lesson '/dev/zero' is not a shipped lesson") != std::string::npos);
  CHECK(errors[2].find("tokens '/etc/passwd'") != std::string::npos);
  // Only the tab remains, its value passed on for the window's parser.
  CHECK(args == std::vector<std::string>{"--tab", "\x1b[31m"});
  errors.clear();
  CHECK(link_arguments(parse_query("tokens=builtin:zuo-addition"), {}, errors) ==
        std::vector<std::string>{"--set", "tokens=builtin:zuo-addition"});
  CHECK(errors.empty());
}

TEST_CASE("percent-decoding: escapes and '+' decoded, malformed escapes kept") {
  CHECK(percent_decode("a%3Db+c") == "a=b c");
  CHECK(percent_decode("100%") == "100%");
  CHECK(percent_decode("%zz") == "%zz");
  const LinkQuery q = parse_query("?x=1&&flag&y=%C3%A9");
  REQUIRE(q.size() == 3);
  CHECK(q[1] == std::pair<std::string, std::string>{"flag", ""});
  CHECK(q[2].second == "\xC3\xA9");
}

TEST_CASE("the view's query reads back as the same settings, with only what differs from the defaults") {
  Settings s;
  CHECK(view_query(s, ViewOptions{}) == "tab=attention");
  s.alpha = 0.3;
  s.d = 16;
  s.norm = Norm::none;
  s.rope_base = 10000;
  s.seed = 12345678901ULL;
  ViewOptions v;
  v.tab = Tab::diagonal;
  v.light_theme = true;
  const std::string q = view_query(s, v);
  CHECK(q.find("alpha=0.3") != std::string::npos);
  CHECK(q.find("tab=diagonal") != std::string::npos);
  CHECK(q.find("theme=light") != std::string::npos);
  CHECK(q.find("layers=") == std::string::npos);  // at its default
  std::vector<std::string> errors;
  const Settings back = apply_sets(link_arguments(parse_query(q), {}, errors));
  CHECK(errors.empty());
  CHECK(settings_to_json(back) == settings_to_json(s));
}
