// maskscope-cli: run the simulation, print the closed forms, or benchmark the core.
// Invalid input: a message naming each bad flag and its valid range on stderr, exit code 2.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <unistd.h>

#include "core/formats/atomic_file.hpp"
#include "core/stats/big_buffer.hpp"
#include "core/kernel/lane_kernel.hpp"
#include "core/run/partial_sums.hpp"
#include "core/run/resources.hpp"
#include "core/formats/result_json.hpp"
#include "core/run/runner.hpp"
#include "core/model/settings.hpp"
#include "core/model/strict_number.hpp"
#include "core/formats/tensor_analysis.hpp"
#include "core/model/theory.hpp"
#include "core/model/version.hpp"
#include "mpi_job.hpp"

namespace ms = maskscope;

namespace {

constexpr int kExitInvalid = 2;

// Every setting flag is read as text and converted by the core's one strict conversion
// (setting_from_text), so every bad flag is reported at once, with its valid range.
struct SettingFlag {
  const char* flag;  // as typed, without "--"
  const char* key;   // the setting's JSON / --set name
  const char* help;  // a flag of the other model family is refused (setting_family, settings.hpp)
};
constexpr SettingFlag kSettingFlags[] = {
    {"model", "model", "model family: parameter_free | random_weights (docs/model.md section 7)"},
    {"n", "n", "tokens per sequence [1, 512]"},
    {"d", "d", "hidden width [1, 65536]; random_weights [1, 4096]"},
    {"layers", "layers", "layers L [1, 16]"},
    {"alpha", "alpha", "input anisotropy [0, 1]"},
    {"norm", "norm", "none | l2 | layernorm | rmsnorm"},
    {"scale", "scale", "score scale: one | sqrt_d (1/sqrt(d)) | d (1/d)"},
    {"gamma", "gamma", "residual strength [0, 1] (random_weights: default 1)"},
    {"rope", "rope", "RoPE base theta; 0 = off, else [1, 1e9]"},
    {"rope-scramble", "rope_scramble", "RoPE's frequency bands permuted over the dimensions by this seed; 0 = off "
                                       "(Ruscio et al.'s scrambled RoPE)"},
    {"mask", "mask", "causal | bidirectional | window:W"},
    {"unit-input", "unit_input", "rescale inputs to unit norm (0 | 1)"},
    {"heads", "heads", "attention heads H [1, 64]; d divisible by H"},
    {"vocab", "vocab", "vocabulary size V [1, 1e9]"},
    {"mlp", "mlp", "GELU MLP of width 4d in every block (0 | 1)"},
    {"init-mean", "init_mean", "mean of every initial weight [-100, 100]"},
    {"init-std", "init_std", "std of the initial weights [0, 100]; W_O, W_2 get std / sqrt(2 L)"},
    {"embed-std", "embed_std", "std of the embedding table [0, 100] (default: init-std)"},
    {"weights", "weights", "per_sample (a new network every sample) | fixed (one network from --weight-seed)"},
    {"weight-seed", "weight_seed", "seed of the fixed network [0, 2^64 - 1]"},
    {"samples", "samples", "Monte Carlo samples [1, 1e12]"},
    {"seed", "seed", "random seed [0, 2^64 - 1]"},
    {"threads", "threads", "worker threads [0, 256]; 0 = all cores"},
};

constexpr std::int64_t kSaveTensorsMax = 10000;

struct RunFlags {
  ms::Settings s;
  std::map<std::string, std::string> text;  // flag -> value as typed (only the flags given)
  std::string out;
  bool quiet = false;
  std::string save_tensors;                 // --save-tensors DIR
  std::string shard_text;                   // --shard K/N as typed
  std::int64_t shard_k = 1, shard_n = 1;
};

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}
bool sums_output(const RunFlags& f) { return ends_with(f.out, ms::kPartialSumsExtension); }

// --shard K/N: strictly two decimal integers; the ranges are checked against the run's grid.
std::string parse_shard(RunFlags& f) {
  const std::string& t = f.shard_text;
  const auto slash = t.find('/');
  auto whole = [](const std::string& x, std::int64_t& v) {
    if (x.empty() || x.size() > 15 || x.find_first_not_of("0123456789") != std::string::npos) return false;
    v = std::stoll(x);
    return true;
  };
  if (slash == std::string::npos || !whole(t.substr(0, slash), f.shard_k) || !whole(t.substr(slash + 1), f.shard_n))
    return "'" + t + "' is not K/N (shard K of N, 1 <= K <= N, e.g. 2/8)";
  if (std::string why = ms::shard_error(ms::sample_grid(f.s), f.shard_k, f.shard_n); !why.empty()) return why;
  if (!sums_output(f))
    return "a shard is part of a run: write it with --out FILE" + std::string(ms::kPartialSumsExtension) +
           " and merge the parts with 'maskscope-cli merge'";
  return "";
}

