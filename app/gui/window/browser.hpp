// What the window does differently in the browser build (app/gui/web/web_page.cpp, docs/web.md): its
// command line comes from the page's link, files go to the browser as downloads, the browser calls
// each frame. On the desktop every function here does nothing, so the window's code calls them
// unconditionally and this header is the only #ifdef between the two.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/model/settings.hpp"
#include "common/view_options.hpp"

struct GLFWwindow;

namespace maskscope::gui {
class Controller;
class Views;
}  // namespace maskscope::gui

namespace maskscope::gui::browser {

#ifdef __EMSCRIPTEN__
inline constexpr bool kInBrowser = true;
// The page's URL query as the window's command line (view_link.hpp); errors name the bad parameter.
std::vector<std::string> page_arguments(std::vector<std::string>& errors);
// Shows a refused link's messages above the window (the window itself opens with the defaults).
void show_page_errors(const std::vector<std::string>& errors);
// Hands written files to the browser as downloads (`dir` joined with each name; a PNG written as its
// SVG by figure_png_web.cpp is drawn by the browser at its size first).
void offer_files(const std::string& dir, const std::vector<std::string>& files);
// The page's link for this view (the page's address with view_query) to the clipboard; returns it.
std::string copy_link(const Settings& settings, const ViewOptions& view);
// Presentation mode: the page full screen (on), or back (off).
void full_screen(bool on);
// Fits the window to the page's canvas before a frame.
void before_frame(GLFWwindow* window);
// The state the page's tests read (samples, finished, the result JSON with ?json=1).
void after_frame(Controller& controller, Views& views);
// Hands `frame` to the browser, which calls it once per display refresh; never returns.
[[noreturn]] void run_main_loop(std::function<void()> frame);
#else
inline constexpr bool kInBrowser = false;
inline std::vector<std::string> page_arguments(std::vector<std::string>&) { return {}; }
inline void show_page_errors(const std::vector<std::string>&) {}
inline void offer_files(const std::string&, const std::vector<std::string>&) {}
inline std::string copy_link(const Settings&, const ViewOptions&) { return {}; }
inline void full_screen(bool) {}
inline void before_frame(GLFWwindow*) {}
inline void after_frame(Controller&, Views&) {}
inline void run_main_loop(std::function<void()>) {}
#endif

}  // namespace maskscope::gui::browser
