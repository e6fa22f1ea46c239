// The window's command line: settings (--set, --samples, --preset), view, size, and the
// headless actions (--screenshot with its trigger, --export-figure, --exit-when-done, --ui-bench).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/figure/figure.hpp"
#include "common/view_options.hpp"
#include "common/lesson/lesson.hpp"

namespace maskscope::gui {

struct AppOptions {
  Settings settings;
  bool samples_given = false;  // --samples or --set samples=: no auto sample count
  ViewOptions view;
  std::optional<Preset> preset;
  std::string export_dir;
  std::optional<double> export_scale;
  std::optional<int> export_width;
  int width = 1280, height = 800;
  std::string screenshot;
  std::int64_t screenshot_at_samples = 0;  // > 0: take the screenshot once the live run has this many
  double screenshot_at_se = 0;             // > 0: ... once the largest SE on screen is at most this
  bool exit_when_done = false;
  int ui_bench = 0;                         // restarts to drive for the frame-time benchmark
  std::optional<Lesson> lesson;             // --lesson NAME|FILE: start it
  int lesson_step = 1;                      // --step K (1-based)
  bool present = false;                     // --present: presentation mode
  std::string slides_dir;                   // --export-slides DIR: one PNG per step and slides.md
  std::optional<std::int64_t> samples_cap;  // --samples with a lesson: caps every step
  std::string tensors_dir;                  // --open DIR: a real model's tensor folder
  std::string results_dir;                  // --from-results DIR: the figure's runs come from .msum files
  std::string run_dir;                      // --run DIR: a training run folder (Training tab; a preset's run)
  std::string train_dir;                    // --train DIR: start a run with the Training tab's defaults
  bool train_missing = false;               // --train-missing: train a preset's missing run folder first
  // The merged results behind the preset's figure, one per simulation (read while parsing).
  std::vector<std::pair<Settings, std::shared_ptr<const Snapshot>>> stored_results;
  std::vector<std::string> errors;  // what a refused command line printed (parse_app_options returned 2)

  bool headless() const {
    return exit_when_done || ui_bench > 0 || !screenshot.empty() || !export_dir.empty() || !slides_dir.empty();
  }
  // --export-figure with --run and no preset, or one without figure rows (its view, its sweep): a PNG of the window
  // per checkpoint of the run and animation.gif of them all.
  bool exports_animation() const {
    return !export_dir.empty() && !run_dir.empty() && (!preset || preset->figure.rows.empty());
  }
};

// Parses argv into `o`. Returns -1 to go on, or an exit code (0 after --help, 2 after errors,
// which are printed to stderr, each naming its option and valid range).
int parse_app_options(int argc, char** argv, AppOptions& o);

}  // namespace maskscope::gui
