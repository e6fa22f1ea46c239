// The headless driver (see headless.hpp).
#include "window/headless.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <numeric>

#include "core/formats/atomic_file.hpp"
#include "core/model/checkpoint_config.hpp"

#include "core/stats/metrics.hpp"
#include "core/run/resources.hpp"
#include "window/screenshot.hpp"

namespace maskscope::gui {

namespace {
// CPU time of the calling thread (ms).
double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e3 + double(t.tv_nsec) * 1e-6;
}
}  // namespace

HeadlessDriver::HeadlessDriver(const AppOptions& options, Controller& controller, Views& views)
    : options_(options),
      controller_(controller),
      views_(views),
      exporting_(!options.export_dir.empty() && !options.exports_animation()),
      last_restart_seen_(controller.restarts()) {
  // Headless export: the figure's runs get the cores; the live run waits, and says why.
  if (exporting_) controller_.set_paused(true, "figure runs have priority (headless export)");
}

void HeadlessDriver::before_frame() {
  frame_begin_ = std::chrono::steady_clock::now();
  frame_cpu_begin_ = thread_cpu_ms();
  // Move alpha like a user would, each move restarting the run: 8 frames after the new run's first
  // heatmap is on screen (so every move is measured, at any n; frames meanwhile are the refining
  // ones), or after 300 frames without one.
  if (options_.ui_bench > 0 && !bench_seen_heatmap_ && views_.showing_current_run()) {
    bench_seen_heatmap_ = true;
    bench_frame_ = 0;
  }
  if (options_.ui_bench > 0 && ++bench_frame_ >= (bench_seen_heatmap_ ? 8 : 300)) {
    bench_frame_ = 0;
    bench_seen_heatmap_ = false;
    Settings s = controller_.settings();
    s.alpha = 0.05 + 0.9 * double(bench_restarts_ % 37) / 36.0;
    controller_.edit(s);
    ++bench_restarts_;
  }
}

bool HeadlessDriver::screenshot_due() const {
  const Snapshot* shown = views_.shown();
  if (options_.exit_when_done && frames_after_done_ >= 2) return true;  // the run (or export) is done
  if (!shown) return false;
  if (options_.screenshot_at_samples > 0 && shown->samples_done >= options_.screenshot_at_samples) return true;
  if (options_.screenshot_at_se > 0 && shown->samples_done > 1) {
    const double max_se = largest_shown_se(views_.panels());
    if (max_se > 0 && max_se <= options_.screenshot_at_se) return true;
  }
  return options_.ui_bench > 0 && bench_restarts_ == options_.ui_bench;
}

bool HeadlessDriver::slides_after_frame(int fb_w, int fb_h) {
  LessonPlayer* player = views_.lesson();
  if (!player) return true;
  // A step is ready when its run is done, or sooner when --screenshot-at-se X is given and the
  // largest standard error on screen has come down to X; and the transition is over.
  const Snapshot* shown = views_.shown();
  const double se = shown && shown->samples_done > 1 ? largest_shown_se(views_.panels()) : 0;
  const bool converged = options_.screenshot_at_se > 0 && se > 0 && se <= options_.screenshot_at_se &&
                         shown->settings.same_simulation(controller_.settings());
  const bool ready = (views_.showing_final_snapshot() || converged) && !views_.transition_running();
  slide_frames_done_ = ready ? slide_frames_done_ + 1 : 0;
  if (slide_frames_done_ < 3) return false;  // a few frames after the run: the final picture is on screen
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(options_.slides_dir, ec);
  char name[32];
  std::snprintf(name, sizeof name, "step-%02zu.png", player->step() + 1);
  std::string error;
  if (!save_screenshot((fs::path(options_.slides_dir) / name).string(), {fb_w, fb_h, true}, error)) {
    std::fprintf(stderr, "maskscope: cannot write slide %s: %s\n", name, error.c_str());
    exit_code_ = 1;
    return true;
  }
  const LessonStep& step = player->current();
  if (slides_md_.empty()) slides_md_ = "# " + player->lesson().title + "\n\n" + player->lesson().description + "\n\n";
  slides_md_ += "## " + step.title + "\n\n![" + step.title + "](" + name + ")\n\n" +
                lesson_text(step.text, views_.shown()) + "\n\n";
  for (const std::string& eq : step.equations) slides_md_ += "    " + eq + "\n";
  if (!step.equations.empty()) slides_md_ += "\n";
  std::printf("maskscope: slide %s (%zu / %zu)\n", name, player->step() + 1, player->lesson().steps.size());
  std::fflush(stdout);
  if (views_.next_step()) {
    slide_frames_done_ = 0;
    return false;
  }
  if (!write_file_atomic((fs::path(options_.slides_dir) / "slides.md").string(), slides_md_, error)) {
    std::fprintf(stderr, "maskscope: cannot write slides.md: %s\n", error.c_str());
    exit_code_ = 1;
  }
  return true;
}

