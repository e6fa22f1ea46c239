// maskscope-cli analyze: the simulation's metrics on a real model's exported tensors (docs/tensors.md),
// through the same sums-to-snapshot path as a run.
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

#include "commands.hpp"
#include "core/formats/atomic_file.hpp"
#include "core/formats/result_json.hpp"
#include "core/formats/tensor_analysis.hpp"
#include "core/model/version.hpp"
#include "core/run/resources.hpp"

namespace maskscope::cli {

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
  const std::uint64_t need = tensor_analysis_bytes(t), available = available_memory_bytes();
  if (available > 0 && need > available * 8 / 10) {
    std::cerr << "maskscope-cli: analyze refused: " << t.L << " layers x " << t.H << " heads at T = " << t.T
              << " need about " << bytes_text(need) << "; " << bytes_text(available)
              << " available. Analyse fewer layers (--layers) or export shorter prompts.\n";
    return kExitInvalid;
  }
  const auto t0 = std::chrono::steady_clock::now();
  Snapshot snap = analyze_tensors(t);
  snap.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  nlohmann::json j = snapshot_to_json(snap);
  j["config"] = {{"source", "tensors"},
                 {"folder", a.folder},
                 {"model", t.model},
                 {"mask", mask_to_string(tensor_settings(t))},
                 {"prompts", t.P},
                 {"layers", t.L},
                 {"analysed_layers", t.analysed_layers()},
                 {"heads", t.H},
                 {"n", t.T},
                 {"d", t.d > 0 ? nlohmann::json(t.d) : nlohmann::json(nullptr)},
                 {"weights", t.weights ? "given" : "softmax of the logits"}};
  j["maskscope_version"] = kVersion;
  if (!a.quiet)
    std::fprintf(stderr, "analyze: %d prompts, %d of %d layers x %d heads, T = %d in %.2f s\n", t.P,
                 t.analysed_layers(), t.L, t.H, t.T, snap.elapsed_s);
  return emit(a.out, j.dump(1) + "\n");
}

}  // namespace maskscope::cli
