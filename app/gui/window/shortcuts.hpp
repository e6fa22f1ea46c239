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

// Input activity for drawing frames on demand: the window sleeps until an event, and after input
// it draws a few frames for Dear ImGui's hover and drag states to settle. Chains GLFW's mouse,
// scroll, character, focus, cursor-enter, size and refresh callbacks to the backend's (call after
// ImGui_ImplGlfw_InitForOpenGL); key presses count through install_key_queue.
void install_activity_watch(GLFWwindow* window);
// Whether any input or window event arrived since the last call.
bool take_input_activity();

}  // namespace maskscope::gui
