// maskscope: the live window. GLFW + OpenGL 3.3 core + Dear ImGui; the simulation runs in the
// background (core Run) and the UI draws the newest snapshot every frame. Options: app_options.hpp.
#include "window/gl.hpp"
// GLFW after the GL header, so that GLFW does not pull in the system GL header.
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui/backends/imgui_impl_glfw.h>
#include <imgui/backends/imgui_impl_opengl3.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "window/app_options.hpp"
#include "window/browser.hpp"
#include "common/controller.hpp"
#include "window/headless.hpp"
#include "window/screenshot.hpp"
#include "window/shortcuts.hpp"
#include "window/views/views.hpp"
#include "common/train/run_preset.hpp"

namespace gui = maskscope::gui;
namespace browser = maskscope::gui::browser;
using gui::install_key_queue;

namespace {

GLFWwindow* open_window(int width, int height) {
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GL_TRUE);
#if GLFW_VERSION_MINOR >= 3  // the browser build's GLFW (Emscripten's) is 3.2: no monitor scales
  glfwWindowHint(GLFW_SCALE_TO_MONITOR, GLFW_TRUE);
#endif
  GLFWwindow* window = glfwCreateWindow(width, height, "maskscope", nullptr, nullptr);
  if (!window) return nullptr;
  glfwMakeContextCurrent(window);
  glfwSwapInterval(1);
  return window;
}

float setup_imgui(GLFWwindow* window, bool light) {
  float xscale = 1, yscale = 1;
#if GLFW_VERSION_MINOR >= 3
  glfwGetWindowContentScale(window, &xscale, &yscale);
#else
  (void)window;
#endif
  const float ui_scale = std::max(1.0f, std::max(xscale, yscale));
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
  // DejaVu Sans with the Greek and math glyphs the labels use (alpha, ±, √, Σ, ≥).
  static const ImWchar ranges[] = {0x0020, 0x00FF, 0x0370, 0x03FF, 0x2000, 0x22FF, 0xFFFD, 0xFFFD, 0};
  const char* font = browser::kInBrowser ? "/fonts/DejaVuSans.ttf" : "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
  if (std::filesystem::exists(font)) io.Fonts->AddFontFromFileTTF(font, 16.0f * ui_scale, nullptr, ranges);
  if (light) ImGui::StyleColorsLight();
  else ImGui::StyleColorsDark();
  ImGui::GetStyle().ScaleAllSizes(ui_scale);
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  install_key_queue(window);  // after the backend, so that it chains to the backend's callback
  gui::install_activity_watch(window);
  ImGui_ImplOpenGL3_Init(gui::kImGuiGlslVersion);
  return ui_scale;
}

// The window's state between frames: the desktop's loop and the browser's frame callback share frame().
struct App {
  App(const gui::AppOptions& o, GLFWwindow* w, float scale, maskscope::RunOptions run_options)
      : opt(o),
        window(w),
        ui_scale(scale),
        controller(o.settings, run_options),
        views(controller, run_options),
        driver(opt, controller, views) {}

  // One frame: events, the views, the shortcuts, the headless actions. False when the app should end.
  bool frame();

  gui::AppOptions opt;
  GLFWwindow* window;
  float ui_scale;
  gui::Controller controller;
  gui::Views views;
  gui::HeadlessDriver driver;
  int settle_frames = 3;
  double last_draw = -1e9;     // the browser build: when frame() last drew (glfwGetTime)
  double frame_cost_s = 0.01;  // a frame's wall time from waking to the swap, smoothed
};

