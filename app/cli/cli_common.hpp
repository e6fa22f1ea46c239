// What maskscope-cli's subcommands share: the setting flags of `run` and `leakage` (from the one table,
// settings_text.hpp), the strict conversion of a flag's text, error reports (exit 2), output and progress.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "core/model/settings.hpp"

namespace maskscope::cli {

// Invalid input: a message naming each bad flag and its valid range on stderr, exit code 2.
constexpr int kExitInvalid = 2;

constexpr std::int64_t kSaveTensorsMax = 10000;

// The flags of `run` and `leakage`: the settings, and where and how to write the result.
struct RunFlags {
  Settings s;
  std::map<std::string, std::string> text;  // flag -> value as typed (only the flags given)
  std::string out;
  bool quiet = false;
  std::string save_tensors;  // --save-tensors DIR
  std::string shard_text;    // --shard K/N as typed
  std::int64_t shard_k = 1, shard_n = 1;
};

// --shard's "K/N": strictly two decimal integers into k and n; "" or why not (the ranges are the caller's).
std::string parse_shard_text(const std::string& text, std::int64_t& k, std::int64_t& n);

bool ends_with(const std::string& text, const std::string& suffix);
// True when --out names a partial-sums file (.msum) rather than a JSON result.
bool sums_output(const RunFlags& f);

// Every setting flag of setting_flags() (settings_text.hpp), read as text, with its default in the help.
void add_setting_flags(CLI::App& cmd, RunFlags& f);

// Runs `assign` (a strict conversion of one flag's text); a failure becomes that flag's error,
// without the setting's name (`key`, the flag's by default) repeated at the front of the message.
template <class Assign>
void convert_flag(std::vector<SettingError>& errors, const char* flag, Assign&& assign, const char* key = nullptr) {
  try {
    assign();
  } catch (const std::exception& e) {
    const std::string m = e.what(), prefix = std::string(key ? key : flag) + ": ";
    errors.push_back({flag, m.rfind(prefix, 0) == 0 ? m.substr(prefix.size()) : m});
  }
}

// Converts every given flag; returns every problem, each naming its flag and the valid range.
std::vector<SettingError> finish_settings(RunFlags& f, const CLI::App& cmd);

// The result to `out` (through a temporary file and a rename) or, when `out` is empty, to standard
// output; the exit code.
int emit(const std::string& out, const std::string& text);

// "maskscope-cli: invalid settings" and one line per error ("  --flag: message") on stderr; exit code 2.
int report_invalid(const std::vector<SettingError>& errors);

// Seconds as "12.3s" or "4m05s" for the progress line; "--" when unknown.
std::string format_eta(double seconds);

}  // namespace maskscope::cli
