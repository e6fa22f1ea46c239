// The window in the page (browser.hpp): the link as the command line, downloads, the clipboard, the
// browser's frame loop, and the state the page's tests read (docs/web.md).
#include <GLFW/glfw3.h>
#include <emscripten.h>
#include <emscripten/html5.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>

#include "core/formats/result_json.hpp"
#include "core/run/kernel_info.hpp"
#include "core/model/version.hpp"
#include "core/model/settings.hpp"
#include "core/model/threading.hpp"
#include "core/run/runner.hpp"
#include "common/controller.hpp"
#include "common/view_link.hpp"
#include "web/png_from_svg.hpp"
#include "window/browser.hpp"
#include "window/views/views.hpp"

// clang-format off
EM_JS(char*, ms_location_search, (), {
  const s = location.search;
  const n = lengthBytesUTF8(s) + 1;
  const p = _malloc(n);
  stringToUTF8(s, p, n);
  return p;
});
EM_JS(char*, ms_page_address, (), {
  const s = location.origin + location.pathname;
  const n = lengthBytesUTF8(s) + 1;
  const p = _malloc(n);
  stringToUTF8(s, p, n);
  return p;
});
EM_JS(void, ms_show_errors, (const char* text), {
  if (Module.maskscopeShowErrors) Module.maskscopeShowErrors(UTF8ToString(text));
});
// A copy out of the shared heap (a Blob cannot hold a view of shared memory).
EM_JS(void, ms_download, (const char* name, const unsigned char* data, int size, const char* mime), {
  const bytes = HEAPU8.slice(data, data + size);
  Module.maskscopeOffer(UTF8ToString(name), new Blob([bytes], {type: UTF8ToString(mime)}));
});
EM_JS(void, ms_bundle_begin, (), { Module.maskscopeBundleBegin(); });
EM_JS(void, ms_bundle_end, (const char* zip_name), { Module.maskscopeBundleEnd(UTF8ToString(zip_name)); });
EM_JS(void, ms_download_svg_as_png, (const char* name, const char* svg, int width, int height), {
  Module.maskscopeSvgToPng(UTF8ToString(name), UTF8ToString(svg), width, height);
});
EM_JS(void, ms_clipboard, (const char* text), {
  Module.maskscopeCopy(UTF8ToString(text));
});
EM_JS(void, ms_full_screen, (int on), {
  if (on && !document.fullscreenElement) document.documentElement.requestFullscreen().catch(function () {});
  if (!on && document.fullscreenElement) document.exitFullscreen().catch(function () {});
});
// clang-format on

namespace maskscope::gui::browser {

namespace {

std::string take_js_string(char* p) {
  std::string s = p ? p : "";
  std::free(p);
  return s;
}

// What the page's tests read through maskscope_web_state() (tests/web/web_page_test.py).
std::string state_text = "{}";
std::vector<std::string> shown_errors;
const Snapshot* last_result_for = nullptr;
std::string result_text;

// The one-thread page's slice of computing per frame: at 60 frames a second the drawing keeps
// the rest (a slice is whole blocks, so it ends at the first block boundary past this).
constexpr auto kStepBudget = std::chrono::milliseconds(10);

// The intervals between the last frames, for the state's frame_ms_p95 (how responsive the page is).
std::vector<double> frame_ms;
std::size_t frame_next = 0;
std::chrono::steady_clock::time_point last_frame;

void note_frame() {
  const auto now = std::chrono::steady_clock::now();
  if (last_frame.time_since_epoch().count() != 0) {
    const double ms = std::chrono::duration<double, std::milli>(now - last_frame).count();
    if (frame_ms.size() < 600) frame_ms.push_back(ms);
    else frame_ms[frame_next++ % frame_ms.size()] = ms;
  }
  last_frame = now;
}

double frame_ms_p95() {
  if (frame_ms.empty()) return 0;
  std::vector<double> v = frame_ms;
  const std::size_t k = std::min(v.size() - 1, std::size_t(0.95 * double(v.size())));
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(k), v.end());
  return v[k];
}

bool page_wants_json() {
  for (const auto& [name, value] : parse_query(take_js_string(ms_location_search())))
    if (name == "json") return value == "1" || value == "true";
  return false;
}

std::string mime_of(const std::string& name) {
  const auto ends = [&](const char* e) {
    const std::string s(e);
    return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
  };
  if (ends(".png")) return "image/png";
  if (ends(".svg")) return "image/svg+xml";
  if (ends(".json")) return "application/json";
  if (ends(".csv")) return "text/csv";
  if (ends(".md")) return "text/markdown";
  return "application/octet-stream";
}

}  // namespace