void add_setting_flags(CLI::App& cmd, RunFlags& f) {
  const nlohmann::json defaults = ms::settings_to_json(ms::Settings{});
  for (const SettingFlag& sf : kSettingFlags) {
    const nlohmann::json& d = defaults.at(sf.key);
    const std::string shown = d.is_string() ? d.get<std::string>() : d.is_boolean() ? (d.get<bool>() ? "1" : "0") : d.dump();
    const std::string help = d.is_null() ? sf.help : std::string(sf.help) + " (default " + shown + ")";
    cmd.add_option(std::string("--") + sf.flag, f.text[sf.flag], help)->allow_extra_args(false);
  }
}

// Runs `assign` (a strict conversion of one flag's text); a failure becomes that flag's error,
// without the setting's name (`key`, the flag's by default) repeated at the front of the message.
template <class Assign>
void convert_flag(std::vector<ms::SettingError>& errors, const char* flag, Assign&& assign, const char* key = nullptr) {
  try {
    assign();
  } catch (const std::exception& e) {
    const std::string m = e.what(), prefix = std::string(key ? key : flag) + ": ";
    errors.push_back({flag, m.rfind(prefix, 0) == 0 ? m.substr(prefix.size()) : m});
  }
}

// Converts every given flag; returns every problem, each naming its flag and the valid range.
std::vector<ms::SettingError> finish_settings(RunFlags& f, const CLI::App& cmd) {
  std::vector<ms::SettingError> errors;
  for (const SettingFlag& sf : kSettingFlags) {
    if (cmd.count(std::string("--") + sf.flag) == 0) continue;
    convert_flag(errors, sf.flag, [&] { ms::setting_from_text(sf.key, f.text[sf.flag], f.s); }, sf.key);
  }
  // A flag of the other family would be silently ignored: refuse it instead.
  for (const SettingFlag& sf : kSettingFlags) {
    const std::optional<ms::Model> family = ms::setting_family(sf.key);
    if (family && *family != f.s.model && cmd.count(std::string("--") + sf.flag) > 0)
      errors.push_back({sf.flag, std::string("applies to --model ") + std::string(ms::to_string(*family)) +
                                     " only (this run is --model " + std::string(ms::to_string(f.s.model)) + ")"});
  }
  // The random-weight family's residual strength defaults to 1 (a GPT-2 block), docs/model.md section 7.
  if (f.s.random_weights() && cmd.count("--gamma") == 0) f.s.gamma = 1.0;
  for (auto& e : ms::validate(f.s)) {
    for (char& c : e.setting)
      if (c == '_') c = '-';  // the flag's spelling: unit_input -> --unit-input
    errors.push_back(std::move(e));
  }
  if (cmd.get_option_no_throw("--save-tensors") != nullptr && cmd.count("--save-tensors") > 0) {
    if (f.s.samples > kSaveTensorsMax)
      errors.push_back({"save-tensors", "writes every sample's tensors: use --samples <= " + std::to_string(kSaveTensorsMax) +
                                            " (this run has " + std::to_string(f.s.samples) + ")"});
    if (cmd.count("--shard") > 0) errors.push_back({"save-tensors", "cannot be combined with --shard"});
  }
  if (cmd.get_option_no_throw("--shard") != nullptr && cmd.count("--shard") > 0 && errors.empty())
    if (std::string why = parse_shard(f); !why.empty()) errors.push_back({"shard", why});
  // The destination is checked before computing: a run of hours must not end in "cannot write".
  if (cmd.count("--out")) {
    if (f.out.rfind("--", 0) == 0) errors.push_back({"out", "needs a file name, got the flag '" + f.out + "'"});
    else if (std::string why = ms::check_output_path(f.out); !why.empty()) errors.push_back({"out", why});
  }
  return errors;
}

