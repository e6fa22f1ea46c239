// Keyboard shortcuts that are never lost: Dear ImGui 1.86's GLFW backend samples key state once a
// frame, so a press and release inside one frame (xdotool, presenter remotes) vanish. GLFW's key
// callback, chained with the backend's, queues every press; the frame takes the queue.
#pragma once

#include <vector>

struct GLFWwindow;

namespace maskscope::gui {

struct KeyPress {
  int key = 0;   // GLFW_KEY_*
  int mods = 0;  // GLFW_MOD_*
};

// Installs the queueing callback; call after ImGui_ImplGlfw_InitForOpenGL (it chains to it).
void install_key_queue(GLFWwindow* window);
// The presses since the last call, in order.
std::vector<KeyPress> take_key_presses();

}  // namespace maskscope::gui