bool HeadlessDriver::animation_after_frame(int fb_w, int fb_h) {
  TrainingTab& training = views_.training();
  const auto& steps = training.session().checkpoints();
  if (steps.empty()) {
    std::fprintf(stderr, "maskscope: --run %s: no checkpoint to export\n", options_.run_dir.c_str());
    exit_code_ = 2;
    return true;
  }
  if (animation_index_ < 0) {
    animation_index_ = 0;
    training.select(0);
    slide_frames_done_ = 0;
    return false;
  }
  // A frame is taken once the checkpoint is the live model, its run is done and the tab shown has finished what
  // it computes from it (the Leakage twin, the probes, the sweep).
  const bool ready = training.shown_step() == steps[std::size_t(animation_index_)] && views_.showing_final_snapshot() &&
                     !views_.transition_running() && views_.tab_settled();
  slide_frames_done_ = ready ? slide_frames_done_ + 1 : 0;
  if (slide_frames_done_ < 3) return false;
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(options_.export_dir, ec);
  char name[64];
  std::snprintf(name, sizeof name, "step-%06lld.png", (long long)steps[std::size_t(animation_index_)]);
  const std::string path = (fs::path(options_.export_dir) / name).string();
  std::string error;
  const ScreenshotBuffer frame = capture_screenshot({fb_w, fb_h, true});
  if (!save_png(path, frame, error)) {
    std::fprintf(stderr, "maskscope: cannot write %s: %s\n", path.c_str(), error.c_str());
    exit_code_ = 1;
    return true;
  }
  std::printf("maskscope: exported %s\n", path.c_str());
  std::fflush(stdout);
  // The same frames as one looping GIF, at Play's pace; the last one held a little longer.
  if (!animation_gif_) animation_gif_ = std::make_unique<GifAnimation>(frame.width, frame.height);
  if (!animation_gif_->add_frame(frame.rgba.data(), frame.width, frame.height, TrainingTab::kPlayIntervalMs / 10,
                                 error)) {
    std::fprintf(stderr, "maskscope: cannot encode %s for the GIF: %s\n", name, error.c_str());
    exit_code_ = 1;
    return true;
  }
  slide_frames_done_ = 0;
  if (++animation_index_ < int(steps.size())) {
    training.select(animation_index_);
    return false;
  }
  const std::string gif = (fs::path(options_.export_dir) / kAnimationGif).string();
  if (!animation_gif_->write(gif, 3 * TrainingTab::kPlayIntervalMs / 10, error)) {
    std::fprintf(stderr, "maskscope: cannot write %s: %s\n", gif.c_str(), error.c_str());
    exit_code_ = 1;
    return true;
  }
  std::printf("maskscope: exported %s (%zu frames, %dx%d)\n", gif.c_str(), animation_gif_->frames(), frame.width,
              frame.height);
  std::fflush(stdout);
  return true;
}

bool HeadlessDriver::after_frame(int fb_w, int fb_h) {
  if (options_.exports_animation()) return animation_after_frame(fb_w, fb_h);
  if (!options_.slides_dir.empty()) {
    const auto now = std::chrono::steady_clock::now();
    frame_ms_.push_back(std::chrono::duration<double, std::milli>(now - last_frame_).count());
    last_frame_ = now;
    return slides_after_frame(fb_w, fb_h);
  }
  note_training_latency();
  if (views_.last_time_to_first_heatmap() >= 0 && last_restart_seen_ != controller_.restarts()) {
    first_heatmap_ms_.push_back(views_.last_time_to_first_heatmap() * 1000.0);
    last_restart_seen_ = controller_.restarts();
    if (checkpoint_written_) {  // the shown checkpoint's first heatmap: how long after its file was written
      checkpoint_shown_s_.push_back(
          std::chrono::duration<double>(std::filesystem::file_time_type::clock::now() - *checkpoint_written_).count());
      checkpoint_written_.reset();
    }
  }
  FigureWorkbench& figure = views_.figure();
  // On the Sweep tab --export-figure exports the sweep (sweep.png, .svg, .csv, preset.json) once it is done.
  const bool sweep_tab = views_.options().tab == Tab::sweep;
  if (exporting_ && !exported_ && (sweep_tab ? views_.sweep().complete() : figure.complete())) {
    const ExportResult r = sweep_tab ? views_.sweep().export_now(options_.export_dir, views_.current_preset())
                                     : figure.export_now(options_.export_dir, views_.current_preset());
    exported_ = true;
    if (r.ok) {
      std::printf("maskscope: exported %zu files to %s (PNG %dx%d)\n", r.files.size(), options_.export_dir.c_str(),
                  r.png_width, r.png_height);
    } else {
      std::fprintf(stderr, "maskscope: export failed: %s\n", r.error.c_str());
      exit_code_ = 1;
    }
  }
  // On the Sweep tab the sweep is what is waited for (the live run goes on beside it, at its own pace).
  const bool done = exporting_  ? exported_
                    : sweep_tab ? views_.sweep().complete()
                                : views_.showing_final_snapshot() && figure.complete() && figure.shown_complete() &&
                                      !views_.training().settling();
  if (options_.exit_when_done && done) ++frames_after_done_;
  if (!options_.screenshot.empty() && !screenshot_taken_ && screenshot_due()) {
    screenshot_taken_ = true;
    std::string error;
    if (!save_screenshot(options_.screenshot, {fb_w, fb_h, true}, error)) {
      std::fprintf(stderr, "maskscope: cannot write the screenshot: %s\n", error.c_str());
      exit_code_ = 1;
    }
  }
  const auto now = std::chrono::steady_clock::now();
  frame_ms_.push_back(std::chrono::duration<double, std::milli>(now - last_frame_).count());
  last_frame_ = now;
  const bool screenshot_pending = !options_.screenshot.empty() && !screenshot_taken_;
  if (options_.exit_when_done && frames_after_done_ >= 2 && !screenshot_pending) return true;
  if (options_.exit_when_done && screenshot_taken_ &&
      (options_.screenshot_at_samples > 0 || options_.screenshot_at_se > 0))
    return true;  // the screenshot was the point: no need to wait for the whole run
  return options_.ui_bench > 0 && bench_restarts_ >= options_.ui_bench;
}

