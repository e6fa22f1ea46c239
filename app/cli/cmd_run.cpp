// maskscope-cli run: the Monte Carlo simulation, in threads, MPI ranks or one shard, written as the JSON
// result (or a shard's partial sums, .msum), with a progress line on stderr.
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <unistd.h>

#include "commands.hpp"
#include "core/formats/result_json.hpp"
#include "core/formats/tensor_analysis.hpp"
#include "core/run/kernel_info.hpp"
#include "core/model/version.hpp"
#include "core/run/partial_sums.hpp"
#include "core/run/resources.hpp"
#include "core/run/runner.hpp"

namespace maskscope::cli {

CLI::App* add_run(CLI::App& app, RunFlags& f) {
  auto* run = app.add_subcommand("run", "run the Monte Carlo simulation and write the JSON result");
  add_setting_flags(*run, f);
  run->add_option("--out", f.out, "output JSON file (default: standard output)");
  run->add_flag("--quiet", f.quiet, "no progress line on stderr")->disable_flag_override();
  run->add_option("--shard", f.shard_text,
                  "compute shard K of N (1 <= K <= N) and write its partial sums to --out FILE.msum; "
                  "'maskscope-cli merge' adds the shards up to the run's exact result")
      ->allow_extra_args(false);

  run->add_option("--save-tensors", f.save_tensors,
                  "also write every sample's logits, weights and hidden states to this folder (NumPy, manifest.json) "
                  "for 'maskscope-cli analyze'; --samples <= 10000")
      ->allow_extra_args(false);
  return run;
}

int cmd_run(RunFlags& f, const CLI::App& cmd, const MpiSession& mpi) {
  auto errors = finish_settings(f, cmd);
  if (!errors.empty()) return mpi.rank() == 0 ? report_invalid(errors) : kExitInvalid;
  // Memory: refuse, or use fewer threads, before allocating anything (resources.hpp).
  {
    const int wanted = resolved_threads(f.s);
    // --save-tensors holds every sample's trace and the arrays it writes, beside the run's buffers.
    const RunMemoryPlan plan = plan_run_memory(f.s, wanted, f.save_tensors.empty() ? 0 : save_tensors_bytes(f.s));
    if (!plan.refusal.empty()) {
      errors.push_back({"n", plan.refusal});
      return report_invalid(errors);
    }
    if (plan.threads < wanted) {
      std::cerr << "maskscope-cli: " << wanted << " threads would need about "
                << bytes_text(estimate_cost(f.s, wanted).memory_bytes) << " (" << bytes_text(available_memory_bytes())
                << " available); using " << plan.threads << " threads (same numbers, any thread count)\n";
      f.s.threads = plan.threads;
    }
    const RunCost cost = estimate_cost(f.s, plan.threads);
    if (!f.out.empty() && cost.json_bytes > (std::uint64_t(100) << 20) && !f.quiet)
      std::cerr << "maskscope-cli: the result will be about " << bytes_text(cost.json_bytes) << " of JSON\n";
  }
  const SampleGrid grid = sample_grid(f.s);
  const SegmentRange range = shard_segments(grid, f.shard_k, f.shard_n);
  const std::int64_t range_samples = grid.first_sample(range.end) - grid.first_sample(range.begin);
  const bool tty = isatty(STDERR_FILENO);
  auto last_line = std::chrono::steady_clock::now();
  auto progress_line = [&](std::int64_t done, double rate) {
    if (f.quiet) return;
    const auto now = std::chrono::steady_clock::now();
    if (!tty && now - last_line < std::chrono::seconds(2)) return;
    last_line = now;
    const double eta = rate > 0 ? double(range_samples - done) / rate : NAN;
    std::fprintf(stderr, "%s%lld / %lld samples  %.0f samples/s  ETA %s%s", tty ? "\r" : "",
                 static_cast<long long>(done), static_cast<long long>(range_samples), rate, format_eta(eta).c_str(),
                 tty ? "   " : "\n");
  };
  PartialSums sums;
  sums.settings = f.s;
  sums.segments = range;
  sums.first_sample = grid.first_sample(range.begin);
  sums.end_sample = grid.first_sample(range.end);
  sums.version = kVersion;
  // --save-tensors keeps the per-sample kernel, whose helpers analyze shares: it repeats the sums bit for bit.
  // --save-tensors keeps the parameter-free model on the per-sample kernel, whose helpers `analyze` shares;
  // random weights keep the run's own kernel, so the saved hidden states are the run's (and `probe`'s).
  const auto kernel =
      f.save_tensors.empty() || f.s.random_weights() ? Simulator::Kernel::automatic : Simulator::Kernel::per_sample;
  sums.kernel = kernel_name(f.s, kernel);
  std::shared_ptr<const Snapshot> snap;
  int ranks = 1;
  if (mpi.active()) {
    ranks = mpi.size();
    double seconds = 0;
    mpi_run(mpi, f.s, range, sums.exact, seconds, [&](const MpiProgress& p) {
      progress_line(p.samples_done, p.seconds > 0 ? double(p.samples_done) / p.seconds : 0.0);
    });
    if (mpi.rank() != 0) return 0;  // rank 0 writes the result
    sums.elapsed_s = seconds;
    auto merged = std::make_shared<Snapshot>(snapshot_of(sums));
    merged->finished = sums.exact.count() == range_samples;
    snap = merged;
  } else {
    RunOptions o;
    o.segments = range;
    o.kernel = kernel;
    // Snapshots only feed the progress line (every 100 ms): the window's 40 per second would cost the
    // workers 5-8% at n 50 (the numbers do not depend on it).
    o.publish_interval = std::chrono::milliseconds(100);
    Run run(f.s, o);
    while (!run.done()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (!f.quiet) progress_line(run.samples_done(), run.snapshot()->samples_per_s);
    }
    if (std::string why = run.error(); !why.empty()) {
      std::cerr << (tty && !f.quiet ? "\n" : "") << "maskscope-cli: the run stopped: " << why << "\n";
      return 1;
    }
    snap = run.snapshot();
    if (sums_output(f)) sums.exact = run.exact();  // only a .msum needs them (150 MB at n 512, L 4)
    sums.elapsed_s = snap->elapsed_s;
  }
  if (!f.quiet)
    std::fprintf(stderr, "%sdone: %lld samples in %.2f s (%.0f samples/s, %d threads%s)\n", tty ? "\r" : "",
                 static_cast<long long>(snap->samples_done), snap->elapsed_s, snap->samples_per_s,
                 resolved_threads(f.s),
                 ranks > 1 ? (" on each of " + std::to_string(ranks) + " MPI ranks").c_str() : "");
  if (!f.save_tensors.empty()) {  // the raw per-sample tensors of this run, for `analyze` (round trip)
    Simulator sim(f.s, false, kernel);
    const std::vector<SampleTrace> traces = sim.trace_block(0, f.s.samples);
    std::string error;
    if (!save_tensors(f.save_tensors, f.s, traces, error)) {
      std::cerr << "maskscope-cli: --save-tensors: " << error << "\n";
      return 1;
    }
  }
  if (sums_output(f)) {
    std::string error;
    if (!write_partial_sums(f.out, sums, error)) {
      std::cerr << "maskscope-cli: " << error << "\n";
      return 1;
    }
    return 0;
  }
  nlohmann::json j = snapshot_to_json(*snap);
  j["maskscope_version"] = kVersion;
  j["kernel"] = sums.kernel;
  j["threads_used"] = resolved_threads(f.s);
  if (ranks > 1) j["mpi_ranks"] = ranks;
  const std::string text = j.dump(1) + "\n";
  return emit(f.out, text);
}

}  // namespace maskscope::cli
