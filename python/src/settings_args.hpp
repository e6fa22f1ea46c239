// Python keywords to Settings, the CLI's way: each setting's text through setting_from_text (the one strict
// conversion), then the checks `maskscope-cli run` makes after its flags (the other family's settings, the
// random-weight family's default gamma, validate(), memory), so that every message is the CLI's.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/model/settings.hpp"

namespace maskscope::py_module {

// Settings given as (key or flag name, text); maskscope/_settings.py turns Python values into the CLI's text.
using SettingTexts = std::vector<std::pair<std::string, std::string>>;

// "key: message", one per problem; empty when there is none.
struct Problems {
  std::vector<std::string> lines;
  void add(const std::string& key, const std::string& message) { lines.push_back(key + ": " + message); }
  bool empty() const { return lines.empty(); }
  // Throws pybind11::value_error with every line (one a line) when there are any.
  void raise_if_any() const;
};

// Reads `given` over the defaults into `s`; each problem (its key and the CLI's message) into `problems`.
// `gamma_given` tells whether gamma was among them. Unknown keys are the caller's (TypeError in Python).
void apply_setting_texts(const SettingTexts& given, Settings& s, Problems& problems, bool* gamma_given = nullptr);

// The settings of `run`: apply_setting_texts, the other family's settings refused, the family's default gamma,
// validate(), every problem into `problems` (the CLI's finish_settings).
Settings checked_settings(const SettingTexts& given, Problems& problems, bool& gamma_given);
// The same, throwing pybind11::value_error naming every problem.
Settings run_settings(const SettingTexts& given);

// Like the CLI: fewer threads when the memory would not hold them all, or a ValueError when not even one fits.
void fit_threads_to_memory(Settings& s);

}  // namespace maskscope::py_module
