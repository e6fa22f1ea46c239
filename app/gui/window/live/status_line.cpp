// The status line: progress, speed, ETA, the largest standard error on screen, and why the run
// waits when it does (paused by the user, or figure runs have priority).
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/format.hpp"
#include "window/live/live.hpp"

namespace maskscope::gui {

void draw_status_line(const Controller& controller, const std::vector<PanelData>& panels, const std::string& message,
                      bool message_error) {
  const auto snap = controller.snapshot();
  const double rate = snap->samples_per_s;
  const double left = double(snap->samples_target() - snap->samples_done);
  const double max_se = largest_shown_se(panels);
  char eta[48] = "--";
  if (snap->finished) std::snprintf(eta, sizeof eta, "done");
  else if (controller.paused()) std::snprintf(eta, sizeof eta, "waiting");
  else if (rate > 0) std::snprintf(eta, sizeof eta, "%.1f s", left / rate);
  ImGui::Separator();
  if (controller.showing_tensors()) {
    ImGui::Text("tensors: %s   %s prompts (means over prompts, SE over prompts)   largest SE on screen %s",
                controller.tensors_label().c_str(), with_thousands(snap->samples_done).c_str(),
                se_text(max_se, snap->samples_done).c_str());
    if (!message.empty()) {
      ImGui::SameLine();
      ImGui::TextColored(message_error ? ImVec4(0.9f, 0.3f, 0.25f, 1) : ImVec4(0.5f, 0.8f, 0.5f, 1), "  %s",
                         message.c_str());
    }
    return;
  }
  if (controller.paused()) {
    ImGui::TextColored(ImVec4(0.95f, 0.55f, 0.15f, 1), "[paused: %s]", controller.pause_reason().c_str());
    ImGui::SameLine();
  }
  ImGui::Text("%s / %s samples%s   %s samples/s   ETA %s   largest SE on screen %s",
              with_thousands(snap->samples_done).c_str(), with_thousands(snap->samples_target()).c_str(),
              controller.auto_samples() ? " (auto for this n, d, L)" : "", with_thousands(std::int64_t(rate)).c_str(),
              eta, se_text(max_se, snap->samples_done).c_str());
  if (controller.auto_samples() && ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Auto sample count: about five seconds of both cores at these settings. Untick 'auto' "
        "beside the samples slider for more samples (smaller standard errors).");
  if (!message.empty()) {
    ImGui::SameLine();
    ImGui::TextColored(message_error ? ImVec4(0.9f, 0.3f, 0.25f, 1) : ImVec4(0.5f, 0.8f, 0.5f, 1), "  %s",
                       message.c_str());
  }
}

}  // namespace maskscope::gui
