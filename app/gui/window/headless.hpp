// What the window does on its own, without a person: the --ui-bench restarts and frame-time
// statistics, the headless figure export, the --screenshot trigger (at the end, after N samples
// or at a target standard error), and when to exit.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "common/gif_animation.hpp"
#include "window/app_options.hpp"
#include "common/controller.hpp"
#include "window/views/views.hpp"

namespace maskscope::gui {

// The checkpoint animation's GIF, beside its PNG series in the --export-figure folder.
inline constexpr const char* kAnimationGif = "animation.gif";

class HeadlessDriver {
 public:
  HeadlessDriver(const AppOptions& options, Controller& controller, Views& views);

  // Before the frame is built: the benchmark's next settings change.
  void before_frame();
  // After the frame is rendered (before the swap): export, screenshot. `fb_w` x `fb_h` is the
  // framebuffer. Returns true when the app should exit.
  bool after_frame(int fb_w, int fb_h);
  // After the swap: the frame's drawing time (from waking to the swap) and UI-thread CPU.
  void after_swap();
  // Keeps the loop polling (not sleeping) once the driver waits for frames, not for a run: the frames
  // after the run (or export) is done, before the screenshot and the exit, and a slide's. While runs
  // refine, a headless window draws on demand like a person's (each picture posts an event): polling
  // drew 70-80 frames a second of software GL, which took the workers' cores (issue 48).
  bool busy() const {
    return options_.headless() && options_.ui_bench == 0 &&
           (frames_after_done_ > 0 || slide_frames_done_ > 0 || (exporting_ && exported_) || animation_index_ >= 0);
  }
  int exit_code() const { return exit_code_; }
  // Frame-time and first-heatmap statistics (for --ui-bench and --exit-when-done).
  void print_summary() const;

 private:
  bool screenshot_due() const;
  // --export-slides: one PNG per step once its run is done and the transition over, then slides.md.
  bool slides_after_frame(int fb_w, int fb_h);
  // --run DIR --export-figure OUT without a preset: a PNG of the window per checkpoint, once its run (and the tab's
  // own computation) is done, and all of them as one looping GIF, animation.gif.
  bool animation_after_frame(int fb_w, int fb_h);
  void note_training_latency();  // --exit-when-done: first loss point and checkpoints shown, for the summary
  int animation_index_ = -1;
  std::unique_ptr<GifAnimation> animation_gif_;

  const AppOptions& options_;
  Controller& controller_;
  Views& views_;
  bool exporting_ = false, exported_ = false, screenshot_taken_ = false;
  int exit_code_ = 0;
  int slide_frames_done_ = 0;
  std::string slides_md_;
  int bench_restarts_ = 0, bench_frame_ = 0, last_restart_seen_ = 0, frames_after_done_ = 0;
  bool bench_seen_heatmap_ = false;  // --ui-bench: the current run's heatmap has been on screen
  std::vector<double> frame_ms_, first_heatmap_ms_;
  // Training from the tab (issue 50): from Start to the first loss point on screen, and from a checkpoint file's
  // write (its modification time) to the first heatmap of that network.
  double first_loss_point_s_ = -1;
  std::int64_t checkpoint_seen_ = -2;
  std::optional<std::filesystem::file_time_type> checkpoint_written_;
  std::vector<double> checkpoint_shown_s_;
  std::vector<double> draw_ms_;       // per frame, from waking (before_frame) to after the swap
  std::vector<double> frame_cpu_ms_;  // the UI thread's CPU time per frame, over the same span
  double frame_cpu_begin_ = 0;
  std::chrono::steady_clock::time_point last_frame_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point frame_begin_ = last_frame_;
};

}  // namespace maskscope::gui
