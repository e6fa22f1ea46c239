// maskscope-cli's subcommands, one file each (cmd_*.cpp): add_* puts the subcommand and its flags on
// the app before parsing; cmd_* runs it after parsing and returns the exit code. docs/cli.md documents them.
#pragma once

#include <CLI/CLI.hpp>

#include <map>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "mpi_job.hpp"

namespace maskscope::cli {

// run: the Monte Carlo simulation (cmd_run.cpp).
CLI::App* add_run(CLI::App& app, RunFlags& f);
int cmd_run(RunFlags& f, const CLI::App& cmd, const MpiSession& mpi);

// analyze: a real model's tensors (cmd_analyze.cpp).
struct AnalyzeFlags {
  std::string folder, out, layers;
  int histograms = 0;                // --histograms B
  std::int64_t probe_train = 0;      // --probe-train N: position probes, prompts 0..N-1 train, the rest test
  std::string probe_kind = "ridge";  // --probe
  bool quiet = false;
};
CLI::App* add_analyze(CLI::App& app, AnalyzeFlags& a);
int cmd_analyze(AnalyzeFlags& a);

// merge: a run's shards (.msum) into one result, or a sweep's (.msweep) into its file (cmd_merge.cpp).
struct MergeFlags {
  std::vector<std::string> files;
  std::string out;
};
CLI::App* add_merge(CLI::App& app, MergeFlags& m);
int cmd_merge(MergeFlags& m);

// leakage: Ruscio et al.'s Table 6 in miniature (cmd_leakage.cpp).
struct LeakageFlags {
  RunFlags run;
  bool table = false;
};
CLI::App* add_leakage(CLI::App& app, LeakageFlags& f);
int cmd_leakage(LeakageFlags& f, const CLI::App& cmd);

// theory: the papers' closed forms (cmd_theory.cpp). n, d, alpha and gamma as typed (only the flags
// given); their defaults are Settings{}'s, as for run.
struct TheoryFlags {
  std::string kind;
  std::map<std::string, std::string> text;  // setting key -> value as typed
  bool paper_scale = false;
};
CLI::App* add_theory(CLI::App& app, TheoryFlags& t);
int cmd_theory(TheoryFlags& t, const CLI::App& cmd);

// sweep: a metric against one or two settings, points stopped early at a target SE; shards of its points and
// MPI ranks split it by points (cmd_sweep.cpp).
struct SweepFlags {
  RunFlags run;                   // the fixed settings (every setting flag), --samples the cap, --out, --quiet, --shard
  std::vector<std::string> vary;  // NAME=LIST, once or twice
  std::string metric_text = "rp", se_text;
  double se = 0;  // 0: every point to the cap
};
CLI::App* add_sweep(CLI::App& app, SweepFlags& f);
int cmd_sweep(SweepFlags& f, const CLI::App& cmd, const MpiSession& mpi);

// probe: Zuo et al.'s position probes on one fixed random-weight network (cmd_probe.cpp). The probe's
// own flags are read as text and converted strictly, every problem reported at once.
struct ProbeFlags {
  RunFlags run;  // every setting flag, --out, --quiet
  std::string features, kind, train, test, ridge, mlp_width, mlp_epochs, mlp_batch, mlp_lr, bootstrap, preset;
};
CLI::App* add_probe(CLI::App& app, ProbeFlags& f);
int cmd_probe(ProbeFlags& f, const CLI::App& cmd);

// train: the training engine on a task or a token file (cmd_train.cpp, docs/model.md "Training"). Its own flags
// as text, converted strictly; the model's are the setting flags.
struct TrainFlags {
  RunFlags run;  // every setting flag, --out (the run folder), --quiet
  std::string task, steps, batch, lr, warmup, weight_decay, grad_clip, eval_every, checkpoint_every, eval_sequences;
  std::string resume;
};
CLI::App* add_train(CLI::App& app, TrainFlags& f);
int cmd_train(TrainFlags& f, const CLI::App& cmd, const MpiSession& mpi);

// bench: samples/s of the reference configurations (cmd_bench.cpp).
struct BenchFlags {
  std::string threads_text = "0", seconds_text = "3";
  int threads = 0;
  double seconds = 3.0;
  bool training_only = false;  // --training: the training lines alone
};
CLI::App* add_bench(CLI::App& app, BenchFlags& b);
int cmd_bench(BenchFlags& b);

}  // namespace maskscope::cli
