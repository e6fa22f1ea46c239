// maskscope: the live window. GLFW + OpenGL 3.3 core + Dear ImGui; the simulation runs in the
// background (core Run) and the UI draws the newest snapshot every frame.
//
//   maskscope [--preset FILE|NAME] [--set key=value ...] [--samples N] [--tab attention|diagonal|hofj|metrics|figure]
//             [--show score|weight|cosine] [--size WxH] [--theme dark|light] [--screenshot FILE]
//             [--export-figure DIR] [--export-scale S] [--export-width PX] [--exit-when-done] [--ui-bench N]
#include <epoxy/gl.h>
// GLFW after epoxy, so that GLFW does not pull in the system GL header.
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui/backends/imgui_impl_glfw.h>
#include <imgui/backends/imgui_impl_opengl3.h>
#include <stb_image_write.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "controller.hpp"
#include "core/result_json.hpp"
#include "views.hpp"

namespace ms = maskscope;
namespace gui = maskscope::gui;

namespace {

struct Options {
  ms::Settings settings;
  gui::ViewOptions view;
  std::optional<gui::Preset> preset;
  std::string export_dir;
  std::optional<double> export_scale;
  std::optional<int> export_width;
  int width = 1280, height = 800;
  std::string screenshot;
  bool exit_when_done = false;
  int ui_bench = 0;  // restarts to drive for the frame-time benchmark
};

// "key=value": value parsed as JSON when it can be (numbers, true/false), else as a string.
bool apply_set(const std::string& kv, ms::Settings& s, std::string& error) {
  const auto eq = kv.find('=');
  if (eq == std::string::npos) {
    error = "--set expects key=value, got '" + kv + "'";
    return false;
  }
  const std::string key = kv.substr(0, eq), value = kv.substr(eq + 1);
  nlohmann::json v = nlohmann::json::parse(value, nullptr, false);
  if (v.is_discarded() || v.is_string()) v = value;
  static const char* keys[] = {"n", "d", "layers", "alpha", "norm", "scale", "gamma", "rope", "mask",
                               "unit_input", "samples", "seed", "threads"};
  if (std::none_of(std::begin(keys), std::end(keys), [&](const char* k) { return key == k; })) {
    error = "--set: unknown setting '" + key + "'; valid: n d layers alpha norm scale gamma rope mask unit_input samples seed threads";
    return false;
  }
  if (key == "unit_input" && v.is_number_integer()) v = v.get<int>() != 0;
  try {
    ms::settings_from_json(nlohmann::json{{key, v}}, s);
  } catch (const std::exception& e) {
    error = std::string("--set ") + e.what();
    return false;
  }
  return true;
}

int parse_options(int argc, char** argv, Options& o) {
  std::vector<std::string> errors;
  // The preset comes first, whatever its place on the line: --set, --tab and --show refine it.
  for (int k = 1; k + 1 < argc; ++k)
    if (std::string(argv[k]) == "--preset") {
      const std::string name = argv[k + 1];
      gui::Preset p;
      std::string error;
      if (const gui::Preset* shipped = gui::find_shipped_preset(name)) p = *shipped;
      else if (!gui::load_preset_file(name, p, error)) errors.push_back("--preset: " + error);
      if (error.empty()) {
        o.preset = p;
        o.settings = p.settings;
        const bool light = o.view.light_theme;
        o.view = p.view;
        o.view.light_theme = light;
      }
    }
  std::optional<std::int64_t> samples;
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    auto next = [&]() -> std::string {
      if (k + 1 >= argc) {
        errors.push_back(a + " needs a value");
        return "";
      }
      return argv[++k];
    };
    std::string err;
    if (a == "--preset") {
      next();  // read above
    } else if (a == "--samples") {
      const std::string t = next();
      char* end = nullptr;
      const double v = std::strtod(t.c_str(), &end);
      if (end == t.c_str() || *end != '\0' || !(v >= double(ms::Limits::samples_min) && v <= double(ms::Limits::samples_max)) ||
          v != std::floor(v))
        errors.push_back("--samples: '" + t + "'; valid: a whole number in [1, 1e12], for the live run and every figure row");
      else
        samples = std::int64_t(v);
    } else if (a == "--export-figure") {
      o.export_dir = next();
      if (o.export_dir.empty()) errors.push_back("--export-figure needs a folder");
    } else if (a == "--export-scale") {
      const std::string t = next();
      const double v = std::atof(t.c_str());
      if (!(v >= 0.25 && v <= 8)) errors.push_back("--export-scale: '" + t + "'; valid: [0.25, 8] (1x, 2x, 4x...)");
      else o.export_scale = v;
    } else if (a == "--export-width") {
      const std::string t = next();
      const int v = std::atoi(t.c_str());
      if (v < 64 || v > 16384) errors.push_back("--export-width: '" + t + "'; valid: [64, 16384] pixels");
      else o.export_width = v;
    } else if (a == "--set") {
      if (!apply_set(next(), o.settings, err)) errors.push_back(err);
    } else if (a == "--tab") {
      const std::string t = next();
      if (t == "attention") o.view.tab = gui::Tab::attention;
      else if (t == "diagonal") o.view.tab = gui::Tab::diagonal;
      else if (t == "hofj") o.view.tab = gui::Tab::h_of_j;
      else if (t == "metrics") o.view.tab = gui::Tab::metrics;
      else if (t == "figure") o.view.tab = gui::Tab::figure;
      else errors.push_back("--tab: '" + t + "'; valid: attention, diagonal, hofj, metrics, figure");
    } else if (a == "--show") {
      const std::string t = next();
      if (t == "score") o.view.quantity = gui::Quantity::score;
      else if (t == "weight") o.view.quantity = gui::Quantity::weight;
      else if (t == "cosine") o.view.quantity = gui::Quantity::cosine;
      else errors.push_back("--show: '" + t + "'; valid: score, weight, cosine");
    } else if (a == "--size") {
      const std::string t = next();
      if (std::sscanf(t.c_str(), "%dx%d", &o.width, &o.height) != 2 || o.width < 320 || o.height < 240 ||
          o.width > 8192 || o.height > 8192)
        errors.push_back("--size: '" + t + "'; valid: WxH with W in [320, 8192], H in [240, 8192]");
    } else if (a == "--theme") {
      const std::string t = next();
      if (t == "light") o.view.light_theme = true;
      else if (t == "dark") o.view.light_theme = false;
      else errors.push_back("--theme: '" + t + "'; valid: dark, light");
    } else if (a == "--screenshot") {
      o.screenshot = next();
    } else if (a == "--exit-when-done") {
      o.exit_when_done = true;
    } else if (a == "--ui-bench") {
      o.ui_bench = std::atoi(next().c_str());
      if (o.ui_bench < 1 || o.ui_bench > 10000) errors.push_back("--ui-bench: valid: restarts in [1, 10000]");
    } else if (a == "--hide-diagonal") {
      const std::string t = next();
      o.view.hide_diagonal = t == "1" || t == "true";
    } else if (a == "--help" || a == "-h") {
      std::printf("maskscope [--preset FILE|NAME] [--set key=value ...] [--samples N]\n"
                  "          [--tab attention|diagonal|hofj|metrics|figure] [--show score|weight|cosine]\n"
                  "          [--size WxH] [--theme dark|light] [--hide-diagonal 0|1] [--screenshot FILE]\n"
                  "          [--export-figure DIR] [--export-scale S] [--export-width PX] [--exit-when-done] [--ui-bench N]\n"
                  "keys: n d layers alpha norm scale gamma rope mask unit_input samples seed threads\npresets:");
      for (const auto& p : gui::shipped_presets()) std::printf(" %s", p.name.c_str());
      std::printf("\n");
      return 0;
    } else {
      errors.push_back("unknown option '" + a + "' (see --help)");
    }
  }
  if (samples) {
    o.settings.samples = *samples;
    if (o.preset)
      for (auto& r : o.preset->figure.rows) r.settings.samples = *samples;
  }
  if (!o.export_dir.empty() && (!o.preset || o.preset->figure.rows.empty()))
    errors.push_back("--export-figure needs --preset with a figure (rows)");
  for (const auto& e : ms::validate(o.settings)) errors.push_back("--set " + e.setting + ": " + e.message);
  if (!errors.empty()) {
    for (const auto& e : errors) std::fprintf(stderr, "maskscope: %s\n", e.c_str());
    return 2;
  }
  return -1;
}

