// Python keywords to Settings (settings_args.hpp), with the CLI's checks and messages (app/cli/cli_common.cpp).
#include "settings_args.hpp"

#include <pybind11/pybind11.h>

#include <algorithm>
#include <exception>
#include <optional>

#include "core/kernel/network/random_weights.hpp"
#include "core/model/checkpoint_config.hpp"
#include "core/model/settings_text.hpp"
#include "core/run/resources.hpp"

namespace maskscope::py_module {

namespace py = pybind11;

void Problems::raise_if_any() const {
  if (lines.empty()) return;
  std::string text;
  for (const std::string& l : lines) text += (text.empty() ? "" : "\n") + l;
  throw py::value_error(text);
}

void apply_setting_texts(const SettingTexts& given, Settings& s, Problems& problems, bool* gamma_given) {
  for (const auto& [name, text] : given) {
    const std::string key = setting_key_of(name);
    if (gamma_given && key == "gamma") *gamma_given = true;
    try {
      setting_from_text(key, text, s);  // throws "key: what is wrong; valid: ..." as for the CLI's flag
    } catch (const std::exception& e) { problems.lines.push_back(e.what()); }
  }
}

Settings checked_settings(const SettingTexts& given, Problems& problems, bool& gamma_given) {
  Settings s;
  gamma_given = false;
  apply_setting_texts(given, s, problems, &gamma_given);
  // A checkpoint's config.json sets the model settings; a keyword that contradicts it is refused (the CLI's rule).
  const bool from_checkpoint = s.from_checkpoint();
  const std::size_t before_checkpoint = problems.lines.size();
  for (const SettingError& e : apply_checkpoint_settings(s, [&](std::string_view key) {
         for (const auto& [name, text] : given)
           if (setting_key_of(name) == key) return true;
         return false;
       }))
    problems.add(e.setting, e.message);
  // A setting of the other family would be silently ignored: refused, with the CLI's words.
  for (const auto& [name, text] : given) {
    const std::string key = setting_key_of(name);
    const std::optional<Model> family = setting_family(key);
    if (family && *family != s.model)
      problems.add(key, "applies to --model " + std::string(to_string(*family)) + " only (this run is --model " +
                            std::string(to_string(s.model)) + ")");
  }
  apply_family_default_gamma(s, false, gamma_given || from_checkpoint);
  for (const SettingError& e : validate(s)) {
    const std::string line = e.setting + ": " + e.message;  // a checkpoint's error is not named twice
    if (std::find(problems.lines.begin() + std::ptrdiff_t(before_checkpoint), problems.lines.end(), line) ==
        problems.lines.end())
      problems.add(e.setting, e.message);
  }
  // The checkpoint's tensors are read now (the CLI's rule), so that a corrupt file is a ValueError naming the tensor;
  // not when even one thread's run would not fit (fit_threads_to_memory refuses it without reading them).
  const std::uint64_t available = available_memory_bytes();
  if (from_checkpoint && problems.empty() && (available == 0 || estimate_cost(s, 1).memory_bytes <= available / 10 * 8))
    try {
      checkpoint_network(s);
    } catch (const std::exception& e) { problems.add("checkpoint", e.what()); }
  return s;
}

Settings run_settings(const SettingTexts& given) {
  Problems problems;
  bool gamma_given = false;
  const Settings s = checked_settings(given, problems, gamma_given);
  problems.raise_if_any();
  return s;
}

void fit_threads_to_memory(Settings& s) {
  const std::uint64_t available = available_memory_bytes();
  if (available == 0) return;
  int threads = resolved_threads(s);
  while (threads > 1 && estimate_cost(s, threads).memory_bytes > available * 8 / 10) --threads;
  const RunCost cost = estimate_cost(s, threads);
  if (cost.memory_bytes > available * 8 / 10) {
    const bool net = network_bytes(s) > 0;
    throw py::value_error("n: n = " + std::to_string(s.n) + ", layers = " + std::to_string(s.layers) +
                          (net ? ", d = " + std::to_string(s.d) + ", vocab = " + std::to_string(s.vocab) : "") +
                          " needs about " + bytes_text(cost.memory_bytes) + " even with 1 thread; this machine has " +
                          bytes_text(available) + " available. Lower " + (net ? "d, vocab, " : "") + "n or layers.");
  }
  if (threads < resolved_threads(s)) s.threads = threads;  // the same numbers with any thread count
}

}  // namespace maskscope::py_module
