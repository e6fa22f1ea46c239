// The key-press queue (see shortcuts.hpp).
#include "window/shortcuts.hpp"

#include <GLFW/glfw3.h>

namespace maskscope::gui {

namespace {
GLFWkeyfun backend_callback = nullptr;
std::vector<KeyPress> pending;
bool activity = false;

void on_key(GLFWwindow* window, int key, int scancode, int action, int mods) {
  if (backend_callback) backend_callback(window, key, scancode, action, mods);  // ImGui sees every key
  if (action == GLFW_PRESS) pending.push_back({key, mods});
  activity = true;
}

// The callbacks that were installed before ours (the backend's, or none), called first.
GLFWmousebuttonfun prev_button = nullptr;
GLFWscrollfun prev_scroll = nullptr;
GLFWcharfun prev_char = nullptr;
GLFWwindowfocusfun prev_focus = nullptr;
GLFWcursorenterfun prev_enter = nullptr;
GLFWcursorposfun prev_pos = nullptr;
GLFWwindowsizefun prev_size = nullptr;
GLFWwindowrefreshfun prev_refresh = nullptr;

void on_button(GLFWwindow* w, int b, int a, int m) {
  if (prev_button) prev_button(w, b, a, m);
  activity = true;
}
void on_scroll(GLFWwindow* w, double x, double y) {
  if (prev_scroll) prev_scroll(w, x, y);
  activity = true;
}
void on_char(GLFWwindow* w, unsigned int c) {
  if (prev_char) prev_char(w, c);
  activity = true;
}
void on_focus(GLFWwindow* w, int f) {
  if (prev_focus) prev_focus(w, f);
  activity = true;
}
void on_enter(GLFWwindow* w, int e) {
  if (prev_enter) prev_enter(w, e);
  activity = true;
}
void on_pos(GLFWwindow* w, double x, double y) {
  if (prev_pos) prev_pos(w, x, y);
  activity = true;
}
void on_size(GLFWwindow* w, int x, int y) {
  if (prev_size) prev_size(w, x, y);
  activity = true;
}
void on_refresh(GLFWwindow* w) {
  if (prev_refresh) prev_refresh(w);
  activity = true;
}
}  // namespace

void install_key_queue(GLFWwindow* window) { backend_callback = glfwSetKeyCallback(window, on_key); }

void install_activity_watch(GLFWwindow* window) {
  prev_button = glfwSetMouseButtonCallback(window, on_button);
  prev_scroll = glfwSetScrollCallback(window, on_scroll);
  prev_char = glfwSetCharCallback(window, on_char);
  prev_focus = glfwSetWindowFocusCallback(window, on_focus);
  prev_enter = glfwSetCursorEnterCallback(window, on_enter);
  prev_pos = glfwSetCursorPosCallback(window, on_pos);
  prev_size = glfwSetWindowSizeCallback(window, on_size);
  prev_refresh = glfwSetWindowRefreshCallback(window, on_refresh);
}

bool take_input_activity() {
  const bool a = activity;
  activity = false;
  return a;
}

std::vector<KeyPress> take_key_presses() {
  std::vector<KeyPress> out;
  out.swap(pending);
  return out;
}

}  // namespace maskscope::gui
