// The key-press queue (see shortcuts.hpp).
#include "shortcuts.hpp"

#include <GLFW/glfw3.h>

namespace maskscope::gui {

namespace {
GLFWkeyfun backend_callback = nullptr;
std::vector<KeyPress> pending;

void on_key(GLFWwindow* window, int key, int scancode, int action, int mods) {
  if (backend_callback) backend_callback(window, key, scancode, action, mods);  // ImGui sees every key
  if (action == GLFW_PRESS) pending.push_back({key, mods});
}
}  // namespace

void install_key_queue(GLFWwindow* window) { backend_callback = glfwSetKeyCallback(window, on_key); }

std::vector<KeyPress> take_key_presses() {
  std::vector<KeyPress> out;
  out.swap(pending);
  return out;
}

}  // namespace maskscope::gui
