// maskscope-cli sweep: a metric against one or two settings (issue 32), each point refined in stages and
// stopped early at a target SE (core/run/sweep.hpp), written as JSON (each point's layers exactly as `run`
// writes them) or as a CSV table of the metric.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <unistd.h>

#include "commands.hpp"
#include "core/formats/result_json.hpp"
#include "core/kernel/lane_kernel.hpp"
#include "core/model/settings_text.hpp"
#include "core/model/strict_number.hpp"
#include "core/model/version.hpp"
#include "core/run/resources.hpp"
#include "core/run/sweep.hpp"
#include "core/stats/accumulator.hpp"

namespace maskscope::cli {

namespace {

// A number for the CSV: the shortest text that reads back as it; empty for NaN.
std::string csv_number(double x) {
  if (!std::isfinite(x)) return "";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

std::string csv_field(const std::string& text) {
  return text.find_first_of(",\"") == std::string::npos ? text : "\"" + text + "\"";
}

// An axis value as JSON: a number for numeric settings, else the name as typed.
nlohmann::json value_json(const std::string& key, const std::string& text) {
  const bool named = key == "norm" || key == "scale" || key == "mask" || key == "model" || key == "weights";
  return named ? nlohmann::json(text) : number_from_text(key, text);
}

std::string sweep_json(const SweepFlags& f, const std::vector<SweepAxis>& axes, const SweepMetric& metric,
                       const SweepState& state) {
  nlohmann::json vary = nlohmann::json::array();
  for (const SweepAxis& a : axes) {
    nlohmann::json values = nlohmann::json::array();
    for (const std::string& v : a.values) values.push_back(value_json(a.key, v));
    vary.push_back({{"name", a.key}, {"values", std::move(values)}});
  }
  nlohmann::json points = nlohmann::json::array();
  for (const SweepPoint& p : state.points) {
    // The run's own JSON, so that `layers` is what `run` writes for these settings and samples (one code path).
    const nlohmann::json run = snapshot_to_json(*p.snapshot);
    nlohmann::json point = {{"settings", run.at("config")},
                            {"samples", p.samples},
                            {"stopped_early", p.stopped_early},
                            {"kernel", kernel_name(p.settings)},
                            {"layers", run.at("layers")}};
    if (run.contains("embeddings")) point["embeddings"] = run.at("embeddings");
    points.push_back(std::move(point));
  }
  nlohmann::json j = {
      {"vary", std::move(vary)},    {"metric", sweep_metric_name(metric)}, {"se", f.se},
      {"samples", f.run.s.samples}, {"elapsed_s", state.elapsed_s},        {"maskscope_version", kVersion},
      {"points", std::move(points)}};
  return j.dump(1) + "\n";
}

std::string sweep_csv(const std::vector<SweepAxis>& axes, const SweepMetric& metric, const SweepState& state) {
  std::string out;
  for (const SweepAxis& a : axes) out += a.key + ",";
  out += "layer,metric,value,se,samples,ties\n";
  const std::string name = csv_field(sweep_metric_name(metric));
  for (const SweepPoint& p : state.points)
    for (const LayerStats& l : p.snapshot->layers) {
      for (const SweepAxis& a : axes) out += csv_field(axis_value_text(p.settings, a.key)) + ",";
      const MetricValue v = metric_value(l, metric);
      out += std::to_string(l.layer) + "," + name + "," + csv_number(v.value) + "," + csv_number(v.se) + "," +
             std::to_string(p.samples) + "," + csv_number(v.ties) + "\n";
    }
  return out;
}

}  // namespace

CLI::App* add_sweep(CLI::App& app, SweepFlags& f) {
  auto* sweep = app.add_subcommand("sweep",
                                   "a metric against one or two settings, each point refined until its SE "
                                   "reaches --se (JSON: each point's layers as 'run' writes them; or CSV)");
  sweep
      ->add_option("--vary", f.vary,
                   "NAME=LIST, once or twice: a setting (flag or key name) and its values: a,b,c or START:STOP:COUNT "
                   "or START:STOP:COUNTlog; at most " +
                       std::to_string(kSweepMaxValues) + " values, " + std::to_string(kSweepMaxPoints) + " points")
      ->required()
      ->allow_extra_args(false);
  add_setting_flags(*sweep, f.run);
  sweep
      ->add_option(
          "--metric", f.metric_text,
          std::string("the metric of the stopping rule and the CSV: ") + sweep_metric_names_text() + " (default rp)")
      ->allow_extra_args(false);
  sweep
      ->add_option("--se", f.se_text,
                   "stop each point once the metric's SE is at most this in every layer (--samples is then the "
                   "cap); 0 = every point to --samples (default 0)")
      ->allow_extra_args(false);
  sweep->add_option("--out", f.run.out, "FILE.json or FILE.csv (default: JSON on standard output)");
  sweep->add_flag("--quiet", f.run.quiet, "no progress line on stderr")->disable_flag_override();
  sweep->add_option("--shard", f.run.shard_text, "not yet available for sweeps (refused)")->allow_extra_args(false);
  return sweep;
}

int cmd_sweep(SweepFlags& f, const CLI::App& cmd) {
  if (cmd.count("--shard") > 0)
    return report_invalid({{"shard",
                            "shards, merge and MPI are not yet available for sweeps; run the whole sweep "
                            "in one process (its points use every --threads)"}});
  auto errors = finish_settings(f.run, cmd);
  if (cmd.count("--out") && !ends_with(f.run.out, ".json") && !ends_with(f.run.out, ".csv"))
    errors.push_back({"out", "'" + f.run.out + "': valid: FILE.json or FILE.csv"});
  std::vector<SweepAxis> axes;
  if (f.vary.size() > kSweepMaxAxes)
    errors.push_back({"vary", "given " + std::to_string(f.vary.size()) + " times; valid: once or twice"});
  for (const std::string& spec : f.vary) {
    try {
      axes.push_back(parse_sweep_axis(spec));
    } catch (const std::exception& e) {
      errors.push_back({"vary", e.what()});
      continue;
    }
    for (const SettingFlag& sf : setting_flags())
      if (sf.key == axes.back().key && cmd.count(std::string("--") + sf.flag) > 0)
        errors.push_back({"vary", axes.back().key + " is swept and also given as --" + sf.flag + ": give it once"});
  }
  SweepMetric metric;
  convert_flag(errors, "metric", [&] { metric = parse_sweep_metric(f.metric_text); });
  if (cmd.count("--se"))
    convert_flag(errors, "se", [&] { f.se = real_number("se", number_from_text("se", f.se_text), 0, 1e9); });
  std::vector<Settings> points;
  if (errors.empty() && axes.size() == f.vary.size()) {
    try {
      points = sweep_points(f.run.s, axes, cmd.count("--gamma") > 0);
    } catch (const std::exception& e) { errors.push_back({"vary", e.what()}); }
    for (const Settings& p : points)
      if (std::string why = sweep_metric_error(metric, p); !why.empty()) {
        errors.push_back({"metric", why});
        break;
      }
    // A fixed flag of the other family than a point's (a swept --model) would be ignored there: refuse it.
    for (const SettingFlag& sf : setting_flags()) {
      const std::optional<Model> family = setting_family(sf.key);
      if (!family || cmd.count(std::string("--") + sf.flag) == 0) continue;
      for (const Settings& p : points)
        if (*family != p.model) {
          errors.push_back({sf.flag, std::string("applies to --model ") + std::string(to_string(*family)) +
                                         " only (a point of this sweep is --model " + std::string(to_string(p.model)) +
                                         ")"});
          break;
        }
    }
  }
  // Memory: every unfinished point keeps its exact sums (48 bytes a value) and its latest picture (16), and
  // up to --threads points run side by side, one thread each (resources.hpp).
  if (errors.empty()) {
    std::uint64_t bytes = 0, largest_run = 0;
    for (const Settings& p : points) {
      bytes += 64 * accum_layout(p).total();
      largest_run = std::max(largest_run, estimate_cost(p, 1).memory_bytes);
    }
    bytes += std::uint64_t(resolved_threads(f.run.s)) * largest_run;
    const std::uint64_t available = available_memory_bytes();
    if (available > 0 && bytes > available * 8 / 10)
      errors.push_back({"vary", std::to_string(points.size()) + " points need about " + bytes_text(bytes) +
                                    "; this machine has " + bytes_text(available) +
                                    " available. Fewer points, or lower n or layers."});
  }
  if (!errors.empty()) return report_invalid(errors);

  SweepOptions o;
  o.metric = metric;
  o.target_se = f.se;
  o.threads = f.run.s.threads;
  Sweep sweep(points, o);
  const bool tty = isatty(STDERR_FILENO);
  auto last_line = std::chrono::steady_clock::now();
  while (!sweep.done()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const auto now = std::chrono::steady_clock::now();
    if (f.run.quiet || (!tty && now - last_line < std::chrono::seconds(2))) continue;
    last_line = now;
    const auto state = sweep.snapshot();
    std::int64_t samples = 0, done = 0;
    for (const SweepPoint& p : state->points) {
      samples += p.samples;
      done += p.done;
    }
    std::fprintf(stderr, "%sstage %d: %lld / %zu points done, %lld samples, %.1f s%s", tty ? "\r" : "",
                 state->stages + 1, static_cast<long long>(done), state->points.size(), static_cast<long long>(samples),
                 state->elapsed_s, tty ? "   " : "\n");
  }
  const auto state = sweep.snapshot();
  if (!state->error.empty()) {
    std::fprintf(stderr, "%smaskscope-cli: %s\n", tty && !f.run.quiet ? "\n" : "", state->error.c_str());
    return 1;
  }
  if (!f.run.quiet) {
    std::int64_t samples = 0, early = 0;
    for (const SweepPoint& p : state->points) {
      samples += p.samples;
      early += p.stopped_early;
    }
    std::fprintf(stderr, "%sdone: %zu points, %lld stopped early, %lld samples in %.2f s (%d stages)\n",
                 tty ? "\r" : "", state->points.size(), static_cast<long long>(early), static_cast<long long>(samples),
                 state->elapsed_s, state->stages);
  }
  const std::string text =
      ends_with(f.run.out, ".csv") ? sweep_csv(axes, metric, *state) : sweep_json(f, axes, metric, *state);
  return emit(f.run.out, text);
}

}  // namespace maskscope::cli