void HeadlessDriver::note_training_latency() {
  TrainingTab& tab = views_.training();
  TrainingSession& session = tab.session();
  if (first_loss_point_s_ < 0 && session.state() != TrainingSession::State::idle && !session.evaluations().empty() &&
      session.started().time_since_epoch().count() != 0)
    first_loss_point_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - session.started()).count();
  if (tab.shown_step() >= 0 && tab.shown_step() != checkpoint_seen_) {
    checkpoint_seen_ = tab.shown_step();
    std::error_code ec;
    const auto written = std::filesystem::last_write_time(
        std::filesystem::path(session.folder()) / checkpoint_file_name(checkpoint_seen_), ec);
    if (!ec) checkpoint_written_ = written;
  }
}

void HeadlessDriver::after_swap() {
  draw_ms_.push_back(
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - frame_begin_).count());
  frame_cpu_ms_.push_back(thread_cpu_ms() - frame_cpu_begin_);
}

void HeadlessDriver::print_summary() const {
  if (options_.ui_bench == 0 && !options_.exit_when_done) return;
  auto skip_first = [](const std::vector<double>& v) {  // the first frame is start-up
    return std::vector<double>(v.begin() + (v.size() > 1 ? 1 : 0), v.end());
  };
  auto mean = [](const std::vector<double>& v) {
    return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
  };
  auto q = [](const std::vector<double>& v, double p) { return v.empty() ? 0.0 : quantile(v, p); };
  const std::vector<double> between = skip_first(frame_ms_), draw = skip_first(draw_ms_),
                            cpu = skip_first(frame_cpu_ms_);
  // A frame's time is from the loop waking (an input event, a new picture) to the end of its swap:
  // how soon the window answers, and its frame rate while something changes every frame (a slider
  // being dragged). The window draws on demand, so the time between frames also holds its sleep.
  const double span_s = std::accumulate(between.begin(), between.end(), 0.0) / 1000.0;
  std::printf(
      "frames %zu (%.0f per second): drawn in mean %.1f ms, p95 %.1f ms, max %.1f ms (waking to swap); "
      "between frames mean %.1f ms, p95 %.1f ms\n",
      draw.size(), span_s > 0 ? double(between.size()) / span_s : 0.0, mean(draw), q(draw, 0.95), q(draw, 1.0),
      mean(between), q(between, 0.95));
  std::printf("first heatmap after a change: median %.1f ms, p95 %.1f ms over %zu runs\n", q(first_heatmap_ms_, 0.5),
              q(first_heatmap_ms_, 0.95), first_heatmap_ms_.size());
  if (first_loss_point_s_ >= 0 || !checkpoint_shown_s_.empty())
    std::printf(
        "training: first loss point %.2f s after Start; a checkpoint's first heatmap median %.2f s, max %.2f s "
        "after its file was written (%zu checkpoints)\n",
        first_loss_point_s_, q(checkpoint_shown_s_, 0.5), q(checkpoint_shown_s_, 1.0), checkpoint_shown_s_.size());
  // The UI thread's own CPU time per frame: the window's work without waiting for the GPU or, under
  // Xvfb, for Mesa's software renderer threads.
  if (!cpu.empty())
    std::printf("UI thread CPU per frame: mean %.1f ms, p95 %.1f ms, max %.1f ms\n", mean(cpu), q(cpu, 0.95),
                q(cpu, 1.0));
  std::printf("peak memory %.0f MiB (the whole window, with its GL driver)\n", peak_resident_mib());
}

}  // namespace maskscope::gui
