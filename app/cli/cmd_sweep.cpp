// maskscope-cli sweep: a metric against one or two settings (issue 32), each point refined in stages and
// stopped early at a target SE (core/run/sweep.hpp), written as JSON (each point's layers exactly as `run`
// writes them), as a CSV table of the metric, or as a shard of its points (.msweep) for `merge`; under
// mpirun each rank takes every P-th point and rank 0 writes the whole (core/run/sweep_shard.hpp).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unistd.h>

#include "commands.hpp"
#include "core/run/kernel_info.hpp"
#include "core/model/settings_text.hpp"
#include "core/model/strict_number.hpp"
#include "core/run/resources.hpp"
#include "core/run/sweep.hpp"
#include "core/run/sweep_output.hpp"
#include "core/run/sweep_shard.hpp"
#include "core/stats/accumulator.hpp"

namespace maskscope::cli {

namespace {

// sweep_memory_refusal (sweep_spec.hpp) as the flag's error.
std::vector<SettingError> memory_errors(const std::vector<Settings>& points, int threads) {
  const std::string why = sweep_memory_refusal(points, threads);
  if (why.empty()) return {};
  return {{"vary", why}};
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
  sweep->add_option("--out", f.run.out,
                    "FILE.json, FILE.csv, or FILE.msweep (a shard's points, for 'maskscope-cli merge') "
                    "(default: JSON on standard output)");
  sweep->add_flag("--quiet", f.run.quiet, "no progress line on stderr")->disable_flag_override();
  sweep
      ->add_option("--shard", f.run.shard_text,
                   "compute shard K of N (1 <= K <= N <= points): every N-th point from the K-th, written to --out "
                   "FILE.msweep; 'maskscope-cli merge' joins the shards into the sweep's file")
      ->allow_extra_args(false);
  return sweep;
}

int cmd_sweep(SweepFlags& f, const CLI::App& cmd, const MpiSession& mpi) {
  auto errors = finish_settings(f.run, cmd);
  const bool to_shard = ends_with(f.run.out, kSweepShardExtension);
  if (cmd.count("--out") && !ends_with(f.run.out, ".json") && !ends_with(f.run.out, ".csv") && !to_shard)
    errors.push_back({"out", "'" + f.run.out + "': valid: FILE.json, FILE.csv or FILE" + kSweepShardExtension});
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
  const bool sharded = cmd.count("--shard") > 0;
  if (sharded) {
    if (std::string why = parse_shard_text(f.run.shard_text, f.run.shard_k, f.run.shard_n); !why.empty())
      errors.push_back({"shard", why});
    else if (!to_shard)
      errors.push_back({"shard", std::string("a shard is part of a sweep: write it with --out FILE") +
                                     kSweepShardExtension + " and join the parts with 'maskscope-cli merge'"});
  }
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
    if (sharded && !points.empty())
      if (std::string why = sweep_shard_error(points.size(), f.run.shard_k, f.run.shard_n); !why.empty())
        errors.push_back({"shard", why});
  }
  if (!errors.empty()) return mpi.rank() == 0 ? report_invalid(errors) : kExitInvalid;

  // This process's points: its shard's (every N-th from the K-th), and of those every P-th under mpirun.
  const std::vector<std::size_t> shard = sweep_shard_points(points.size(), f.run.shard_k, f.run.shard_n);
  std::vector<std::size_t> mine;
  std::vector<Settings> mine_points;
  for (std::size_t q = std::size_t(mpi.rank()); q < shard.size(); q += std::size_t(mpi.size())) {
    mine.push_back(shard[q]);
    mine_points.push_back(points[shard[q]]);
  }
  const std::vector<SettingError> memory = memory_errors(mine_points, resolved_threads(f.run.s));
  if (mpi.active()) {  // every rank learns whether one is refused, and all end together
    if (mpi_sum(mpi, {memory.empty() ? 0 : 1})[0] > 0) return memory.empty() ? kExitInvalid : report_invalid(memory);
    mpi_require_one_kernel(mpi, kernel_name(points.front()));
  } else if (!memory.empty()) {
    return report_invalid(memory);
  }