std::vector<std::string> page_arguments(std::vector<std::string>& errors) {
  return link_arguments(parse_query(take_js_string(ms_location_search())), {"json"}, errors);
}

void show_page_errors(const std::vector<std::string>& errors) {
  shown_errors = errors;
  std::string text;
  for (const auto& e : errors) text += e + "\n";
  text += "The page opened with the default settings.";
  ms_show_errors(text.c_str());
}

void offer_files(const std::string& dir, const std::vector<std::string>& files) {
  // Several files (an export) go as one zip named after the folder: one download to allow, not one per file.
  const bool bundle = files.size() > 1;
  std::string zip_name = dir.substr(dir.find_last_of('/') + 1);
  if (zip_name.empty() || zip_name == "." || zip_name == "..") zip_name = "maskscope-export";
  if (bundle) ms_bundle_begin();
  for (const std::string& name : files) {
    const std::string path = dir.empty() ? name : dir + "/" + name;
    std::ifstream in(path, std::ios::binary);
    if (!in) continue;
    const std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string base = path.substr(path.find_last_of('/') + 1);
    if (const auto size = web::take_png_from_svg(path)) {
      ms_download_svg_as_png(base.c_str(), content.c_str(), size->first, size->second);
    } else {
      ms_download(base.c_str(), reinterpret_cast<const unsigned char*>(content.data()), int(content.size()),
                  mime_of(base).c_str());
    }
  }
  if (bundle) ms_bundle_end((zip_name + ".zip").c_str());
}

std::string copy_link(const Settings& settings, const ViewOptions& view) {
  const std::string link = take_js_string(ms_page_address()) + "?" + view_query(settings, view);
  ms_clipboard(link.c_str());
  return link;
}

void full_screen(bool on) { ms_full_screen(on ? 1 : 0); }

void before_frame(GLFWwindow* window) {
  // The canvas fills the page: the window follows its size.
  double css_w = 0, css_h = 0;
  emscripten_get_element_css_size("#canvas", &css_w, &css_h);
  int w = 0, h = 0;
  glfwGetWindowSize(window, &w, &h);
  if (css_w >= 1 && css_h >= 1 && (int(css_w) != w || int(css_h) != h))
    glfwSetWindowSize(window, int(css_w), int(css_h));
}

void after_frame(Controller& controller, Views& views) {
  static const bool want_json = page_wants_json();
  const auto snap = controller.snapshot();
  nlohmann::json j = {{"samples_done", snap->samples_done},
                      {"samples_target", snap->samples_target()},
                      {"finished", snap->finished},
                      {"final_on_screen", views.showing_final_snapshot()},
                      {"tab", std::string(to_string(views.options().tab))},
                      {"samples_per_s", snap->samples_per_s},
                      {"elapsed_s", snap->elapsed_s},
                      {"threads", resolved_threads(controller.settings())},
                      {"threads_available", kThreadsAvailable},
                      {"frame_ms_p95", frame_ms_p95()},
                      {"frames", frame_ms.size()},
                      {"errors", shown_errors}};
  if (want_json && snap->finished && snap.get() != last_result_for) {
    // The command-line tool's `run` JSON (cmd_run.cpp) for the same settings.
    nlohmann::json r = snapshot_to_json(*snap);
    r["maskscope_version"] = kVersion;
    r["kernel"] = kernel_name(snap->settings);
    r["threads_used"] = resolved_threads(snap->settings);
    result_text = r.dump(1);
    last_result_for = snap.get();
    std::printf("maskscope: result %s\n", result_text.c_str());
  }
  if (want_json && !result_text.empty()) j["result"] = nlohmann::json::parse(result_text);
  state_text = j.dump();
}

void run_main_loop(std::function<void()> frame) {
  static std::function<void()> f = std::move(frame);
  emscripten_set_main_loop(
      [] {
        note_frame();
        // The one-thread page (no SharedArrayBuffer): the runs compute a slice of each frame, then the
        // frame draws what they published.
        if (!kThreadsAvailable) step_runs(kStepBudget);
        f();
      },
      0, true);
  std::abort();  // not reached: the loop above unwinds main
}

}  // namespace maskscope::gui::browser

// The page's tests read this (Module.ccall('maskscope_web_state', 'string')).
extern "C" EMSCRIPTEN_KEEPALIVE const char* maskscope_web_state() {
  return maskscope::gui::browser::state_text.c_str();
}