// The result to --out (through a temporary file and a rename) or to standard output; exit code.
int emit(const RunFlags& f, const std::string& text) {
  if (f.out.empty()) {
    std::cout << text;
  } else if (std::string error; !ms::write_file_atomic(f.out, text, error)) {
    std::cerr << "maskscope-cli: " << error << "\n";
    return 1;
  }
  return 0;
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

int cmd_run(RunFlags& f, const CLI::App& cmd, const ms::cli::MpiSession& mpi) {
  auto errors = finish_settings(f, cmd);
  if (!errors.empty()) return mpi.rank() == 0 ? report_invalid(errors) : kExitInvalid;
  // Memory: refuse, or use fewer threads, before allocating anything (resources.hpp).
  const std::uint64_t available = ms::available_memory_bytes();
  if (available > 0) {
    const int wanted = ms::resolved_threads(f.s);
    int threads = wanted;
    while (threads > 1 && ms::estimate_cost(f.s, threads).memory_bytes > available * 8 / 10) --threads;
    const ms::RunCost cost = ms::estimate_cost(f.s, threads);
    if (cost.memory_bytes > available * 8 / 10) {
      const bool net = ms::network_bytes(f.s) > 0;
      errors.push_back({"n", "n = " + std::to_string(f.s.n) + ", layers = " + std::to_string(f.s.layers) +
                                 (net ? ", d = " + std::to_string(f.s.d) + ", vocab = " + std::to_string(f.s.vocab) : "") +
                                 " needs about " + ms::bytes_text(cost.memory_bytes) + " even with 1 thread; this machine has " +
                                 ms::bytes_text(available) + " available. Lower " + (net ? "d, vocab, " : "") + "n or layers."});
      return report_invalid(errors);
    }
    if (threads < wanted) {
      std::cerr << "maskscope-cli: " << wanted << " threads would need about "
                << ms::bytes_text(ms::estimate_cost(f.s, wanted).memory_bytes) << " (" << ms::bytes_text(available)
                << " available); using " << threads << " threads (same numbers, any thread count)\n";
      f.s.threads = threads;
    }
    if (!f.out.empty() && cost.json_bytes > (std::uint64_t(100) << 20) && !f.quiet)
      std::cerr << "maskscope-cli: the result will be about " << ms::bytes_text(cost.json_bytes) << " of JSON\n";
  }
  const ms::SampleGrid grid = ms::sample_grid(f.s);
  const ms::SegmentRange range = ms::shard_segments(grid, f.shard_k, f.shard_n);
  const std::int64_t range_samples = grid.first_sample(range.end) - grid.first_sample(range.begin);
  const bool tty = isatty(STDERR_FILENO);
  auto last_line = std::chrono::steady_clock::now();
  auto progress_line = [&](std::int64_t done, double rate) {
    if (f.quiet) return;
    const auto now = std::chrono::steady_clock::now();
    if (!tty && now - last_line < std::chrono::seconds(2)) return;
    last_line = now;
    const double eta = rate > 0 ? double(range_samples - done) / rate : NAN;
    std::fprintf(stderr, "%s%lld / %lld samples  %.0f samples/s  ETA %s%s", tty ? "\r" : "", static_cast<long long>(done),
                 static_cast<long long>(range_samples), rate, format_eta(eta).c_str(), tty ? "   " : "\n");
  };
  ms::PartialSums sums;
  sums.settings = f.s;
  sums.segments = range;
  sums.first_sample = grid.first_sample(range.begin);
  sums.end_sample = grid.first_sample(range.end);
  sums.version = ms::kVersion;
  // --save-tensors keeps the per-sample kernel, whose helpers analyze shares: it repeats the sums bit for bit.
  const auto kernel = f.save_tensors.empty() ? ms::Simulator::Kernel::automatic : ms::Simulator::Kernel::per_sample;
  sums.kernel = ms::kernel_name(f.s, kernel);
  std::shared_ptr<const ms::Snapshot> snap;
  int ranks = 1;
  if (mpi.active()) {
    ranks = mpi.size();
    double seconds = 0;
    ms::cli::mpi_run(mpi, f.s, range, sums.exact, seconds, [&](const ms::cli::MpiProgress& p) {
      progress_line(p.samples_done, p.seconds > 0 ? double(p.samples_done) / p.seconds : 0.0);
    });
    if (mpi.rank() != 0) return 0;  // rank 0 writes the result
    sums.elapsed_s = seconds;
    auto merged = std::make_shared<ms::Snapshot>(ms::snapshot_of(sums));
    merged->finished = sums.exact.count() == range_samples;
    snap = merged;
  } else {
    ms::RunOptions o;
    o.segments = range;
    o.kernel = kernel;
    // Snapshots only feed the progress line (every 100 ms): the window's 40 per second would cost the
    // workers 5-8% at n 50 (the numbers do not depend on it).
    o.publish_interval = std::chrono::milliseconds(100);
    ms::Run run(f.s, o);
    while (!run.done()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (!f.quiet) progress_line(run.samples_done(), run.snapshot()->samples_per_s);
    }
    snap = run.snapshot();
    if (sums_output(f)) sums.exact = run.exact();  // only a .msum needs them (150 MB at n 512, L 4)
    sums.elapsed_s = snap->elapsed_s;
  }
  if (!f.quiet)
    std::fprintf(stderr, "%sdone: %lld samples in %.2f s (%.0f samples/s, %d threads%s)\n", tty ? "\r" : "",
                 static_cast<long long>(snap->samples_done), snap->elapsed_s, snap->samples_per_s, ms::resolved_threads(f.s),
                 ranks > 1 ? (" on each of " + std::to_string(ranks) + " MPI ranks").c_str() : "");
  if (!f.save_tensors.empty()) {  // the raw per-sample tensors of this run, for `analyze` (round trip)
    ms::Simulator sim(f.s, false, kernel);
    std::vector<ms::SampleTrace> traces;
    if (f.s.random_weights())
      for (std::int64_t k = 0; k < f.s.samples; ++k) traces.push_back(sim.trace_sample(std::uint64_t(k)));
    else
      traces = sim.trace_block(0, f.s.samples);
    std::string error;
    if (!ms::save_tensors(f.save_tensors, f.s, traces, error)) {
      std::cerr << "maskscope-cli: --save-tensors: " << error << "\n";
      return 1;
    }
  }
  if (sums_output(f)) {
    std::string error;
    if (!ms::write_partial_sums(f.out, sums, error)) {
      std::cerr << "maskscope-cli: " << error << "\n";
      return 1;
    }
    return 0;
  }
  nlohmann::json j = ms::snapshot_to_json(*snap);
  j["maskscope_version"] = ms::kVersion;
  j["kernel"] = sums.kernel;
  j["threads_used"] = ms::resolved_threads(f.s);
  if (ranks > 1) j["mpi_ranks"] = ranks;
  const std::string text = j.dump(1) + "\n";
  return emit(f, text);
}

// ---- analyze: a real model's tensors ----

struct AnalyzeFlags {
  std::string folder, out, layers;
  bool quiet = false;
};

int cmd_analyze(AnalyzeFlags& a) {
  if (!a.out.empty())
    if (std::string why = ms::check_output_path(a.out); !why.empty()) return report_invalid({{"out", why}});
  ms::TensorSet t;
  try {
    t = ms::open_tensors(a.folder);
  } catch (const std::exception& e) {
    std::cerr << "maskscope-cli: analyze refused: " << e.what() << "\n";
    return kExitInvalid;
  }
  if (!a.layers.empty())
    if (std::string why = ms::select_layers(t, a.layers); !why.empty()) return report_invalid({{"layers", why}});
  const std::uint64_t need = ms::tensor_analysis_bytes(t), available = ms::available_memory_bytes();
  if (available > 0 && need > available * 8 / 10) {
    std::cerr << "maskscope-cli: analyze refused: " << t.L << " layers x " << t.H << " heads at T = " << t.T << " need about "
              << ms::bytes_text(need) << "; " << ms::bytes_text(available)
              << " available. Analyse fewer layers (--layers) or export shorter prompts.\n";
    return kExitInvalid;
  }
  const auto t0 = std::chrono::steady_clock::now();
  ms::Snapshot snap = ms::analyze_tensors(t);
  snap.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  nlohmann::json j = ms::snapshot_to_json(snap);
  j["config"] = {{"source", "tensors"}, {"folder", a.folder}, {"model", t.model}, {"mask", ms::mask_to_string(ms::tensor_settings(t))},
                 {"prompts", t.P}, {"layers", t.L}, {"analysed_layers", t.analysed_layers()}, {"heads", t.H}, {"n", t.T},
                 {"d", t.d > 0 ? nlohmann::json(t.d) : nlohmann::json(nullptr)},
                 {"weights", t.weights ? "given" : "softmax of the logits"}};
  j["maskscope_version"] = ms::kVersion;
  if (!a.quiet)
    std::fprintf(stderr, "analyze: %d prompts, %d of %d layers x %d heads, T = %d in %.2f s\n", t.P, t.analysed_layers(), t.L, t.H,
                 t.T, snap.elapsed_s);
  RunFlags f;
  f.out = a.out;
  return emit(f, j.dump(1) + "\n");
}

// ---- merge: shards (.msum) into one result ----

struct MergeFlags {
  std::vector<std::string> files;
  std::string out;
};

int cmd_merge(MergeFlags& m) {
  const bool to_sums = ends_with(m.out, ms::kPartialSumsExtension);
  if (!m.out.empty())
    if (std::string why = ms::check_output_path(m.out); !why.empty()) return report_invalid({{"out", why}});
  ms::PartialSums merged;
  try {
    // A merged .msum may cover a contiguous part of the run (merge in stages); a result needs all of it.
    merged = ms::merge_partial_sums_files(m.files, !to_sums);
  } catch (const std::exception& e) {
    std::cerr << "maskscope-cli: merge refused: " << e.what() << "\n";
    return kExitInvalid;
  }
  std::string error;
  if (to_sums) {
    if (!ms::write_partial_sums(m.out, merged, error)) {
      std::cerr << "maskscope-cli: " << error << "\n";
      return 1;
    }
    return 0;
  }
  nlohmann::json j = ms::snapshot_to_json(ms::snapshot_of(merged));
  j["maskscope_version"] = ms::kVersion;
  j["kernel"] = merged.kernel;
  j["merged_files"] = m.files.size();
  RunFlags f;
  f.out = m.out;
  return emit(f, j.dump(1) + "\n");
}

// ---- leakage: Ruscio et al.'s Table 6 in miniature ----

struct Ablation {
  const char* name;   // JSON key
  const char* title;  // table header
  ms::Settings s;
  bool applies = true;
  std::shared_ptr<const ms::Snapshot> snap = nullptr;
};

double ratio(double a, double b) { return std::isfinite(a) && std::isfinite(b) && b > 0 ? a / b : NAN; }
// A ratio to the baseline means something only when the baseline's dR^2 stands out of its noise.
double ratio_to(double a, const ms::Leakage& base) {
  return base.delta_r2 > 3 * base.delta_r2_se ? ratio(a, base.delta_r2) : NAN;
}
double ratio_se(double a, double sa, double b, double sb) {  // delta method, pairing ignored (conservative)
  const double r = ratio(a, b);
  if (!std::isfinite(r) || a <= 0) return NAN;
  return r * std::sqrt((sa / a) * (sa / a) + (sb / b) * (sb / b));
}

nlohmann::json or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

int cmd_leakage(RunFlags& f, const CLI::App& cmd, bool table) {
  auto errors = finish_settings(f, cmd);
  if (f.s.mask != ms::MaskKind::causal)
    errors.push_back({"mask", "the leakage table compares the causal mask with its bidirectional ablation; use --mask causal"});
  if (!errors.empty()) return report_invalid(errors);
  // Ablations on the same random draws (same seed): each differs from the baseline in one thing (004 Sec. 4).
  std::vector<Ablation> rows = {{"baseline", "baseline", f.s}, {"identity_rope", "identity RoPE", f.s},
                                {"scrambled_rope", "scrambled RoPE", f.s}, {"bidirectional", "bidirectional", f.s}};
  rows[1].s.rope_base = 0;
  rows[1].s.rope_scramble = 0;
  rows[2].s.rope_scramble = f.s.rope_scramble != 0 ? f.s.rope_scramble : 1;
  rows[3].s.mask = ms::MaskKind::bidirectional;
  if (!f.s.rope()) rows[1].applies = rows[2].applies = false;  // nothing to remove or scramble
  if (f.s.rope_scramble != 0) rows[2].applies = false;           // the baseline is already scrambled
  for (Ablation& a : rows) {
    if (!a.applies) continue;
    if (!f.quiet) std::cerr << "maskscope-cli: leakage: " << a.title << " (" << f.s.samples << " samples)\n";
    a.snap = ms::run_to_completion(a.s);
  }
  const auto& base = *rows[0].snap;
  nlohmann::json ablations = nlohmann::json::array(), layers = nlohmann::json::array();
  for (const Ablation& a : rows) {
    nlohmann::json entry = {{"name", a.name}, {"applies", a.applies}, {"config", ms::settings_to_json(a.s)}};
    if (a.snap) {
      nlohmann::json ls = nlohmann::json::array();
      for (const auto& l : a.snap->layers) {
        nlohmann::json bins = nlohmann::json::array();
        for (const auto& b : l.leakage.bins) bins.push_back({{"from", b.from}, {"to", b.to}, {"delta_r2", or_null(b.delta_r2)}});
        ls.push_back({{"layer", l.layer}, {"delta_r2", or_null(l.leakage.delta_r2)}, {"delta_r2_se", or_null(l.leakage.delta_r2_se)},
                      {"delta_r2_mean_map", or_null(l.leakage.delta_r2_mean_map)}, {"r2_base", or_null(l.leakage.r2_base)},
                      {"weight_delta_r2", or_null(l.weight_leakage.delta_r2)}, {"delta_r2_bins", bins}});
      }
      entry["layers"] = std::move(ls);
    }
    ablations.push_back(std::move(entry));
  }
  auto cell = [&](const Ablation& a, std::size_t l) -> const ms::Leakage* {
    return a.snap && l < a.snap->layers.size() ? &a.snap->layers[l].leakage : nullptr;
  };
  for (std::size_t l = 0; l < base.layers.size(); ++l) {
    const ms::Leakage& b = *cell(rows[0], l);
    nlohmann::json row = {{"layer", int(l) + 1}};
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const ms::Leakage* c = cell(rows[k], l);
      row[rows[k].name] = c ? nlohmann::json{{"delta_r2", or_null(c->delta_r2)}, {"delta_r2_se", or_null(c->delta_r2_se)}}
                            : nlohmann::json(nullptr);
      if (k > 0)
        row[std::string(rows[k].name) + "_ratio"] =
            c ? nlohmann::json{{"value", or_null(ratio_to(c->delta_r2, b))},
                               {"se", or_null(ratio_se(c->delta_r2, c->delta_r2_se, b.delta_r2, b.delta_r2_se))}}
              : nlohmann::json(nullptr);
    }
    const ms::Leakage& bi = *cell(rows[3], l);
    row["causal_mask_share"] = or_null(1.0 - ratio_to(bi.delta_r2, b));  // Ruscio Eq. 5
    layers.push_back(std::move(row));
  }
  nlohmann::json out = {{"source", "Ruscio et al. (004), Table 6 and Eq. 5; docs/model.md section 8"},
                        {"config", ms::settings_to_json(f.s)},
                        {"samples", base.samples_done},
                        {"ablations", std::move(ablations)},
                        {"layers", std::move(layers)},
                        {"maskscope_version", ms::kVersion}};
  std::string text = out.dump(1) + "\n";
  if (table) {
    char buf[256];
    std::string t = "Absolute-position leakage dR^2 of the logits (Ruscio et al. Table 6), " + ms::short_label(f.s) +
                    ", n " + std::to_string(f.s.n) + ", d " + std::to_string(f.s.d) + ", " + std::to_string(base.samples_done) +
                    " samples, seed " + std::to_string(f.s.seed) + "\n";
    std::snprintf(buf, sizeof buf, "%-6s %-22s %-22s %-22s %-22s %9s %9s %9s %10s\n", "layer", "baseline", "identity RoPE",
                  "scrambled RoPE", "bidirectional", "id/base", "scr/base", "bi/base", "mask share");
    t += buf;
    auto pm = [](const ms::Leakage* c) {
      char b[64];
      if (!c || !std::isfinite(c->delta_r2)) return std::string("n/a");
      std::snprintf(b, sizeof b, "%.3g \u00b1 %.2g", c->delta_r2, c->delta_r2_se);
      return std::string(b);
    };
    auto rt = [](double v) {
      char b[32];
      if (!std::isfinite(v)) return std::string("n/a");
      std::snprintf(b, sizeof b, "%.3g", v);
      return std::string(b);
    };
    for (std::size_t l = 0; l < base.layers.size(); ++l) {
      const ms::Leakage& b = *cell(rows[0], l);
      auto r = [&](std::size_t k) { const ms::Leakage* c = cell(rows[k], l); return rt(c ? ratio_to(c->delta_r2, b) : NAN); };
      const ms::Leakage* bi = cell(rows[3], l);
      std::snprintf(buf, sizeof buf, "%-6zu %-22s %-22s %-22s %-22s %9s %9s %9s %10s\n", l + 1, pm(&b).c_str(),
                    pm(cell(rows[1], l)).c_str(), pm(cell(rows[2], l)).c_str(), pm(bi).c_str(), r(1).c_str(), r(2).c_str(),
                    r(3).c_str(), rt(1.0 - ratio_to(bi->delta_r2, b)).c_str());
      t += buf;
    }
    if (!f.s.rope()) t += "(identity / scrambled RoPE: n/a, the baseline has no RoPE; add --rope 10000)\n";
    t += "mask share = 1 - dR^2_bidirectional / dR^2_causal (Ruscio Eq. 5); \u00b1 one standard error; ratios only where "
         "the baseline's dR^2 exceeds 3 SE\n";
    text = t;
  }
  return emit(f, text);
}