bool save_screenshot(const std::string& path, int w, int h) {
  std::vector<unsigned char> pixels(std::size_t(w) * h * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
  for (auto it = pixels.begin() + 3; it < pixels.end(); it += 4) *it = 255;  // opaque
  stbi_flip_vertically_on_write(1);
  std::string error;
  return gui::write_atomically(
      path,
      [&](const std::string& tmp) {
        return stbi_write_png(tmp.c_str(), w, h, 4, pixels.data(), w * 4) ? std::string() : "cannot write '" + tmp + "'";
      },
      error);
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, std::size_t(q * double(v.size() - 1) + 0.5))];
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (int code = parse_options(argc, argv, opt); code >= 0) return code;

  glfwSetErrorCallback([](int code, const char* msg) { std::fprintf(stderr, "maskscope: GLFW error %d: %s\n", code, msg); });
  if (!glfwInit()) return 1;
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GL_TRUE);
  glfwWindowHint(GLFW_SCALE_TO_MONITOR, GLFW_TRUE);
  GLFWwindow* window = glfwCreateWindow(opt.width, opt.height, "maskscope", nullptr, nullptr);
  if (!window) {
    std::fprintf(stderr, "maskscope: cannot open an OpenGL 3.3 core window\n");
    glfwTerminate();
    return 1;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(1);

  float xscale = 1, yscale = 1;
  glfwGetWindowContentScale(window, &xscale, &yscale);
  const float ui_scale = std::max(1.0f, std::max(xscale, yscale));

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
  const char* font = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
  if (std::filesystem::exists(font)) io.Fonts->AddFontFromFileTTF(font, 16.0f * ui_scale);
  if (opt.view.light_theme) ImGui::StyleColorsLight();
  else ImGui::StyleColorsDark();
  ImGui::GetStyle().ScaleAllSizes(ui_scale);
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 330 core");

  int exit_code = 0;
  {
    ms::RunOptions run_options;
    run_options.low_priority = true;  // the UI thread keeps its core
    run_options.on_publish = [] { glfwPostEmptyEvent(); };
    gui::Controller controller(opt.settings, run_options);
    gui::Views views(controller, run_options);
    views.options() = opt.view;
    if (opt.preset) {
      gui::Preset p = *opt.preset;
      p.settings = opt.settings;  // with --set and --samples applied
      p.view = opt.view;
      if (opt.export_scale) p.export_options = {*opt.export_scale, 0};
      if (opt.export_width) p.export_options.width = *opt.export_width;
      views.apply_preset(p);
    }
    const bool exporting = !opt.export_dir.empty();
    // Headless export: the figure's runs get the cores; the live run waits (shown as paused).
    if (exporting) controller.set_paused(true);
    bool exported = false;

    std::vector<double> frame_ms, first_heatmap_ms;
    int bench_restarts = 0, bench_frame = 0, last_restart_seen = controller.restarts();
    int frames_after_done = 0;
    auto last = std::chrono::steady_clock::now();
    while (!glfwWindowShouldClose(window)) {
      // Redraw on activity: while a run refines, poll; when idle, sleep until an event.
      const auto snap = controller.snapshot();
      const bool busy = !(snap->finished || snap->cancelled) || !views.figure_complete() || opt.exit_when_done ||
                        opt.ui_bench > 0;
      if (busy) glfwPollEvents();
      else glfwWaitEventsTimeout(0.5);

      if (opt.ui_bench > 0 && ++bench_frame % 8 == 0) {
        // Move alpha like a user would, a new value every 8 frames, each one restarting the run.
        ms::Settings s = controller.settings();
        s.alpha = 0.05 + 0.9 * double(bench_restarts % 37) / 36.0;
        controller.edit(s);
        ++bench_restarts;
      }

      ImGui_ImplOpenGL3_NewFrame();
      ImGui_ImplGlfw_NewFrame();
      ImGui::NewFrame();
      ImGui::SetNextWindowPos(ImVec2(0, 0));
      ImGui::SetNextWindowSize(io.DisplaySize);
      ImGui::Begin("##root", nullptr,
                   ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                       ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_MenuBar);
      views.draw(ui_scale);
      ImGui::End();
      ImGui::Render();
      int fw, fh;
      glfwGetFramebufferSize(window, &fw, &fh);
      glViewport(0, 0, fw, fh);
      const ImVec4 bg = views.options().light_theme ? ImVec4(1, 1, 1, 1) : ImVec4(0.1f, 0.1f, 0.11f, 1);
      glClearColor(bg.x, bg.y, bg.z, 1);
      glClear(GL_COLOR_BUFFER_BIT);
      ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());

      if (views.last_time_to_first_heatmap() >= 0 && last_restart_seen != controller.restarts()) {
        first_heatmap_ms.push_back(views.last_time_to_first_heatmap() * 1000.0);
        last_restart_seen = controller.restarts();
      }
      // F12: the whole window, auto-numbered, into the export folder.
      if (ImGui::IsKeyPressed(GLFW_KEY_F12, false)) {
        const std::string path = views.next_screenshot_path();
        const bool ok = save_screenshot(path, fw, fh);
        views.set_status_message(ok ? "screenshot " + path : "cannot write " + path);
        std::fprintf(ok ? stdout : stderr, "maskscope: %s %s\n", ok ? "screenshot" : "cannot write", path.c_str());
        std::fflush(stdout);
      }
      // Headless figures: export once every run of the figure has finished.
      if (exporting && !exported && views.figure_complete()) {
        const gui::ExportResult r = views.export_figure_now(opt.export_dir);
        exported = true;
        if (r.ok) {
          std::printf("maskscope: exported %zu files to %s (PNG %dx%d)\n", r.files.size(), opt.export_dir.c_str(), r.png_width,
                      r.png_height);
        } else {
          std::fprintf(stderr, "maskscope: export failed: %s\n", r.error.c_str());
          exit_code = 1;
        }
      }
      const bool done = exporting ? exported : views.showing_final_snapshot() && views.figure_complete();
      if (opt.exit_when_done && done) ++frames_after_done;
      if (!opt.screenshot.empty() && ((opt.exit_when_done && frames_after_done == 2) ||
                                      (opt.ui_bench > 0 && bench_restarts == opt.ui_bench))) {
        if (!save_screenshot(opt.screenshot, fw, fh)) std::fprintf(stderr, "maskscope: cannot write %s\n", opt.screenshot.c_str());
      }
      glfwSwapBuffers(window);
      const auto now = std::chrono::steady_clock::now();
      frame_ms.push_back(std::chrono::duration<double, std::milli>(now - last).count());
      last = now;
      if (opt.exit_when_done && frames_after_done >= 2) break;
      if (opt.ui_bench > 0 && bench_restarts >= opt.ui_bench) break;
    }
    if (opt.ui_bench > 0 || opt.exit_when_done) {
      if (frame_ms.size() > 1) frame_ms.erase(frame_ms.begin());  // the first frame includes start-up
      std::printf("frames %zu: mean %.1f ms, p95 %.1f ms, max %.1f ms; first heatmap after a change: median %.1f ms, "
                  "p95 %.1f ms over %zu runs\n",
                  frame_ms.size(), frame_ms.empty() ? 0 : std::accumulate(frame_ms.begin(), frame_ms.end(), 0.0) / double(frame_ms.size()),
                  percentile(frame_ms, 0.95), percentile(frame_ms, 1.0), percentile(first_heatmap_ms, 0.5),
                  percentile(first_heatmap_ms, 0.95), first_heatmap_ms.size());
    }
  }
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return exit_code;
}
