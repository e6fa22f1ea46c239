// Help: a one-page "what am I looking at" and the keyboard shortcuts.
#include <imgui.h>

#include "window/live/live.hpp"

namespace maskscope::gui {

namespace {

void wrapped(const char* text) {
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40);
  ImGui::TextUnformatted(text);
  ImGui::PopTextWrapPos();
  ImGui::Spacing();
}

}  // namespace

void draw_help_windows(bool* show_guide, bool* show_keys) {
  if (*show_guide) {
    ImGui::SetNextWindowSize(ImVec2(ImGui::GetFontSize() * 42, 0), ImGuiCond_Appearing);
    if (ImGui::Begin("What am I looking at?", show_guide, ImGuiWindowFlags_AlwaysAutoResize)) {
      wrapped(
          "maskscope simulates a transformer decoder with no parameters and no positional encoding "
          "(docs/model.md sections 1-2): random input tokens, a normalization, attention scores S = scale Q K^T "
          "under a mask, weights A = softmax(S), and outputs A Y + gamma X, layer after layer. Every picture "
          "is an average over many random samples, refined while you watch; hover a cell for its value and "
          "standard error.");
      wrapped(
          "Attention tab: one n x n map per layer, query i down, key j across (0-based). Without the causal "
          "mask nothing depends on position (all tokens are exchangeable). With it, the first token is seen "
          "by every query and later layers see position: LayerNorm turns this into recency, nearer keys score "
          "higher (LN-recency), and anisotropic inputs (alpha) amplify it while the residual damps it.");
      wrapped(
          "Diagonal-normalized tab: each diagonal (fixed offset i - j) minus its mean. A purely relative "
          "pattern, like RoPE's without a mask, becomes 0 (grey where within 2 SE of 0); what remains is "
          "absolute position (Behind RoPE Fig. 4).");
      wrapped(
          "h(j) tab: the inverse norm after layer 1, which sets the layer-2 scores S_ij ~ g(i) h(j): rising in "
          "j means recency. The closed form that applies is drawn beside the simulation.");
      wrapped(
          "RP (recency probability): the chance that a query scores the nearer of two earlier keys higher; "
          "0.5 = no bias. Adjacency: the chance that a nearer token's output is more similar (Zuo et al.). "
          "Ties count 1/2; a 'ties' flag means the representations collapsed.");
    }
    ImGui::End();
  }
  if (*show_keys) {
    if (ImGui::Begin("Keyboard shortcuts", show_keys, ImGuiWindowFlags_AlwaysAutoResize)) {
      if (ImGui::BeginTable("##keys", 2, ImGuiTableFlags_RowBg)) {
        const char* rows[][2] = {{"Ctrl+Z", "undo the last settings change"},
                                 {"Ctrl+Shift+Z, Ctrl+Y", "redo"},
                                 {"F12", "save a screenshot of the window into the export folder"},
                                 {"F1", "this help"}};
        for (const auto& r : rows) {
          ImGui::TableNextRow();
          ImGui::TableNextColumn();
          ImGui::TextUnformatted(r[0]);
          ImGui::TableNextColumn();
          ImGui::TextUnformatted(r[1]);
        }
        ImGui::EndTable();
      }
    }
    ImGui::End();
  }
}

}  // namespace maskscope::gui
