// maskscope-cli bench: samples/s of the reference configurations, and at large n the latency of a new
// run's first picture and of a settings change, with peak memory, and the time to refine two sweeps
// (numbers in docs/performance.md).
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "commands.hpp"
#include "core/kernel/network/gemm_reference.hpp"
#include "core/run/kernel_info.hpp"
#include "core/model/cost.hpp"
#include "core/model/strict_number.hpp"
#include "core/run/resources.hpp"
#include "core/run/runner.hpp"
#include "core/run/sweep.hpp"
#include "core/random/random_stream.hpp"
#include "core/train/trainer.hpp"

namespace maskscope::cli {

CLI::App* add_bench(CLI::App& app, BenchFlags& b) {
  auto* bench = app.add_subcommand("bench", "samples/s of the reference configurations");
  bench->add_option("--threads", b.threads_text, "worker threads [0, 256]; 0 = all cores")->capture_default_str();
  bench->add_option("--seconds", b.seconds_text, "seconds per configuration [0.01, 600]")->capture_default_str();
  bench->add_flag("--training", b.training_only, "only the training lines (tokens/s of the training engine)")
      ->disable_flag_override();
  return bench;
}

namespace {

// The window's options for a run: workers at lower priority, so the thread that builds the picture keeps
// a core, and the first block computed alone.
RunOptions window_options() {
  RunOptions window;
  window.low_priority = true;
  window.first_picture_alone = true;
  return window;
}

// Milliseconds from t0 until `run` has its first picture (a snapshot with samples).
double ms_to_first_picture(const Run& run, std::chrono::steady_clock::time_point t0) {
  while (run.snapshot()->samples_done == 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Training tokens/s (docs/performance.md, "Training"): Trainer::train_step on random ids at Zuo et al.'s shape
// (d 384, 6 layers, 6 heads, n 22, batch 64) and a small one (d 128, 6 layers, 4 heads), for `seconds` each after
// one warm-up step. tools/train_bench_torch.py times PyTorch on the same model, batch and threads beside it.
void bench_training(int threads, double seconds) {
  struct Shape {
    const char* name;
    int d, heads;
  };
  for (Shape shape :
       {Shape{"train_zuo_n22_d384_H6_L6_batch64", 384, 6}, Shape{"train_small_n22_d128_H4_L6_batch64", 128, 4}}) {
    Settings s;
    s.model = Model::random_weights;
    s.weights = WeightsMode::fixed;
    s.n = 22;
    s.d = shape.d;
    s.heads = shape.heads;
    s.layers = 6;
    s.vocab = 96;
    s.gamma = 1.0;
    s.threads = threads;
    const int batch = 64, workers = resolved_threads(s);
    train::Trainer trainer(s, train::OptimizerSettings{}, batch, workers);
    TokenBatch b;
    b.rows = batch;
    b.n = s.n;
    SampleStream rng(1, 0);
    for (int e = 0; e < batch * s.n; ++e) b.tokens.push_back(std::int32_t(rng.next() % 96));
    for (int e = 0; e < batch * s.n; ++e) b.targets.push_back(e % s.n == s.n - 1 ? -1 : b.tokens[std::size_t(e) + 1]);
    trainer.train_step(b);  // warm-up: buffers, Eigen's blockings
    const std::clock_t cpu0 = std::clock();
    const auto t0 = std::chrono::steady_clock::now();
    int steps = 0;
    double elapsed = 0;
    do {
      trainer.train_step(b);
      ++steps;
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } while (elapsed < seconds);
    // Per CPU second too: on a shared machine the wall clock counts the other processes' turns.
    const double cpu = double(std::clock() - cpu0) / CLOCKS_PER_SEC;
    std::printf("%-42s %12.1f tokens/s  (%d steps in %.2f s, %.3f s/step, %d threads; %.1f tokens per CPU-s, %s)\n",
                shape.name, double(steps) * batch * s.n / elapsed, steps, elapsed, elapsed / steps, workers,
                double(steps) * batch * s.n / cpu, training_kernel_name().c_str());
    std::fflush(stdout);
  }
}

}  // namespace

// Samples/s of the reference configurations (issue 2's two, the random-weight network at the papers'
// setting with per-sample and fixed weights, and a fixed GPT-2-small-sized one), all metrics on, beside
// the machine's GEMM reference.
int cmd_bench(BenchFlags& b) {
  std::vector<SettingError> errors;
  convert_flag(errors, "threads", [&] {
    b.threads = int(
        whole_number("threads", number_from_text("threads", b.threads_text), Limits::threads_min, Limits::threads_max));
  });
  convert_flag(errors, "seconds",
               [&] { b.seconds = real_number("seconds", number_from_text("seconds", b.seconds_text), 0.01, 600); });
  if (!errors.empty()) return report_invalid(errors);
  if (b.training_only) {
    Settings t;
    t.threads = b.threads;
    bench_training(resolved_threads(t), b.seconds);
    return 0;
  }
  struct Case {
    const char* name;
    Settings s;
  };
  Settings a;  // n 10, d 64, L 4, LN, alpha 0.5 (LN-recency)
  a.n = 10;
  a.d = 64;
  a.layers = 4;
  a.norm = Norm::layernorm;
  a.scale = Scale::sqrt_d;
  a.alpha = 0.5;
  Settings c;  // n 50, d 64, L 4, l2, gamma 1, alpha 0.2 (Behind RoPE)
  c.n = 50;
  c.d = 64;
  c.layers = 4;
  c.norm = Norm::l2;
  c.scale = Scale::one;
  c.gamma = 1.0;
  c.alpha = 0.2;
  c.unit_input = true;
  // Zuo et al.'s setting (docs/model.md section 7): L 6, d 384, H 6, n 22, MLP, mu 0, sigma 0.02.
  Settings z;
  z.model = Model::random_weights;
  z.n = 22;
  z.d = 384;
  z.heads = 6;
  z.layers = 6;
  z.gamma = 1.0;
  Settings zf = z;
  zf.weights = WeightsMode::fixed;
  // GPT-2 small's shape (d 768, H 12, L 12, n 128, MLP) with one fixed network.
  Settings g = zf;
  g.n = 128;
  g.d = 768;
  g.heads = 12;
  g.layers = 12;
  // Memory, as every subcommand checks it (resources.hpp): the largest case's run (n 512 below, or GPT-2 small's
  // network), one at a time.
  {
    Settings big = a;
    big.n = 512;
    std::uint64_t need = 0;
    for (Settings k : {a, c, z, zf, g, big}) {
      k.threads = b.threads;
      need = std::max(need, estimate_cost(k, resolved_threads(k)).memory_bytes);
    }
    if (std::string why = memory_shortfall(need); !why.empty())
      return report_invalid({{"threads", "the benchmark's largest case needs " + why + ". Use fewer threads"}});
  }
  // The machine's GEMM peak in this run, at the shape of Zuo's MLP product for one batch of samples
  // ((B n) x d by d x 4d): the reference for the random-weight lines' forward-pass GFLOP/s.
  zf.threads = b.threads;
  const int threads = resolved_threads(zf);
  const int gemm_rows = fixed_batch_samples(zf) * zf.n;
  const double peak = gemm_reference_gflops(gemm_rows, zf.d, 4 * zf.d, threads, std::min(b.seconds, 2.0));
  std::printf("GEMM reference (Eigen, single precision, (%d x %d) x (%d x %d), %d threads): %.1f GFLOP/s\n", gemm_rows,
              zf.d, zf.d, 4 * zf.d, threads, peak);
  std::fflush(stdout);
  for (Case k : {Case{"n10_d64_L4_layernorm_alpha0.5", a}, Case{"n50_d64_L4_l2_gamma1_alpha0.2", c},
                 Case{"random_weights_n22_d384_H6_L6_per_sample", z}, Case{"random_weights_n22_d384_H6_L6_fixed", zf},
                 Case{"random_weights_gpt2_small_n128_d768_H12_L12_fixed", g}}) {
    k.s.threads = b.threads;
    k.s.samples = Limits::samples_max;
    Run run(k.s);
    std::this_thread::sleep_for(std::chrono::duration<double>(b.seconds));
    run.cancel();
    run.wait();
    auto snap = run.snapshot();
    std::printf("%-42s %12.1f samples/s  (%lld samples in %.2f s, %d threads, %s kernel)", k.name, snap->samples_per_s,
                static_cast<long long>(snap->samples_done), snap->elapsed_s, resolved_threads(k.s),
                kernel_name(k.s).c_str());
    // A fixed network's forward pass in GFLOP/s, all metrics included in the time (per-sample weights
    // draw each product through its action on the rows, random_weights.cpp: no dense count applies).
    if (k.s.random_weights() && k.s.weights == WeightsMode::fixed) {
      const double gflops = snap->samples_per_s * forward_flops(k.s) / 1e9;
      std::printf(", forward pass %.1f GFLOP/s", gflops);
      if (peak > 0) std::printf(" = %.0f%% of the GEMM reference", 100.0 * gflops / peak);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  // GPT-2 small: how soon a new run's first picture exists with the window's options (drawing the
  // network, 85 M weights, and the first block), median of 3.
  {
    std::vector<double> first_ms;
    g.threads = b.threads;
    g.samples = Limits::samples_max;
    for (int rep = 0; rep < 3; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      Run run(g, window_options());
      first_ms.push_back(ms_to_first_picture(run, t0));
      run.cancel();
      run.wait();
    }
    std::sort(first_ms.begin(), first_ms.end());
    std::printf("random_weights_gpt2_small first snapshot: median %.0f ms, max %.0f ms over 3 runs\n", first_ms[1],
                first_ms[2]);
    std::fflush(stdout);
  }
  // Large n: how soon the first picture of a new run exists (a settings change in the window starts a
  // new run), and the process's peak memory while the run refines. The runs get the window's options
  // (workers at lower priority, so the thread that builds the picture keeps a core).
  for (int n : {256, 512}) {
    Settings s = a;  // d 64, L 4, LayerNorm, alpha 0.5
    s.n = n;
    s.threads = b.threads;
    s.samples = Limits::samples_max;
    std::vector<double> first_ms;
    std::int64_t samples = 0;
    double rate = 0;
    // This case's own peak: from the resident size now (what earlier cases left included).
    const bool own_peak = reset_peak_resident();
    for (int rep = 0; rep < 7; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      Run run(s, window_options());
      first_ms.push_back(ms_to_first_picture(run, t0));
      if (rep == 6) std::this_thread::sleep_for(std::chrono::duration<double>(b.seconds));
      run.cancel();
      run.wait();
      samples = run.snapshot()->samples_done;
      rate = run.snapshot()->samples_per_s;
    }
    std::sort(first_ms.begin(), first_ms.end());
    std::printf(
        "n%d_d64_L4_layernorm_alpha0.5 first snapshot: median %.1f ms, max %.1f ms over 7 runs; %.0f samples/s "
        "(%lld samples), peak memory %.0f MiB (%s)\n",
        n, first_ms[3], first_ms[6], rate, static_cast<long long>(samples), peak_resident_mib(),
        own_peak ? "this case's" : "the process's");
    std::fflush(stdout);
    // A settings change as the window makes it: the refining run is abandoned (its workers stop
    // within a layer, its picture at the next layer) and the new one starts at once, beside it.
    std::vector<double> change_ms;
    const RunOptions window = window_options();
    auto run = std::make_unique<Run>(s, window);
    std::vector<std::unique_ptr<Run>> retired;
    for (int rep = 0; rep < 7; ++rep) {
      std::this_thread::sleep_for(std::chrono::milliseconds(150 + 20 * rep));  // refining (pictures at every phase)
      s.alpha = 0.4 + 0.02 * rep;
      const auto t0 = std::chrono::steady_clock::now();
      run->abandon();
      retired.push_back(std::move(run));
      run = std::make_unique<Run>(s, window);
      change_ms.push_back(ms_to_first_picture(*run, t0));
    }
    run->abandon();
    run->wait();
    for (auto& r : retired) r->wait();
    std::sort(change_ms.begin(), change_ms.end());
    std::printf(
        "n%d_d64_L4_layernorm_alpha0.5 settings change while refining, to the new run's first snapshot: "
        "median %.1f ms, max %.1f ms over 7 changes\n",
        n, change_ms[3], change_ms[6]);
    std::fflush(stdout);
  }
  // Sweeps (issue 32): until every point of a 21-point alpha curve, and of a 21 x 21 alpha x d (4..1024, log)
  // diagram, has SE <= 0.002 on RP in every layer (n 10, L 4, LayerNorm), and until the first full picture
  // (every point with its preview or first stage).
  for (const bool diagram : {false, true}) {
    Settings s = a;  // n 10, d 64, L 4, LayerNorm
    s.threads = b.threads;
    s.samples = 10'000'000;  // the cap, far above what SE 0.002 needs
    std::vector<SweepAxis> axes{parse_sweep_axis("alpha=0:1:21")};
    if (diagram) axes.push_back(parse_sweep_axis("d=4:1024:21log"));
    SweepOptions o;
    o.target_se = 0.002;
    o.threads = b.threads;
    const auto t0 = std::chrono::steady_clock::now();
    Sweep sweep(sweep_points(s, axes, false), o);
    double first_ms = 0;
    while (!sweep.done()) {
      if (first_ms == 0) {
        const auto state = sweep.snapshot();
        if (std::all_of(state->points.begin(), state->points.end(), [](const SweepPoint& p) { return p.snapshot; }))
          first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      }
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    const double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto state = sweep.snapshot();
    std::int64_t samples = 0;
    for (const SweepPoint& p : state->points) samples += p.samples;
    if (first_ms == 0) first_ms = 1000 * total_s;
    std::printf(
        "sweep %s to SE 0.002 on RP in every layer (n 10, L 4, LayerNorm): first full picture %.0f ms, "
        "complete %.2f s (%zu points, %lld samples, %d stages, %d threads)\n",
        diagram ? "alpha x d 21 x 21 (d 4..1024 log)" : "alpha 21 points (d 64)", first_ms, total_s,
        state->points.size(), static_cast<long long>(samples), state->stages, resolved_threads(s));
    std::fflush(stdout);
  }
  bench_training(threads, b.seconds);
  return 0;
}

}  // namespace maskscope::cli