  SweepOptions o;
  o.metric = metric;
  o.target_se = f.se;
  o.threads = f.run.s.threads;
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<Sweep> sweep;
  if (!mine_points.empty()) sweep = std::make_unique<Sweep>(mine_points, o);  // a rank may have no points
  const bool tty = isatty(STDERR_FILENO);
  const bool show = !f.run.quiet && mpi.rank() == 0;
  auto last_line = std::chrono::steady_clock::now();
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const auto state = sweep ? sweep->snapshot() : std::make_shared<const SweepState>();
    std::int64_t samples = 0, done = 0;
    for (const SweepPoint& p : state->points) {
      samples += p.samples;
      done += p.done;
    }
    // Job-wide under mpirun: every rank takes part until all are done.
    const std::vector<std::int64_t> all = mpi_sum(mpi, {samples, done, !sweep || sweep->done() ? 1 : 0});
    if (all[2] == mpi.size()) break;
    const auto now = std::chrono::steady_clock::now();
    if (!show || (!tty && now - last_line < std::chrono::seconds(2))) continue;
    last_line = now;
    const double seconds = std::chrono::duration<double>(now - t0).count();
    if (mpi.active())
      std::fprintf(stderr, "%s%lld / %zu points done, %lld samples, %.1f s%s", tty ? "\r" : "",
                   static_cast<long long>(all[1]), shard.size(), static_cast<long long>(all[0]), seconds,
                   tty ? "   " : "\n");
    else
      std::fprintf(stderr, "%sstage %d: %lld / %zu points done, %lld samples, %.1f s%s", tty ? "\r" : "",
                   state->stages + 1, static_cast<long long>(done), state->points.size(),
                   static_cast<long long>(samples), state->elapsed_s, tty ? "   " : "\n");
  }
  const auto state = sweep ? sweep->snapshot() : std::make_shared<const SweepState>();
  if (!state->error.empty()) {
    std::fprintf(
        stderr, "%smaskscope-cli: %s%s\n", tty && show ? "\n" : "",
        mpi.active() ? ("rank " + std::to_string(mpi.rank()) + " of " + std::to_string(mpi.size()) + ": ").c_str() : "",
        state->error.c_str());
    if (mpi.active()) mpi.abort(1);
    return 1;
  }
  std::int64_t samples = 0, early = 0;
  for (const SweepPoint& p : state->points) {
    samples += p.samples;
    early += p.stopped_early;
  }
  const std::vector<std::int64_t> all = mpi_sum(mpi, {samples, early});
  const double seconds =
      mpi.active() ? std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() : state->elapsed_s;
  if (show)
    std::fprintf(stderr, "%sdone: %zu points, %lld stopped early, %lld samples in %.2f s (%s)\n", tty ? "\r" : "",
                 shard.size(), static_cast<long long>(all[1]), static_cast<long long>(all[0]), seconds,
                 mpi.active() ? (std::to_string(mpi.size()) + " MPI ranks").c_str()
                              : (std::to_string(state->stages) + " stages").c_str());

  // One process, the whole sweep: its file straight from the state.
  if (!mpi.active() && !to_shard) {
    const std::string text = ends_with(f.run.out, ".csv") ? sweep_csv(axes, metric, *state)
                                                          : sweep_json(axes, metric, *state, f.se, f.run.s.samples);
    return emit(f.run.out, text);
  }
  // A shard, or this rank's points: what `merge` joins. Rank 0 joins every rank's into the shard's (or the
  // whole sweep's) points, as `merge` joins files, and writes them.
  const nlohmann::json identity =
      sweep_identity(axes, metric, f.se, f.run.s, cmd.count("--gamma") > 0, points.size(), kernel_name(points.front()));
  SweepShard part = make_sweep_shard(identity, f.run.shard_k, f.run.shard_n, mine, axes, metric, *state);
  if (!mpi.active()) return emit(f.run.out, sweep_shard_text(part));
  const std::vector<std::string> texts = mpi_gather_text(mpi, sweep_shard_text(part));
  if (mpi.rank() != 0) return 0;
  std::vector<std::pair<SweepShard, std::string>> parts;
  for (std::size_t r = 0; r < texts.size(); ++r) {
    const std::string name = "rank " + std::to_string(r);
    parts.emplace_back(parse_sweep_shard(texts[r], name), name);
  }
  SweepShard joined = join_sweep_shards(std::move(parts), false);
  joined.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();  // the job's
  if (to_shard) return emit(f.run.out, sweep_shard_text(joined));
  return emit(f.run.out, ends_with(f.run.out, ".csv") ? sweep_shard_csv(joined) : sweep_shard_json(joined));
}

}  // namespace maskscope::cli