// Frames on demand. Every run posts an empty event when it publishes a picture, so while a run
// refines the window draws once per picture and at once on input, not back to back: under a
// software renderer (Mesa's llvmpipe, Xvfb) a frame of this window costs 20-40 ms of CPU, which
// the simulation's workers and the picture's build then wait for. Each frame's time is reported
// (Views::frame_drawn) with the picture's panels to the live run, whose publisher spaces its pictures
// so that pictures and their frames take at most 5% of the workers' time. After input a few frames
// follow, for Dear ImGui's hover and drag states to settle; a transition and a text field being
// edited (its cursor blinks) draw continuously. (The browser calls frame() at its display's rate.)
bool App::frame() {
  ImGuiIO& io = ImGui::GetIO();
  const auto snap = controller.snapshot();
  const bool refining = !(snap->finished || snap->cancelled) || !views.figure().complete();
  if (browser::kInBrowser) {
    // The browser calls this at its display's rate and cannot sleep in it: frames on demand here skip
    // the calls with nothing new, drawing at most every 50 ms while a run refines (2 s when idle), at
    // once after input. A skipped call leaves the last frame on the page. Drawing every call cost the
    // simulation's two workers half their speed on 2 cores (the page's GL is software there).
    if (gui::take_input_activity()) settle_frames = 3;
    const double now = glfwGetTime();
    if (settle_frames == 0 && !views.transition_running() && !io.WantTextInput &&
        now - last_draw < (refining || !views.showing_final_snapshot() ? 0.05 : 2.0))
      return true;
    last_draw = now;
  }
  if (browser::kInBrowser || driver.busy() || settle_frames > 0 || views.transition_running() || io.WantTextInput)
    glfwPollEvents();
  // Runs and the panel builder post an event for each picture; the timeout is for what posts none (a
  // twin run, the probes' progress): while something refines, every 0.1 s, or every 25 frames' time
  // when frames are slower (software GL: 0.25 s), so that these frames take at most 4% of a core.
  else glfwWaitEventsTimeout(refining ? std::clamp(25 * frame_cost_s, 0.1, 0.5) : 0.5);
  settle_frames = gui::take_input_activity() ? 3 : std::max(0, settle_frames - 1);
  const auto frame_begin = std::chrono::steady_clock::now();
  browser::before_frame(window);
  driver.before_frame();

  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  // Headless: no pointer, so no hover tooltip in screenshots (Xvfb puts it mid-window).
  if (opt.headless()) io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
  ImGui::NewFrame();
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(io.DisplaySize);
  // Presentation mode shows no menu bar (F5 or Esc leave it; issue 48).
  ImGui::Begin("##root", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoBringToFrontOnFocus | (views.presenting() ? 0 : ImGuiWindowFlags_MenuBar) |
                   ImGuiWindowFlags_NoBackground);
  views.draw(ui_scale);
  ImGui::End();
  ImGui::Render();
  int fw, fh;
  glfwGetFramebufferSize(window, &fw, &fh);
  glViewport(0, 0, fw, fh);
  // The root window draws no background: the clear gives its colour (WindowBg over the former
  // clear colour, as blending gave it), and a software renderer shades the whole window once
  // less per frame.
  const ImVec4 under = views.options().light_theme ? ImVec4(1, 1, 1, 1) : ImVec4(0.1f, 0.1f, 0.11f, 1);
  const ImVec4 wb = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  const ImVec4 bg(wb.x * wb.w + under.x * (1 - wb.w), wb.y * wb.w + under.y * (1 - wb.w),
                  wb.z * wb.w + under.z * (1 - wb.w), 1);
  glClearColor(bg.x, bg.y, bg.z, 1);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());

  // Shortcuts from the queue (never lost). F12: the whole window, auto-numbered, into the export folder.
  for (const gui::KeyPress& k : gui::take_key_presses()) {
    if (k.key != GLFW_KEY_F12) {
      views.on_key(k.key, k.mods);
      continue;
    }
    const std::string path = views.figure().next_screenshot_path();
    std::string error;
    const bool ok = gui::save_screenshot(path, {fw, fh, true}, error);
    if (ok) browser::offer_files("", {path});
    views.set_status_message(ok ? "screenshot " + path : error, !ok);
    std::fprintf(ok ? stdout : stderr, "maskscope: %s\n", ok ? ("screenshot " + path).c_str() : error.c_str());
    std::fflush(stdout);
  }
  const bool quit = driver.after_frame(fw, fh);
  browser::after_frame(controller, views);
  glfwSwapBuffers(window);
  driver.after_swap();
  const std::chrono::duration<double> drawn = std::chrono::steady_clock::now() - frame_begin;
  views.frame_drawn(std::chrono::duration_cast<std::chrono::nanoseconds>(drawn));
  frame_cost_s += 0.2 * (drawn.count() - frame_cost_s);
  return !quit && !glfwWindowShouldClose(window);
}

}  // namespace

