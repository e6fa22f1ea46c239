// docs/cli.md is held to the tool: every subcommand of `maskscope-cli --help`, and every flag and positional
// argument of each `<subcommand> --help`, must have a row in a table of the doc's section of that subcommand;
// a flag the doc's tables list must exist; and every row of the settings table has its row, with its default,
// in `run`'s tables.
#include <doctest/doctest.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_helpers.hpp"
#include "core/model/settings_text.hpp"

using namespace cli_test;

namespace {

// The entries of one block of CLI11's help ("Options:", "Subcommands:", "Positionals:"): the first word of
// each indented line up to the next blank line, e.g. "-h,--help", "--n", "run", "files".
std::vector<std::string> help_block(const std::string& help, const std::string& title) {
  std::vector<std::string> words;
  std::istringstream is(help);
  std::string line;
  bool in = false;
  while (std::getline(is, line)) {
    if (line == title) {
      in = true;
      continue;
    }
    if (!in) continue;
    if (line.empty() || line[0] != ' ') break;
    std::istringstream ls(line);
    std::string word;
    ls >> word;
    words.push_back(word);
  }
  return words;
}

// The long flags of a help text's Options block ("-h,--help" gives "--help").
std::vector<std::string> help_flags(const std::string& help) {
  std::vector<std::string> flags;
  for (const std::string& entry : help_block(help, "Options:")) {
    std::istringstream names(entry);
    std::string name;
    while (std::getline(names, name, ','))
      if (name.rfind("--", 0) == 0) flags.push_back(name);
  }
  return flags;
}

// The doc's section of a subcommand: from its heading "## `maskscope-cli SUB`" to the next "## " heading.
std::string doc_section(const std::string& doc, const std::string& sub) {
  const std::string heading = "## `maskscope-cli " + sub + "`";
  const std::size_t at = doc.find(heading + "\n");
  if (at == std::string::npos) return "";
  const std::size_t end = doc.find("\n## ", at + heading.size());
  return doc.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

// The names in the first column of the section's tables: "| `--n` |" gives --n, "| `--init-mean`, `--init-std` |"
// both, "| `files` |" files. A flag counts as documented when it has such a row (its meaning, default, range).
std::set<std::string> table_names(const std::string& section) {
  std::set<std::string> names;
  std::istringstream is(section);
  std::string line;
  while (std::getline(is, line)) {
    if (line.rfind("| `", 0) != 0) continue;
    const std::string cell = line.substr(0, line.find('|', 1));
    for (std::size_t at = cell.find('`'); at != std::string::npos; at = cell.find('`', at + 1)) {
      const std::size_t end = cell.find('`', at + 1);
      if (end == std::string::npos) break;
      names.insert(cell.substr(at + 1, end - at - 1));
      at = end;
    }
  }
  return names;
}

}  // namespace

TEST_CASE("docs/cli.md documents every subcommand, flag and argument that --help shows") {
  const std::string doc = slurp(MASKSCOPE_CLI_DOC);
  REQUIRE_MESSAGE(!doc.empty(), "cannot read " << MASKSCOPE_CLI_DOC);
  const Result top = cli("--help");
  REQUIRE(top.code == 0);
  const std::vector<std::string> subs = help_block(top.out, "Subcommands:");
  CHECK(subs.size() >= 6);  // run, analyze, merge, leakage, theory, bench
  // The tool's own flags (--help, --version) in the part before the first subcommand's section.
  const std::string intro = doc.substr(0, doc.find("\n## `maskscope-cli "));
  for (const std::string& flag : help_flags(top.out)) {
    INFO("maskscope-cli " << flag);
    CHECK(intro.find("`" + flag + "`") != std::string::npos);
  }
  int checked = 0;
  for (const std::string& sub : subs) {
    INFO("subcommand " << sub);
    const std::string section = doc_section(doc, sub);
    CHECK_MESSAGE(!section.empty(), "docs/cli.md has no section \"## `maskscope-cli " << sub << "`\"");
    const Result help = cli(sub + " --help");
    REQUIRE(help.code == 0);
    const std::vector<std::string> flags = help_flags(help.out);
    CHECK(flags.size() >= 2);
    const std::set<std::string> shown(flags.begin(), flags.end()), documented = table_names(section);
    for (const std::string& flag : flags) {
      if (flag == "--help") continue;  // every subcommand's; documented once, in the intro
      INFO("flag " << flag << " has no row \"| `" << flag << "` | ...\" in the section");
      CHECK(documented.count(flag) == 1);
      ++checked;
    }
    for (const std::string& arg : help_block(help.out, "Positionals:")) {
      INFO("argument " << arg << " has no row \"| `" << arg << "` | ...\" in the section");
      CHECK(documented.count(arg) == 1);
    }
    // And the other way: a flag the doc's tables list for this subcommand exists.
    for (const std::string& name : documented) {
      if (name.rfind("--", 0) != 0) continue;
      INFO("documented flag " << name << " is not in '" << sub << " --help'");
      CHECK(shown.count(name) == 1);
    }
    // Every subcommand has at least one example command.
    CHECK(section.find("maskscope-cli " + sub + " ") != std::string::npos);
  }
  CHECK(checked >= 40);  // run and leakage alone have 23 setting flags each
}

TEST_CASE("docs/cli.md's run table gives every setting of the settings table its flag and its default") {
  const std::string section = doc_section(slurp(MASKSCOPE_CLI_DOC), "run");
  REQUIRE(!section.empty());
  for (const maskscope::SettingInfo& row : maskscope::setting_table()) {
    const std::string flag = std::string("--") + row.flag, key = row.key;
    INFO("setting " << key << ": docs/cli.md's run section needs a row \"| `" << flag
                    << "` | meaning | default | range |\"");
    // The row whose first cell names the flag; a cell may name several ("`--init-mean`, `--init-std`"), and then
    // the default cell gives their defaults in the same order ("0, 0.02").
    std::istringstream lines(section);
    std::string line, shown;
    bool found = false;
    while (!found && std::getline(lines, line)) {
      if (line.rfind("| `", 0) != 0) continue;
      std::vector<std::string> cells;
      std::istringstream cs(line);
      for (std::string c; std::getline(cs, c, '|');) cells.push_back(c);
      if (cells.size() < 4) continue;
      std::vector<std::string> flags, defaults;
      std::istringstream fs(cells[1]), ds(cells[3]);
      for (std::string f; std::getline(fs, f, ',');)
        flags.push_back(f.substr(f.find('`') + 1, f.rfind('`') - f.find('`') - 1));
      for (std::string d; std::getline(ds, d, ',');) defaults.push_back(d);
      for (std::size_t k = 0; k < flags.size(); ++k)
        if (flags[k] == flag) {
          found = true;
          shown = flags.size() > 1 && defaults.size() == flags.size() ? defaults[k] : cells[3];
        }
    }
    REQUIRE(found);
    const std::string value = maskscope::default_text(key);
    INFO("default column '" << shown << "', the table's default '" << value << "'");
    if (value.empty()) continue;  // unset by default: the doc says what it follows
    if (maskscope::setting_value(row) == maskscope::SettingValue::name) {
      CHECK(shown.find(value) != std::string::npos);
    } else {  // the first number in the cell
      const std::size_t digit = shown.find_first_of("-0123456789");
      REQUIRE(digit != std::string::npos);
      CHECK(std::stod(shown.substr(digit)) == std::stod(value));
    }
  }
}
