// What maskscope-cli's subcommands share (cli_common.hpp): setting flags, their conversion and checks,
// error reports and output.
#include "cli_common.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "core/formats/atomic_file.hpp"
#include "core/formats/tensor_analysis.hpp"
#include "core/kernel/network/random_weights.hpp"
#include "core/model/checkpoint_config.hpp"
#include "core/run/partial_sums.hpp"
#include "core/run/resources.hpp"
#include "core/stats/sample_grid.hpp"
#include "core/model/settings_text.hpp"

namespace maskscope::cli {

namespace {

// --shard K/N of a run: the ranges are checked against the run's grid.
std::string parse_shard(RunFlags& f) {
  if (std::string why = parse_shard_text(f.shard_text, f.shard_k, f.shard_n); !why.empty()) return why;
  if (std::string why = shard_error(sample_grid(f.s), f.shard_k, f.shard_n); !why.empty()) return why;
  if (!sums_output(f))
    return "a shard is part of a run: write it with --out FILE" + std::string(kPartialSumsExtension) +
           " and merge the parts with 'maskscope-cli merge'";
  return "";
}

}  // namespace

std::string parse_shard_text(const std::string& t, std::int64_t& k, std::int64_t& n) {
  const auto slash = t.find('/');
  auto whole = [](const std::string& x, std::int64_t& v) {
    if (x.empty() || x.size() > 15 || x.find_first_not_of("0123456789") != std::string::npos) return false;
    v = std::stoll(x);
    return true;
  };
  if (slash == std::string::npos || !whole(t.substr(0, slash), k) || !whole(t.substr(slash + 1), n))
    return "'" + t + "' is not K/N (shard K of N, 1 <= K <= N, e.g. 2/8)";
  return "";
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}
bool sums_output(const RunFlags& f) { return ends_with(f.out, kPartialSumsExtension); }

// Every setting flag is read as text and converted by the core's one strict conversion
// (setting_from_text), so every bad flag is reported at once, with its valid range.
void add_setting_flags(CLI::App& cmd, RunFlags& f) {
  for (const SettingFlag& sf : setting_flags()) {
    const std::string shown = default_text(sf.key);  // "": unset by default (its help says what it follows)
    const std::string help = shown.empty() ? sf.help : std::string(sf.help) + " (default " + shown + ")";
    cmd.add_option(std::string("--") + sf.flag, f.text[sf.flag], help)->allow_extra_args(false);
  }
}

std::vector<SettingError> finish_settings(RunFlags& f, const CLI::App& cmd) {
  std::vector<SettingError> errors;
  const bool was_random_weights = f.s.random_weights();
  for (const SettingFlag& sf : setting_flags()) {
    if (cmd.count(std::string("--") + sf.flag) == 0) continue;
    convert_flag(
        errors, sf.flag, [&] { setting_from_text(sf.key, f.text[sf.flag], f.s); }, sf.key);
  }
  // A checkpoint's config.json sets the model settings (docs/model.md, "Checkpoints"); a flag that contradicts it
  // is refused naming both values.
  const bool from_checkpoint = f.s.from_checkpoint();
  for (SettingError& e : apply_checkpoint_settings(f.s, [&](std::string_view key) {
         const SettingFlag* row = setting_flag(std::string(key));
         return row != nullptr && cmd.count(std::string("--") + row->flag) > 0;
       }))
    errors.push_back(std::move(e));
  for (auto& e : errors)
    for (char& c : e.setting)
      if (c == '_') c = '-';
  // A flag of the other family would be silently ignored: refuse it instead.
  for (const SettingFlag& sf : setting_flags()) {
    const std::optional<Model> family = setting_family(sf.key);
    if (family && *family != f.s.model && cmd.count(std::string("--") + sf.flag) > 0)
      errors.push_back({sf.flag, std::string("applies to --model ") + std::string(to_string(*family)) +
                                     " only (this run is --model " + std::string(to_string(f.s.model)) + ")"});
  }
  // The random-weight family's residual strength defaults to 1 (a GPT-2 block), docs/model.md section 7:
  // the one rule every front end applies (settings_text.hpp).
  apply_family_default_gamma(f.s, was_random_weights, cmd.count("--gamma") > 0 || from_checkpoint);
  for (auto& e : validate(f.s)) {
    for (char& c : e.setting)
      if (c == '_') c = '-';  // the flag's spelling: init_std -> --init-std
    const bool repeated = std::any_of(errors.begin(), errors.end(), [&](const SettingError& earlier) {
      return earlier.setting == e.setting && earlier.message == e.message;  // a checkpoint's error, found twice
    });
    if (!repeated) errors.push_back(std::move(e));
  }
  // The checkpoint's tensors are read now, so that a corrupt file exits 2 before any work (and stays loaded); not
  // when even one thread's run would not fit, which the command refuses next without reading them.
  const std::uint64_t available = available_memory_bytes();
  const bool fits = available == 0 || estimate_cost(f.s, 1).memory_bytes <= available / 10 * 8;
  if (from_checkpoint && errors.empty() && fits) try {
      checkpoint_network(f.s);
    } catch (const std::exception& e) { errors.push_back({"checkpoint", e.what()}); }
  if (cmd.get_option_no_throw("--save-tensors") != nullptr && cmd.count("--save-tensors") > 0) {
    if (f.s.samples > kSaveTensorsMax)
      errors.push_back(
          {"save-tensors", "writes every sample's tensors: use --samples <= " + std::to_string(kSaveTensorsMax) +
                               " (this run has " + std::to_string(f.s.samples) + ")"});
    if (cmd.count("--shard") > 0) errors.push_back({"save-tensors", "cannot be combined with --shard"});
    // The destination before computing: a new folder, or one a maskscope run wrote (replaced whole).
    if (std::string why = check_tensor_destination(f.save_tensors); !why.empty())
      errors.push_back({"save-tensors", why});
  }
  // A sweep splits by points, not by segments: cmd_sweep.cpp reads its own --shard.
  if (cmd.get_name() != "sweep" && cmd.get_option_no_throw("--shard") != nullptr && cmd.count("--shard") > 0 &&
      errors.empty())
    if (std::string why = parse_shard(f); !why.empty()) errors.push_back({"shard", why});
  // The destination is checked before computing: a run of hours must not end in "cannot write".
  if (cmd.count("--out")) {
    if (f.out.rfind("--", 0) == 0) errors.push_back({"out", "needs a file name, got the flag '" + f.out + "'"});
    else if (std::string why = check_output_path(f.out); !why.empty()) errors.push_back({"out", why});
  }
  return errors;
}

int emit(const std::string& out, const std::string& text) {
  if (out.empty()) {
    std::cout << text;
  } else if (std::string error; !write_file_atomic(out, text, error)) {
    std::cerr << "maskscope-cli: " << error << "\n";
    return 1;
  }
  return 0;
}

int report_invalid(const std::vector<SettingError>& errors) {
  std::cerr << "maskscope-cli: invalid settings\n";
  for (const auto& e : errors) std::cerr << "  --" << e.setting << ": " << e.message << "\n";
  return kExitInvalid;
}

std::string format_eta(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--";
  char buf[32];
  if (seconds < 60) std::snprintf(buf, sizeof buf, "%.1fs", seconds);
  else std::snprintf(buf, sizeof buf, "%dm%02ds", int(seconds) / 60, int(seconds) % 60);
  return buf;
}

}  // namespace maskscope::cli
