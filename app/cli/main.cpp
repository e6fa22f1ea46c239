// maskscope-cli: run the simulation, print the closed forms, or benchmark the core. This file builds the
// command line and dispatches; each subcommand lives in its own cmd_*.cpp (commands.hpp), docs/cli.md.
// Invalid input: a message naming each bad flag and its valid range on stderr, exit code 2.
#include <CLI/CLI.hpp>

#include <iostream>
#include <new>
#include <string>

#include "commands.hpp"
#include "core/model/version.hpp"
#include "core/stats/big_buffer.hpp"

namespace ms = maskscope;

int main(int argc, char** argv) {
  ms::return_large_blocks_to_system();
  CLI::App app{"maskscope-cli: positional information from the causal mask, simulated"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(ms::kVersion));

  ms::cli::RunFlags run_flags;
  ms::cli::AnalyzeFlags analyze_flags;
  ms::cli::MergeFlags merge_flags;
  ms::cli::LeakageFlags leakage_flags;
  ms::cli::TheoryFlags theory_flags;
  ms::cli::SweepFlags sweep_flags;
  ms::cli::BenchFlags bench_flags;
  ms::cli::ProbeFlags probe_flags;
  ms::cli::TrainFlags train_flags;
  CLI::App* run = ms::cli::add_run(app, run_flags);
  CLI::App* analyze = ms::cli::add_analyze(app, analyze_flags);
  CLI::App* merge = ms::cli::add_merge(app, merge_flags);
  CLI::App* leakage = ms::cli::add_leakage(app, leakage_flags);
  CLI::App* theory = ms::cli::add_theory(app, theory_flags);
  CLI::App* sweep = ms::cli::add_sweep(app, sweep_flags);
  CLI::App* bench = ms::cli::add_bench(app, bench_flags);
  CLI::App* probe = ms::cli::add_probe(app, probe_flags);
  CLI::App* train = ms::cli::add_train(app, train_flags);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) { return app.exit(e); } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) { return app.exit(e); } catch (const CLI::ParseError& e) {
    std::cerr << "maskscope-cli: " << e.what() << "\n(run 'maskscope-cli " << (argc > 1 ? argv[1] : "")
              << " --help' for the flags and their ranges)\n";
    return ms::cli::kExitInvalid;
  }
  // Under mpirun every rank parses the same arguments; only rank 0 prints and writes.
  ms::cli::MpiSession mpi;
  try {
    if (*run) return ms::cli::cmd_run(run_flags, *run, mpi);
    if (*merge) return ms::cli::cmd_merge(merge_flags);
    if (*analyze) return ms::cli::cmd_analyze(analyze_flags);
    if (*leakage) return ms::cli::cmd_leakage(leakage_flags, *leakage);
    if (*sweep) return ms::cli::cmd_sweep(sweep_flags, *sweep, mpi);
    if (*probe) return ms::cli::cmd_probe(probe_flags, *probe);
    if (*train) return ms::cli::cmd_train(train_flags, *train, mpi);
    if (*theory) return ms::cli::cmd_theory(theory_flags, *theory);
    if (*bench) return ms::cli::cmd_bench(bench_flags);
  } catch (const std::bad_alloc&) {
    // Every subcommand checks its memory estimate first (resources.hpp); this is the last line behind it.
    std::cerr << "maskscope-cli: out of memory; lower n, layers or threads\n";
    if (mpi.size() > 1) mpi.abort(1);
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "maskscope-cli: " << e.what() << "\n";
    if (mpi.size() > 1) mpi.abort(1);
    return 1;
  } catch (...) {  // nothing reaches std::terminate
    std::cerr << "maskscope-cli: unexpected error\n";
    if (mpi.size() > 1) mpi.abort(1);
    return 1;
  }
  return ms::cli::kExitInvalid;
}