struct TheoryFlags {
  std::string kind;
  std::string n_text = "10", d_text = "64", alpha_text = "0", gamma_text = "0";
  int n = 10;
  int d = 64;
  double alpha = 0.0;
  double gamma = 0.0;
  bool paper_scale = false;
};

int cmd_theory(TheoryFlags& t) {
  std::vector<ms::SettingError> errors;
  if (t.kind != "h_of_j" && t.kind != "behind_rope_layer2" && t.kind != "ln_recency_s2")
    errors.push_back({"kind", "'" + t.kind + "' is not a closed form; valid: h_of_j, behind_rope_layer2, ln_recency_s2"});
  // The same strict conversion as every other number (strict_number.hpp).
  auto convert = [&](const char* flag, auto&& assign) { convert_flag(errors, flag, assign); };
  convert("n", [&] { t.n = int(ms::whole_number("n", ms::number_from_text("n", t.n_text), ms::Limits::n_min, ms::Limits::n_max)); });
  convert("d", [&] { t.d = int(ms::whole_number("d", ms::number_from_text("d", t.d_text), ms::Limits::d_min, ms::Limits::d_max)); });
  convert("alpha", [&] { t.alpha = ms::real_number("alpha", ms::number_from_text("alpha", t.alpha_text), 0, 1); });
  convert("gamma", [&] { t.gamma = ms::real_number("gamma", ms::number_from_text("gamma", t.gamma_text), 0, 1); });
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
  std::string threads_text = "0", seconds_text = "3";
  int threads = 0;
  double seconds = 3.0;
};

