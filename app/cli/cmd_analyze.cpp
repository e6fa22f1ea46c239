// maskscope-cli analyze: the simulation's metrics on a real model's exported tensors (docs/tensors.md),
// through the same sums-to-snapshot path as a run.
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>

#include "commands.hpp"
#include "core/formats/atomic_file.hpp"
#include "core/formats/result_json.hpp"
#include "core/formats/tensor_analysis.hpp"
#include "core/model/version.hpp"
#include "core/run/resources.hpp"

namespace maskscope::cli {

namespace {
// --allow-nonfinite (AnalyzeFlags in commands.hpp has no field for it yet).
bool allow_nonfinite = false;
}  // namespace

CLI::App* add_analyze(CLI::App& app, AnalyzeFlags& a) {
  auto* analyze = app.add_subcommand("analyze",
                                     "the simulation's metrics on a real model's exported tensors "
                                     "(a folder with manifest.json and .npy arrays; docs/tensors.md)");
  analyze->add_option("folder", a.folder, "the tensor folder")->required();
  analyze->add_option("--out", a.out, "result JSON (default: standard output)");
  analyze->add_flag("--quiet", a.quiet, "no summary on stderr")->disable_flag_override();
  analyze
      ->add_option(
          "--layers", a.layers,
          "analyse only these layers, e.g. 1,2,30-32 (default: all); a big model's memory grows with the layers")
      ->allow_extra_args(false);
  analyze
      ->add_option("--histograms", a.histograms,
                   "bins of Zuo et al.'s cosine-difference and per-prompt adjacency / RP histograms (even, 2..4096; "
                   "needs hidden states); 0 = off")
      ->allow_extra_args(false);
  analyze
      ->add_option("--probe-train", a.probe_train,
                   "position probes (as 'probe'): the first N prompts train, the rest test; needs hidden states")
      ->allow_extra_args(false);
  analyze->add_option("--probe", a.probe_kind, "the probe of --probe-train: ridge | mlp (default ridge)")
      ->allow_extra_args(false);
  analyze
      ->add_flag("--allow-nonfinite", allow_nonfinite,
                 "leave out the prompts holding NaN or infinite values (and say how many) instead of refusing them")
      ->disable_flag_override();
  return analyze;
}

int cmd_analyze(AnalyzeFlags& a) {
  if (!a.out.empty())
    if (std::string why = check_output_path(a.out); !why.empty()) return report_invalid({{"out", why}});
  TensorSet t;
  try {
    t = open_tensors(a.folder);
  } catch (const std::exception& e) {
    std::cerr << "maskscope-cli: analyze refused: " << e.what() << "\n";
    return kExitInvalid;
  }
  if (!a.layers.empty())
    if (std::string why = select_layers(t, a.layers); !why.empty()) return report_invalid({{"layers", why}});
  if (std::string why = memory_shortfall(tensor_analysis_bytes(t)); !why.empty()) {
    std::cerr << "maskscope-cli: analyze refused: " << t.analysed_layers() << " layers x " << t.H
              << " heads at T = " << t.T << " need " << why
              << ". Analyse fewer layers (--layers) or export shorter prompts.\n";
    return kExitInvalid;
  }
  t.allow_nonfinite = allow_nonfinite;
  if (a.histograms != 0) {
    if (a.histograms < 0 || a.histograms > Limits::histograms_max || a.histograms % 2 != 0)
      return report_invalid({{"histograms", "valid: 0 (off) or an even number of bins in [2, 4096]"}});
    if (!t.hidden) return report_invalid({{"histograms", "needs the hidden states (array 'hidden') in the folder"}});
    t.histograms = a.histograms;
  }
  ProbeRequest probe;
  if (a.probe_train != 0) {
    if (!t.hidden)
      return report_invalid({{"probe-train", "the position probes need the hidden states (array 'hidden')"}});
    if (a.probe_train < 2 || a.probe_train > t.P - 2)
      return report_invalid({{"probe-train", "valid: an integer in [2, P - 2] = [2, " + std::to_string(t.P - 2) +
                                                 "] (the rest of the " + std::to_string(t.P) + " prompts test)"}});
    const auto kind = parse_probe_kind(a.probe_kind);
    if (!kind) return report_invalid({{"probe", "'" + a.probe_kind + "'; valid: ridge, mlp"}});
    probe.probe.kind = *kind;
    probe.train = a.probe_train;
    probe.test = t.P - a.probe_train;
  }
  const auto t0 = std::chrono::steady_clock::now();
  AnalysisReport report;
  Snapshot snap;
  try {
    snap = analyze_tensors(t, nullptr, &report);  // refuses NaN and infinities unless --allow-nonfinite
  } catch (const std::runtime_error& e) {
    std::cerr << "maskscope-cli: analyze refused: " << e.what() << "\n";
    return kExitInvalid;
  }
  snap.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (report.nonfinite.values > 0)  // said even with --quiet: the numbers cover fewer prompts than given
    std::cerr << "maskscope-cli: analyze left out " << report.nonfinite.prompts << " of " << t.P
              << " prompts: " << nonfinite_text(report.nonfinite, t.P) << "\n";
  nlohmann::json j = snapshot_to_json(snap);
  j["config"] = tensor_config_json(t, &report.nonfinite);
  if (a.probe_train != 0 && report.nonfinite.values > 0) {
    std::cerr << "maskscope-cli: analyze: no position probes on prompts holding non-finite values\n";
    return kExitInvalid;
  }
  if (a.probe_train != 0) {
    const int threads = std::max(1, int(std::thread::hardware_concurrency()));
    if (auto table = probe_tensors(t, probe, threads)) j["probes"] = probe_table_to_json(*table, probe);
  }
  j["maskscope_version"] = kVersion;
  if (!a.quiet)
    std::fprintf(stderr, "analyze: %d prompts, %d of %d layers x %d heads, T = %d in %.2f s\n", t.P,
                 t.analysed_layers(), t.L, t.H, t.T, snap.elapsed_s);
  return emit(a.out, j.dump(1) + "\n");
}

}  // namespace maskscope::cli
