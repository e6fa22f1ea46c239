// maskscope-cli probe: Zuo et al.'s position probes (`003` Sec. 5.5, Fig. 8) on one fixed random-weight
// network: per layer and feature (X, Var_X, Sim_X), Pearson-R and NRMSE on held-out sequences with
// bootstrap standard errors, written as JSON (docs/cli.md, docs/model.md section 9).
#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <optional>
#include <stop_token>
#include <thread>
#include <type_traits>

#include "commands.hpp"
#include "core/formats/result_json.hpp"
#include "core/model/input_file.hpp"
#include "core/model/settings_text.hpp"
#include "core/model/input_file.hpp"
#include "core/model/strict_number.hpp"
#include "core/model/version.hpp"
#include "core/run/position_probes.hpp"

namespace maskscope::cli {

CLI::App* add_probe(CLI::App& app, ProbeFlags& f) {
  auto* cmd = app.add_subcommand(
      "probe", "train position probes per layer on one fixed random-weight network and write Pearson-R and NRMSE");
  add_setting_flags(*cmd, f.run);
  cmd->add_option("--preset", f.preset,
                  "a preset file (assets/presets/*.json) whose settings the probe starts from; flags override them")
      ->allow_extra_args(false);
  cmd->add_option("--features", f.features, "features of a token's state: a list of x, var, sim (default x,var,sim)")
      ->allow_extra_args(false);
  cmd->add_option("--probe", f.kind, "ridge (closed form, default) | mlp (the paper's 4-layer ReLU MLP)")
      ->allow_extra_args(false);
  cmd->add_option("--train", f.train, "training sequences [2, 10^6] (default 1600)")->allow_extra_args(false);
  cmd->add_option("--test", f.test, "test sequences [2, 10^6], samples after the training ones (default 1600)")
      ->allow_extra_args(false);
  cmd->add_option("--ridge", f.ridge, "ridge penalty on standardized features (0, 1e6] (default 0.001)")
      ->allow_extra_args(false);
  cmd->add_option("--mlp-width", f.mlp_width, "MLP probe: hidden width [1, 4096] (default 64)")
      ->allow_extra_args(false);
  cmd->add_option("--mlp-epochs", f.mlp_epochs, "MLP probe: epochs of Adam [1, 10000] (default 20)")
      ->allow_extra_args(false);
  cmd->add_option("--mlp-batch", f.mlp_batch, "MLP probe: minibatch rows [1, 10^6] (default 128)")
      ->allow_extra_args(false);
  cmd->add_option("--mlp-lr", f.mlp_lr, "MLP probe: Adam's learning rate (0, 1] (default 0.001)")
      ->allow_extra_args(false);
  cmd->add_option("--bootstrap", f.bootstrap, "resamples of the test sequences for the SE [2, 100000] (default 200)")
      ->allow_extra_args(false);
  cmd->add_option("--out", f.run.out, "output JSON file (default: standard output)");
  cmd->add_flag("--quiet", f.run.quiet, "no progress line on stderr")->disable_flag_override();
  return cmd;
}

namespace {

// The probe's own flags, strictly converted; every problem named.
void finish_probe(ProbeFlags& f, const CLI::App& cmd, ProbeRequest& r, std::vector<SettingError>& errors) {
  auto whole = [&](const char* flag, const std::string& text, std::int64_t lo, std::int64_t hi, auto& out) {
    if (cmd.count(std::string("--") + flag) == 0) return;
    convert_flag(errors, flag, [&] {
      out =
          static_cast<std::remove_reference_t<decltype(out)>>(whole_number(flag, number_from_text(flag, text), lo, hi));
    });
  };
  auto real = [&](const char* flag, const std::string& text, double lo, double hi, double& out) {
    if (cmd.count(std::string("--") + flag) == 0) return;
    convert_flag(errors, flag, [&] { out = real_number(flag, number_from_text(flag, text), lo, hi); });
  };
  whole("train", f.train, 2, 1'000'000, r.train);
  whole("test", f.test, 2, 1'000'000, r.test);
  real("ridge", f.ridge, 0.0, 1e6, r.probe.ridge);
  whole("mlp-width", f.mlp_width, 1, 4096, r.probe.mlp_width);
  whole("mlp-epochs", f.mlp_epochs, 1, 10000, r.probe.mlp_epochs);
  whole("mlp-batch", f.mlp_batch, 1, 1'000'000, r.probe.mlp_batch);
  real("mlp-lr", f.mlp_lr, 0.0, 1.0, r.probe.mlp_learning_rate);
  whole("bootstrap", f.bootstrap, 2, 100000, r.probe.bootstrap);
  if (cmd.count("--probe")) {
    if (auto k = parse_probe_kind(f.kind)) r.probe.kind = *k;
    else errors.push_back({"probe", "'" + f.kind + "'; valid: ridge, mlp"});
  }
  if (cmd.count("--features")) {
    r.features.clear();
    // Every item between commas, the empty ones too ("x," and "x,,var" are refused, not read as "x").
    for (std::size_t at = 0;;) {
      const std::size_t comma = f.features.find(',', at);
      const std::string item = f.features.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
      at = comma + 1;
      const auto feature = parse_probe_feature(item);
      if (!feature)
        errors.push_back({"features", (item.empty() ? std::string("an empty item in '") + printable(f.features) + "'"
                                                    : "'" + printable(item) + "' is not a feature") +
                                          "; valid: a comma-separated list of x, var, sim"});
      else if (std::find(r.features.begin(), r.features.end(), *feature) == r.features.end())
        r.features.push_back(*feature);
      if (comma == std::string::npos) break;
    }
  }
  r.probe.seed = f.run.s.seed;
}

}  // namespace

int cmd_probe(ProbeFlags& f, const CLI::App& cmd) {
  if (!f.preset.empty()) {  // the preset's settings first, the flags on top
    std::string text, why;
    nlohmann::json j;
    if (read_input_file(f.preset, kMaxTextInputBytes, "the preset", text, why)) {
      j = nlohmann::json::parse(text, nullptr, false);
      if (j.is_discarded()) why = "'" + printable(f.preset, 200) + "' is not valid JSON";
    }
    if (why.empty() && !(j.is_object() && j.contains("settings")))
      why = "'" + f.preset + "' has no \"settings\" object";
    if (why.empty()) try {
        apply_settings_json(j.at("settings"), f.run.s, "settings");
      } catch (const std::exception& e) { why = e.what(); }
    if (!why.empty()) return report_invalid({{"preset", why}});
  }
  auto errors = finish_settings(f.run, cmd);
  ProbeRequest r;
  finish_probe(f, cmd, r, errors);
  if (errors.empty())
    for (auto& e : validate_probe(f.run.s, r)) {
      for (char& c : e.setting)
        if (c == '_') c = '-';
      errors.push_back(std::move(e));
    }
  if (!errors.empty()) return report_invalid(errors);
  std::atomic<std::int64_t> collected{0};
  std::optional<ProbeTable> table;
  {
    // A jthread: stopped and joined when this block ends, also when run_position_probes throws.
    std::jthread progress([&](std::stop_token stop) {
      while (!stop.stop_requested()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        if (!f.run.quiet && !stop.stop_requested())
          std::fprintf(stderr, "\r%lld / %lld sequences   ", static_cast<long long>(collected.load()),
                       static_cast<long long>(r.train + r.test));
      }
    });
    table = run_position_probes(f.run.s, r, nullptr, &collected);
  }
  if (!table) return 1;
  if (!f.run.quiet)
    std::fprintf(stderr, "\rdone: hidden states %.2f s, %s probes %.2f s (%d threads)\n", table->collect_s,
                 std::string(to_string(r.probe.kind)).c_str(), table->fit_s, resolved_threads(f.run.s));
  nlohmann::json j = probe_table_to_json(*table, r);
  j["config"] = settings_to_json(f.run.s);
  j["maskscope_version"] = kVersion;
  j["threads_used"] = resolved_threads(f.run.s);
  return emit(f.run.out, j.dump(1) + "\n");
}

}  // namespace maskscope::cli