// Samples/s of the reference configurations (issue 2's two, and the random-weight network at the
// papers' setting with per-sample and fixed weights), all metrics on.
int cmd_bench(BenchFlags& b) {
  std::vector<ms::SettingError> errors;
  convert_flag(errors, "threads", [&] {
    b.threads = int(ms::whole_number("threads", ms::number_from_text("threads", b.threads_text), ms::Limits::threads_min,
                                     ms::Limits::threads_max));
  });
  convert_flag(errors, "seconds", [&] {
    b.seconds = ms::real_number("seconds", ms::number_from_text("seconds", b.seconds_text), 0.01, 600);
  });
  if (!errors.empty()) return report_invalid(errors);
  struct Case {
    const char* name;
    ms::Settings s;
  };
  ms::Settings a;  // n 10, d 64, L 4, LN, alpha 0.5 (LN-recency)
  a.n = 10; a.d = 64; a.layers = 4; a.norm = ms::Norm::layernorm; a.scale = ms::Scale::sqrt_d; a.alpha = 0.5;
  ms::Settings c;  // n 50, d 64, L 4, l2, gamma 1, alpha 0.2 (Behind RoPE)
  c.n = 50; c.d = 64; c.layers = 4; c.norm = ms::Norm::l2; c.scale = ms::Scale::one; c.gamma = 1.0;
  c.alpha = 0.2; c.unit_input = true;
  // Zuo et al.'s setting (docs/model.md section 7): L 6, d 384, H 6, n 22, MLP, mu 0, sigma 0.02.
  ms::Settings z;
  z.model = ms::Model::random_weights;
  z.n = 22; z.d = 384; z.heads = 6; z.layers = 6; z.gamma = 1.0;
  ms::Settings zf = z;
  zf.weights = ms::WeightsMode::fixed;
  for (Case k : {Case{"n10_d64_L4_layernorm_alpha0.5", a}, Case{"n50_d64_L4_l2_gamma1_alpha0.2", c},
                 Case{"random_weights_n22_d384_H6_L6_per_sample", z}, Case{"random_weights_n22_d384_H6_L6_fixed", zf}}) {
    k.s.threads = b.threads;
    k.s.samples = ms::Limits::samples_max;
    ms::Run run(k.s);
    std::this_thread::sleep_for(std::chrono::duration<double>(b.seconds));
    run.cancel();
    run.wait();
    auto snap = run.snapshot();
    std::printf("%-42s %12.0f samples/s  (%lld samples in %.2f s, %d threads, %s kernel)\n", k.name, snap->samples_per_s,
                static_cast<long long>(snap->samples_done), snap->elapsed_s, ms::resolved_threads(k.s),
                ms::kernel_name(k.s).c_str());
    std::fflush(stdout);
  }
  // Large n: how soon the first picture of a new run exists (a settings change in the window starts a
  // new run), and the process's peak memory while the run refines. The runs get the window's options
  // (workers at lower priority, so the thread that builds the picture keeps a core).
  for (int n : {256, 512}) {
    ms::Settings s = a;  // d 64, L 4, LayerNorm, alpha 0.5
    s.n = n;
    s.threads = b.threads;
    s.samples = ms::Limits::samples_max;
    std::vector<double> first_ms;
    std::int64_t samples = 0;
    double rate = 0;
    // This case's own peak: from the resident size now (what earlier cases left included).
    const bool own_peak = ms::reset_peak_resident();
    for (int rep = 0; rep < 7; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      ms::RunOptions window;
      window.low_priority = true;
      window.first_picture_alone = true;
      ms::Run run(s, window);
      while (run.snapshot()->samples_done == 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
      first_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      if (rep == 6) std::this_thread::sleep_for(std::chrono::duration<double>(b.seconds));
      run.cancel();
      run.wait();
      samples = run.snapshot()->samples_done;
      rate = run.snapshot()->samples_per_s;
    }
    std::sort(first_ms.begin(), first_ms.end());
    std::printf("n%d_d64_L4_layernorm_alpha0.5 first snapshot: median %.1f ms, max %.1f ms over 7 runs; %.0f samples/s "
                "(%lld samples), peak memory %.0f MiB (%s)\n",
                n, first_ms[3], first_ms[6], rate, static_cast<long long>(samples), ms::peak_resident_mib(),
                own_peak ? "this case's" : "the process's");
    std::fflush(stdout);
    // A settings change as the window makes it: the refining run is abandoned (its workers stop
    // within a layer, its picture at the next layer) and the new one starts at once, beside it.
    std::vector<double> change_ms;
    ms::RunOptions window;
    window.low_priority = true;
    window.first_picture_alone = true;
    auto run = std::make_unique<ms::Run>(s, window);
    std::vector<std::unique_ptr<ms::Run>> retired;
    for (int rep = 0; rep < 7; ++rep) {
      std::this_thread::sleep_for(std::chrono::milliseconds(150 + 20 * rep));  // refining (pictures at every phase)
      s.alpha = 0.4 + 0.02 * rep;
      const auto t0 = std::chrono::steady_clock::now();
      run->abandon();
      retired.push_back(std::move(run));
      run = std::make_unique<ms::Run>(s, window);
      while (run->snapshot()->samples_done == 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
      change_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    run->abandon();
    run->wait();
    for (auto& r : retired) r->wait();
    std::sort(change_ms.begin(), change_ms.end());
    std::printf("n%d_d64_L4_layernorm_alpha0.5 settings change while refining, to the new run's first snapshot: "
                "median %.1f ms, max %.1f ms over 7 changes\n",
                n, change_ms[3], change_ms[6]);
    std::fflush(stdout);
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ms::return_large_blocks_to_system();
  CLI::App app{"maskscope-cli: positional information from the causal mask, simulated"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(ms::kVersion));

  RunFlags run_flags;
  auto* run = app.add_subcommand("run", "run the Monte Carlo simulation and write the JSON result");
  add_setting_flags(*run, run_flags);
  run->add_option("--out", run_flags.out, "output JSON file (default: standard output)");
  run->add_flag("--quiet", run_flags.quiet, "no progress line on stderr")->disable_flag_override();
  run->add_option("--shard", run_flags.shard_text,
                  "compute shard K of N (1 <= K <= N) and write its partial sums to --out FILE.msum; "
                  "'maskscope-cli merge' adds the shards up to the run's exact result")
      ->allow_extra_args(false);

  run->add_option("--save-tensors", run_flags.save_tensors,
                  "also write every sample's logits, weights and hidden states to this folder (NumPy, manifest.json) "
                  "for 'maskscope-cli analyze'; --samples <= 10000")
      ->allow_extra_args(false);

  AnalyzeFlags analyze_flags;
  auto* analyze = app.add_subcommand("analyze", "the simulation's metrics on a real model's exported tensors "
                                                "(a folder with manifest.json and .npy arrays; docs/tensors.md)");
  analyze->add_option("folder", analyze_flags.folder, "the tensor folder")->required();
  analyze->add_option("--out", analyze_flags.out, "result JSON (default: standard output)");
  analyze->add_flag("--quiet", analyze_flags.quiet, "no summary on stderr")->disable_flag_override();
  analyze->add_option("--layers", analyze_flags.layers,
                      "analyse only these layers, e.g. 1,2,30-32 (default: all); a big model's memory grows with the layers")
      ->allow_extra_args(false);

  MergeFlags merge_flags;
  auto* merge = app.add_subcommand("merge", "add shards' partial sums (.msum) into the run's result: the same bits as one run");
  merge->add_option("files", merge_flags.files, "the shards' .msum files, in any order")->required();
  merge->add_option("--out", merge_flags.out,
                    "result JSON (default: standard output), or FILE.msum for merged partial sums (may cover part of the run)");

  RunFlags leakage_flags;
  bool leakage_table = false;
  auto* leakage = app.add_subcommand("leakage", "absolute-position leakage dR^2: the baseline and its identity-RoPE, "
                                                "scrambled-RoPE and bidirectional ablations (Ruscio et al. Table 6)");
  add_setting_flags(*leakage, leakage_flags);
  leakage->add_option("--out", leakage_flags.out, "output file (default: standard output)");
  leakage->add_flag("--quiet", leakage_flags.quiet, "no progress on stderr")->disable_flag_override();
  leakage->add_flag("--table", leakage_table, "a readable table instead of JSON")->disable_flag_override();

  TheoryFlags theory_flags;
  auto* theory = app.add_subcommand("theory", "print a closed form of the papers as JSON");
  theory->add_option("--kind", theory_flags.kind, "h_of_j | behind_rope_layer2 | ln_recency_s2")->required();
  theory->add_option("--n", theory_flags.n_text, "positions 1..n [1, 512]")->capture_default_str();
  theory->add_option("--d", theory_flags.d_text, "hidden width [1, 65536]")->capture_default_str();
  theory->add_option("--alpha", theory_flags.alpha_text, "anisotropy [0, 1]")->capture_default_str();
  theory->add_option("--gamma", theory_flags.gamma_text, "residual strength [0, 1]")->capture_default_str();
  theory->add_flag("--paper-scale", theory_flags.paper_scale, "h_of_j without the 1/sqrt(d) factor, as plotted in the paper")
      ->disable_flag_override();

  BenchFlags bench_flags;
  auto* bench = app.add_subcommand("bench", "samples/s of the reference configurations");
  bench->add_option("--threads", bench_flags.threads_text, "worker threads [0, 256]; 0 = all cores")->capture_default_str();
  bench->add_option("--seconds", bench_flags.seconds_text, "seconds per configuration [0.01, 600]")->capture_default_str();

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
  // Under mpirun every rank parses the same arguments; only rank 0 prints and writes.
  ms::cli::MpiSession mpi;
  try {
    if (*run) return cmd_run(run_flags, *run, mpi);
    if (*merge) return cmd_merge(merge_flags);
    if (*analyze) return cmd_analyze(analyze_flags);
    if (*leakage) return cmd_leakage(leakage_flags, *leakage, leakage_table);
  } catch (const std::bad_alloc&) {
    std::cerr << "maskscope-cli: out of memory; lower n, layers or threads\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "maskscope-cli: " << e.what() << "\n";
    if (mpi.size() > 1) mpi.abort(1);
    return 1;
  }
  if (*theory) return cmd_theory(theory_flags);
  if (*bench) return cmd_bench(bench_flags);
  return kExitInvalid;
}
