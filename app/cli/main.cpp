// maskscope-cli: run the simulation, print the closed forms, or benchmark the core.
// Invalid input: a message naming each bad flag and its valid range on stderr, exit code 2.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <unistd.h>

#include "core/atomic_file.hpp"
#include "core/result_json.hpp"
#include "core/runner.hpp"
#include "core/settings.hpp"
#include "core/theory.hpp"
#include "core/version.hpp"

namespace ms = maskscope;

namespace {

constexpr int kExitInvalid = 2;

// Text flags are read as strings and checked here, so every bad flag is reported at once.
struct RunFlags {
  ms::Settings s;
  std::string norm = std::string(ms::to_string(ms::Settings{}.norm));
  std::string scale = std::string(ms::to_string(ms::Settings{}.scale));
  std::string mask = "causal";
  int unit_input = 0;  // read as an integer so that "7" is an error, not "true"
  std::string out;
  bool quiet = false;
};

void add_setting_flags(CLI::App& cmd, RunFlags& f) {
  cmd.add_option("--n", f.s.n, "tokens per sequence [1, 512]")->capture_default_str();
  cmd.add_option("--d", f.s.d, "hidden width [1, 65536]")->capture_default_str();
  cmd.add_option("--layers", f.s.layers, "layers L [1, 16]")->capture_default_str();
  cmd.add_option("--alpha", f.s.alpha, "input anisotropy [0, 1]")->capture_default_str();
  cmd.add_option("--norm", f.norm, "none | l2 | layernorm | rmsnorm")->capture_default_str();
  cmd.add_option("--scale", f.scale, "score scale: one | sqrt_d (1/sqrt(d)) | d (1/d)")->capture_default_str();
  cmd.add_option("--gamma", f.s.gamma, "residual strength [0, 1]")->capture_default_str();
  cmd.add_option("--rope", f.s.rope_base, "RoPE base theta; 0 = off, else [1, 1e9]")->capture_default_str();
  cmd.add_option("--mask", f.mask, "causal | bidirectional | window:W")->capture_default_str();
  cmd.add_option("--unit-input", f.unit_input, "rescale inputs to unit norm (0 | 1)")->capture_default_str();
  cmd.add_option("--samples", f.s.samples, "Monte Carlo samples [1, 1e12]")->capture_default_str();
  cmd.add_option("--seed", f.s.seed, "random seed")->capture_default_str();
  cmd.add_option("--threads", f.s.threads, "worker threads; 0 = all cores")->capture_default_str();
}

// Fills the enum settings from their text; returns every problem with the settings.
std::vector<ms::SettingError> finish_settings(RunFlags& f) {
  std::vector<ms::SettingError> errors;
  if (auto v = ms::parse_norm(f.norm)) f.s.norm = *v;
  else errors.push_back({"norm", "'" + f.norm + "' is not a norm; valid: none, l2, layernorm, rmsnorm"});
  if (auto v = ms::parse_scale(f.scale)) f.s.scale = *v;
  else errors.push_back({"scale", "'" + f.scale + "' is not a score scale; valid: one, sqrt_d, d"});
  if (!ms::parse_mask(f.mask, f.s))
    errors.push_back({"mask", "'" + f.mask + "' is not a mask; valid: causal, bidirectional, window:W with W in [1, n]"});
  if (f.unit_input == 0 || f.unit_input == 1) f.s.unit_input = f.unit_input == 1;
  else errors.push_back({"unit-input", std::to_string(f.unit_input) + " is not allowed; valid: 0 or 1"});
  for (auto& e : ms::validate(f.s)) errors.push_back(std::move(e));
  return errors;
}

int report_invalid(const std::vector<ms::SettingError>& errors) {
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

int cmd_run(RunFlags& f) {
  auto errors = finish_settings(f);
  if (!errors.empty()) return report_invalid(errors);
  if (!f.out.empty()) {
    const auto parent = std::filesystem::path(f.out).parent_path();
    if (!parent.empty() && !std::filesystem::is_directory(parent)) {
      std::cerr << "maskscope-cli: invalid settings\n  --out: directory '" << parent.string() << "' does not exist\n";
      return kExitInvalid;
    }
  }
  ms::Run run(f.s);
  const bool tty = isatty(STDERR_FILENO);
  auto last_line = std::chrono::steady_clock::now();
  while (!run.done()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (f.quiet) continue;
    const auto now = std::chrono::steady_clock::now();
    if (!tty && now - last_line < std::chrono::seconds(2)) continue;
    last_line = now;
    auto snap = run.snapshot();
    const double rate = snap->samples_per_s;
    const double eta = rate > 0 ? double(f.s.samples - snap->samples_done) / rate : NAN;
    std::fprintf(stderr, "%s%lld / %lld samples  %.0f samples/s  ETA %s%s", tty ? "\r" : "",
                 static_cast<long long>(snap->samples_done), static_cast<long long>(f.s.samples), rate,
                 format_eta(eta).c_str(), tty ? "   " : "\n");
  }
  auto snap = run.snapshot();
  if (!f.quiet)
    std::fprintf(stderr, "%sdone: %lld samples in %.2f s (%.0f samples/s, %d threads)\n", tty ? "\r" : "",
                 static_cast<long long>(snap->samples_done), snap->elapsed_s, snap->samples_per_s,
                 ms::resolved_threads(f.s));
  nlohmann::json j = ms::snapshot_to_json(*snap);
  j["maskscope_version"] = ms::kVersion;
  j["threads_used"] = ms::resolved_threads(f.s);
  const std::string text = j.dump(1) + "\n";
  if (f.out.empty()) {
    std::cout << text;
  } else if (std::string error; !ms::write_file_atomic(f.out, text, error)) {
    std::cerr << "maskscope-cli: " << error << "\n";
    return 1;
  }
  return 0;
}

struct TheoryFlags {
  std::string kind;
  int n = 10;
  int d = 64;
  double alpha = 0.0;
  double gamma = 0.0;
  bool paper_scale = false;
};

int cmd_theory(const TheoryFlags& t) {
  std::vector<ms::SettingError> errors;
  if (t.kind != "h_of_j" && t.kind != "behind_rope_layer2" && t.kind != "ln_recency_s2")
    errors.push_back({"kind", "'" + t.kind + "' is not a closed form; valid: h_of_j, behind_rope_layer2, ln_recency_s2"});
  if (t.n < ms::Limits::n_min || t.n > ms::Limits::n_max) errors.push_back({"n", "valid: integer in [1, 512]"});
  if (t.d < ms::Limits::d_min || t.d > ms::Limits::d_max) errors.push_back({"d", "valid: integer in [1, 65536]"});
  if (!std::isfinite(t.alpha) || t.alpha < 0 || t.alpha > 1) errors.push_back({"alpha", "valid: number in [0, 1]"});
  if (!std::isfinite(t.gamma) || t.gamma < 0 || t.gamma > 1) errors.push_back({"gamma", "valid: number in [0, 1]"});
  if (!errors.empty()) return report_invalid(errors);

  nlohmann::json out = {{"kind", t.kind}, {"n", t.n}, {"alpha", t.alpha}, {"gamma", t.gamma}};
  if (t.kind == "h_of_j") {
    out["d"] = t.d;
    out["source"] = "LayerNorm Induces Recency Bias, Eq. 42";
    out["with_inv_sqrt_d"] = !t.paper_scale;
    out["j"] = nlohmann::json::array();
    for (int j = 1; j <= t.n; ++j) out["j"].push_back(j);
    out["h"] = ms::theory::ln_recency_h_curve(t.n, t.d, t.alpha, t.gamma, !t.paper_scale);
  } else if (t.kind == "behind_rope_layer2") {
    out["source"] = "Behind RoPE, Eq. 3-4 (gamma = 1), App. A.2 (gamma = 0)";
    nlohmann::json g = nlohmann::json::array(), h = nlohmann::json::array(), s = nlohmann::json::array(),
                   w = nlohmann::json::array();
    for (int i = 1; i <= t.n; ++i) {
      g.push_back(ms::theory::behind_rope_g(i, t.alpha, t.gamma));
      h.push_back(ms::theory::behind_rope_h(i, t.alpha, t.gamma));
      nlohmann::json row = nlohmann::json::array(), wrow = nlohmann::json::array();
      for (int j = 1; j <= t.n; ++j) {
        row.push_back(j <= i ? nlohmann::json(ms::theory::behind_rope_layer2_score(i, j, t.alpha, t.gamma))
                             : nlohmann::json(nullptr));
        wrow.push_back(j <= i ? nlohmann::json(ms::theory::behind_rope_layer1_weight(i, j, t.alpha))
                              : nlohmann::json(nullptr));
      }
      s.push_back(std::move(row));
      w.push_back(std::move(wrow));
    }
    out["g"] = g;
    out["h"] = h;
    out["layer1_weight"] = w;
    out["layer2_score"] = s;
  } else {
    out["d"] = t.d;
    out["source"] = "LayerNorm Induces Recency Bias, Eq. 11 (alpha = 0, gamma = 0)";
    nlohmann::json s = nlohmann::json::array();
    for (int i = 1; i <= t.n; ++i) {
      nlohmann::json row = nlohmann::json::array();
      for (int j = 1; j <= t.n; ++j)
        row.push_back(j <= i ? nlohmann::json(ms::theory::ln_recency_s2(i, j, t.d)) : nlohmann::json(nullptr));
      s.push_back(std::move(row));
    }
    out["layer2_score"] = s;
  }
  std::cout << out.dump(1) << "\n";
  return 0;
}

struct BenchFlags {
  int threads = 0;
  double seconds = 3.0;
};

// Samples/s of the two reference configurations of issue 2, all metrics on.
int cmd_bench(const BenchFlags& b) {
  if (b.threads < 0 || b.threads > ms::Limits::threads_max || !(b.seconds > 0 && b.seconds <= 600)) {
    return report_invalid({{"threads/seconds", "threads in [0, 256], seconds in (0, 600]"}});
  }
  struct Case {
    const char* name;
    ms::Settings s;
  };
  ms::Settings a;  // n 10, d 64, L 4, LN, alpha 0.5 (LN-recency)
  a.n = 10; a.d = 64; a.layers = 4; a.norm = ms::Norm::layernorm; a.scale = ms::Scale::sqrt_d; a.alpha = 0.5;
  ms::Settings c;  // n 50, d 64, L 4, l2, gamma 1, alpha 0.2 (Behind RoPE)
  c.n = 50; c.d = 64; c.layers = 4; c.norm = ms::Norm::l2; c.scale = ms::Scale::one; c.gamma = 1.0;
  c.alpha = 0.2; c.unit_input = true;
  nlohmann::json results = nlohmann::json::array();
  for (Case k : {Case{"n10_d64_L4_layernorm_alpha0.5", a}, Case{"n50_d64_L4_l2_gamma1_alpha0.2", c}}) {
    k.s.threads = b.threads;
    k.s.samples = ms::Limits::samples_max;
    ms::Run run(k.s);
    std::this_thread::sleep_for(std::chrono::duration<double>(b.seconds));
    run.cancel();
    run.wait();
    auto snap = run.snapshot();
    std::printf("%-34s %12.0f samples/s  (%lld samples in %.2f s, %d threads)\n", k.name, snap->samples_per_s,
                static_cast<long long>(snap->samples_done), snap->elapsed_s, ms::resolved_threads(k.s));
    results.push_back({{"config", k.name}, {"samples_per_s", snap->samples_per_s},
                       {"threads", ms::resolved_threads(k.s)}});
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"maskscope-cli: positional information from the causal mask, simulated"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(ms::kVersion));

  RunFlags run_flags;
  auto* run = app.add_subcommand("run", "run the Monte Carlo simulation and write the JSON result");
  add_setting_flags(*run, run_flags);
  run->add_option("--out", run_flags.out, "output JSON file (default: standard output)");
  run->add_flag("--quiet", run_flags.quiet, "no progress line on stderr");

  TheoryFlags theory_flags;
  auto* theory = app.add_subcommand("theory", "print a closed form of the papers as JSON");
  theory->add_option("--kind", theory_flags.kind, "h_of_j | behind_rope_layer2 | ln_recency_s2")->required();
  theory->add_option("--n", theory_flags.n, "positions 1..n")->capture_default_str();
  theory->add_option("--d", theory_flags.d, "hidden width")->capture_default_str();
  theory->add_option("--alpha", theory_flags.alpha, "anisotropy")->capture_default_str();
  theory->add_option("--gamma", theory_flags.gamma, "residual strength")->capture_default_str();
  theory->add_flag("--paper-scale", theory_flags.paper_scale, "h_of_j without the 1/sqrt(d) factor, as plotted in the paper");

  BenchFlags bench_flags;
  auto* bench = app.add_subcommand("bench", "samples/s of the reference configurations");
  bench->add_option("--threads", bench_flags.threads, "worker threads; 0 = all cores")->capture_default_str();
  bench->add_option("--seconds", bench_flags.seconds, "seconds per configuration")->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "maskscope-cli: " << e.what() << "\n(run 'maskscope-cli " << (argc > 1 ? argv[1] : "")
              << " --help' for the flags and their ranges)\n";
    return kExitInvalid;
  }
  if (*run) return cmd_run(run_flags);
  if (*theory) return cmd_theory(theory_flags);
  if (*bench) return cmd_bench(bench_flags);
  return kExitInvalid;
}