int main(int argc, char** argv) {
  gui::AppOptions opt;
  std::vector<std::string> page_errors;
  if (browser::kInBrowser) {
    // The page's link is its command line (view_link.hpp); a refused one shows its messages over the defaults.
    std::vector<std::string> args = browser::page_arguments(page_errors);
    std::vector<char*> argv_page{argv[0]};
    for (std::string& a : args) argv_page.push_back(a.data());
    if (page_errors.empty() && gui::parse_app_options(int(argv_page.size()), argv_page.data(), opt) == 2) {
      page_errors = opt.errors;
      opt = gui::AppOptions{};
    }
    if (!page_errors.empty()) browser::show_page_errors(page_errors);
  } else if (int code = gui::parse_app_options(argc, argv, opt); code >= 0) {
    return code;
  }

  glfwSetErrorCallback(
      [](int code, const char* msg) { std::fprintf(stderr, "maskscope: GLFW error %d: %s\n", code, msg); });
  if (!glfwInit()) return 1;
  GLFWwindow* window = open_window(opt.width, opt.height);
  if (!window) {
    std::fprintf(stderr, "maskscope: cannot open an OpenGL 3.3 core window\n");
    glfwTerminate();
    return 1;
  }
  const float ui_scale = setup_imgui(window, opt.view.light_theme);

  maskscope::RunOptions run_options;
  run_options.low_priority = true;  // the UI thread keeps its core
  run_options.first_picture_alone = true;
  run_options.on_publish = [] { glfwPostEmptyEvent(); };
  // On the heap: the browser's main loop outlives main().
  auto* app = new App(opt, window, ui_scale, run_options);
  gui::Views& views = app->views;
  int exit_code = 0;
  if (!opt.samples_given) app->controller.set_auto_samples(true);
  views.options() = opt.view;
  views.figure().runs().set_stored(opt.stored_results);  // --from-results
  if (opt.preset) {
    gui::Preset p = *opt.preset;
    p.settings = opt.settings;  // with --set and --samples applied
    p.view = opt.view;
    if (opt.export_scale) p.export_options = {*opt.export_scale, 0};
    if (opt.export_width) p.export_options.width = *opt.export_width;
    // A trained network's preset: its rows read the run folder (--run DIR or the preset's). A missing folder is
    // trained only when asked (--train-missing); otherwise the message says how long it would take.
    const bool has_states = std::any_of(p.figure.rows.begin(), p.figure.rows.end(),
                                        [](const gui::FigureRow& r) { return !r.state.empty(); });
    if (p.run || has_states) {
      const std::string folder = gui::preset_run_folder(p, opt.run_dir);
      std::string error;
      if (opt.train_missing) {  // every missing run folder of the preset (its own and its rows'), trained first
        try {
          gui::train_missing_preset_runs(p, opt.run_dir, [](const gui::PresetRun& r, const auto& c) {
            std::printf("maskscope: training %s (%lld steps)...\n", r.folder.c_str(), (long long)c.steps);
            std::fflush(stdout);
          });
        } catch (const std::exception& e) { error = e.what(); }
      }
      if (error.empty() && !gui::bind_preset_run(p, folder, error))
        if (const std::string missing = gui::missing_runs_message(p, opt.run_dir); !missing.empty()) error = missing;
      if (!error.empty()) {
        const std::string& m = error;
        std::fprintf(stderr, "maskscope: --preset: %s\n", m.c_str());
        if (opt.headless()) exit_code = 2;
        views.set_status_message(m, true);
      }
    }
    views.apply_preset(p);
  }
  if (!opt.run_dir.empty()) {  // --run DIR: the Training tab shows it, its last checkpoint the live model
    std::string error;
    if (!views.training().open_run(app->controller, opt.run_dir, error)) {
      std::fprintf(stderr, "maskscope: --run: %s\n", error.c_str());
      if (opt.headless()) exit_code = 2;
      views.set_status_message(error, true);
    }
  }
  if (!opt.train_dir.empty()) {  // --train DIR: a run with the Training tab's defaults, in the background
    std::string error;
    if (!views.training().start_into(opt.train_dir, error)) {
      std::fprintf(stderr, "maskscope: --train: %s\n", error.c_str());
      exit_code = 2;
    }
  }
  if (!opt.tensors_dir.empty()) {  // --open DIR: a failure ends with exit code 2, as a bad preset does
    std::string error;
    if (!views.open_tensors(opt.tensors_dir, error)) {
      std::fprintf(stderr, "maskscope: --open: %s\n", error.c_str());
      exit_code = 2;
    } else if (opt.view.tab == gui::Tab::figure) {
      views.compare_tensors_with_simulation();  // --open DIR --tab figure: model beside simulation
    }
  }
  if (!opt.run_dir.empty()) views.set_run_override(opt.run_dir);
  if (opt.lesson) {
    views.set_lesson_samples_cap(opt.samples_cap);
    views.start_lesson(*opt.lesson);
    views.go_to_step(std::size_t(opt.lesson_step - 1));
    // Slides are rendered at the window's size, not the monitor's.
    if (opt.present || !opt.slides_dir.empty()) views.set_presenting(true, opt.slides_dir.empty() && !opt.headless());
  }
  if (!page_errors.empty()) views.set_status_message(page_errors.front(), true);
  if (browser::kInBrowser) {
    browser::run_main_loop([app] { app->frame(); });  // does not return
    return 0;
  }

  while (exit_code == 0 && app->frame()) {}
  if (exit_code == 0) {
    app->driver.print_summary();
    exit_code = app->driver.exit_code();
  }
  delete app;
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return exit_code;
}
