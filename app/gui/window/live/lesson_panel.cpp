// The lesson's step panel: title, the text with live numbers, equations, the theory overlay, and
// the step buttons; large at the bottom in presentation mode, a band above the maps otherwise.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "core/model/theory.hpp"
#include "common/format.hpp"
#include "window/plot.hpp"
#include "window/views/views.hpp"

namespace maskscope::gui {

namespace {

// Behind RoPE Sec. 3.2: the layer-1 weight on the diagonal, e / (e + (i-1) e^alpha), beside the
// simulated A_ii (1-based i), when the step asks for it.
void layer1_weight_overlay(const Snapshot* snap, ImVec2 size) {
  if (!snap || snap->layers.empty()) return;
  const Settings& s = snap->settings;
  PlotSeries theory, simulated;
  theory.label = "e / (e + (i-1) e^alpha)";
  theory.markers = false;
  theory.thickness = 2.5f;
  theory.color = IM_COL32(255, 127, 14, 255);
  simulated.label = "simulated A_ii";
  simulated.color = IM_COL32(31, 119, 180, 255);
  simulated.thickness = 0.0f;  // dots with error bars over the closed form's line
  const LayerStats& l1 = snap->layers[0];
  for (int i = 1; i <= s.n; ++i) {
    theory.x.push_back(i);
    theory.y.push_back(theory::behind_rope_layer1_weight(i, i, s.alpha));
    const std::size_t e = std::size_t(i - 1) * s.n + std::size_t(i - 1);
    if (snap->samples_done > 0 && e < l1.weight_mean.size() && std::isfinite(l1.weight_mean[e])) {
      simulated.x.push_back(i);
      simulated.y.push_back(l1.weight_mean[e]);
      simulated.err.push_back(l1.weight_se[e]);
    }
  }
  PlotSpec spec;
  spec.title = "layer 1, weight on itself (Behind RoPE Sec. 3.2)";
  spec.x_label = "query i (1-based)";
  spec.integer_x = s.n <= 20;
  plot("##lesson_theory", size, spec, {theory, simulated});
}

// Text in lines no wider than `width`, broken at spaces only: ImGui's own wrapping may break after a '.', which
// split "0.63777 +- 0.00024" across lines in presentation mode (issue 48). A word wider than the line gets its own.
void text_wrapped_at_spaces(const std::string& text, float width) {
  std::size_t para = 0;
  while (para <= text.size()) {
    const std::size_t end = std::min(text.find('\n', para), text.size());
    std::string line;
    for (std::size_t at = para; at < end;) {
      const std::size_t space = std::min(text.find(' ', at), end);
      const std::string word = text.substr(at, space - at);
      at = space + 1;
      const std::string longer = line.empty() ? word : line + " " + word;
      if (!line.empty() && ImGui::CalcTextSize(longer.c_str()).x > width) {
        ImGui::TextUnformatted(line.c_str());
        line = word;
      } else {
        line = longer;
      }
    }
    ImGui::TextUnformatted(line.c_str());
    para = end + 1;
  }
}

}  // namespace

void Views::draw_lesson_panel(float ui_scale, bool large) {
  if (!lesson_) return;
  const LessonStep& step = lesson_->current();
  const Lesson& lesson = lesson_->lesson();
  const float fh = ImGui::GetFontSize();
  const float height = large ? 0.0f : fh * (step.equations.empty() ? 7.5f : 9.0f);
  ImGui::BeginChild("##lesson", ImVec2(0, height), true);
  const bool overlay = step.theory == LessonTheory::layer1_weights;
  const float text_w = ImGui::GetContentRegionAvail().x * (overlay ? 0.62f : 1.0f);
  ImGui::BeginGroup();
  // Counter and progress: visible but quiet.
  const auto snap = controller_.snapshot();
  const double done =
      snap && snap->samples_target() > 0 ? double(snap->samples_done) / double(snap->samples_target()) : 0;
  ImGui::TextDisabled("%s   step %zu / %zu   %s", lesson.title.c_str(), lesson_->step() + 1, lesson.steps.size(),
                      done < 1 ? ("run " + std::to_string(int(100 * done)) + "%").c_str() : "converged");
  ImGui::SetWindowFontScale(large ? 1.35f : 1.12f);
  ImGui::TextUnformatted(step.title.c_str());
  ImGui::SetWindowFontScale(large ? 1.1f : 1.0f);
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + text_w);
  text_wrapped_at_spaces(lesson_text(step.text, on_screen_.snap.get()), text_w);
  for (const std::string& eq : step.equations)
    ImGui::TextColored(ImVec4(0.95f, 0.65f, 0.25f, 1.0f), "    %s", eq.c_str());
  ImGui::PopTextWrapPos();
  ImGui::SetWindowFontScale(1.0f);
  if (!large) {
    ImGui::BeginDisabled(lesson_->step() == 0);
    if (ImGui::ArrowButton("##prev", ImGuiDir_Left)) previous_step();
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::BeginDisabled(lesson_->step() + 1 >= lesson.steps.size());
    if (ImGui::ArrowButton("##next", ImGuiDir_Right)) next_step();
    ImGui::EndDisabled();
    ImGui::SameLine();
    if (ImGui::Button("Present (F5)")) set_presenting(true);
    ImGui::SameLine();
    if (ImGui::Button("Close lesson")) close_lesson();
    ImGui::SameLine();
    ImGui::TextDisabled("arrows or Page Up / Down: steps");
  }
  ImGui::EndGroup();
  if (overlay) {
    ImGui::SameLine();
    layer1_weight_overlay(on_screen_.snap.get(), ImVec2(0, large ? ImGui::GetContentRegionAvail().y : fh * 7.0f));
  }
  (void)ui_scale;
  ImGui::EndChild();
}

}  // namespace maskscope::gui
