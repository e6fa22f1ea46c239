// The left column's view options: what each panel shows (scores, weights, cosines, norms, a stage's Gram
// matrix), the head, the colour range and maps, the diagonal, noise and the theme.
#include <imgui.h>

#include <algorithm>
#include <string>

#include "window/live/control_helpers.hpp"
#include "window/widgets.hpp"

namespace maskscope::gui {

void view_controls(ViewOptions& view, const Settings& s) {
  if (ImGui::BeginCombo("show", quantity_label(view.quantity, s.random_weights()).c_str())) {
    bool stages = false;
    for (const QuantityInfo& q : quantities()) {
      if (q.is_stage() && !stages) ImGui::Separator();  // the stages' Gram matrices after the layer's maps
      stages = q.is_stage();
      if (!family_has(s, q.id)) continue;  // stages this family lacks (keys, W_O and the MLP of the network)
      if (ImGui::Selectable(quantity_label(q.id, s.random_weights()).c_str(), q.id == view.quantity))
        view.quantity = q.id;
    }
    ImGui::EndCombo();
  }
  explain(
      "Scores S = scale Q K^T (pre-softmax), weights A = softmax(S), the cosine similarity of the layer's "
      "outputs (Zuo et al., whose adjacency score reads it), or their norms ||x_i|| per position (Chi et al.'s "
      "variance signal; Zuo et al. Table 6). For the random-weight network, cosines and norms start at layer 0, "
      "the embeddings.\n\nGram / cos: the mean inner products <s_i, s_j> or cosines of one stage of each layer "
      "(Behind RoPE Fig. 3 and 8): the input, Norm(x), queries and keys, the attention's mix before W_O, its "
      "output after W_O, after the residual and after the MLP. The scores stage is S itself. Picking one turns "
      "on the stage Gram matrices (the run restarts; they cost n^2 d per stage and sample).");
  {
    const bool heads = s.random_weights() && s.heads > 1;
    const FamilyOnly guard(heads && quantity_info(view.quantity).per_head);
    if (!heads) view.head = -1;
    view.head = std::min(view.head, s.heads - 1);
    int h = view.head + 1;
    if (ImGui::SliderInt("head", &h, 0, std::max(1, s.heads), h == 0 ? "mean of heads" : "head %d",
                         ImGuiSliderFlags_AlwaysClamp))
      view.head = h - 1;
    explain_family(
        "Score and weight maps and RP of one head, or their mean over heads (0). Cosines and norms belong "
        "to the layer, not to a head.",
        guard.off, "\n\n(Greyed: needs the random-weight network with several heads, showing S or A.)");
  }
  enum_combo("colour range", view.range, kRangeModeNames, {"all cells", "visible cells", "robust (1%-99%)"});
  explain(
      "all cells: min to max, so one large cell (the (0,0) score sqrt(d)) can swamp the rest; visible: "
      "leaves out the hidden diagonal; robust: the 1% and 99% quantiles of the visible cells. Clipped "
      "values are marked by triangles on the colorbar.");
  // The sequential and the diverging maps of kColormapNames, as the combos offer them.
  static constexpr EnumTable<ColormapId, 3> kSequential{
      {{ColormapId::rocket, "rocket"}, {ColormapId::viridis, "viridis"}, {ColormapId::magma, "magma"}}};
  static constexpr EnumTable<ColormapId, 2> kDiverging{
      {{ColormapId::rdbu, "RdBu"}, {ColormapId::coolwarm, "coolwarm"}}};
  enum_combo("colormap", view.sequential, kSequential);
  explain("Sequential map for scores, weights and cosines (perceptually uniform, from matplotlib / seaborn).");
  enum_combo("diverging", view.diverging, kDiverging);
  explain("Diverging map, centred on 0, for the diagonal-normalized view.");
  ImGui::Checkbox("hide diagonal (except row 0)", &view.hide_diagonal);
  explain(
      "Mask the diagonal, as LN-recency Fig. 1 does: S_ii = ||y_i||^2 scale dominates every row. Row 0 keeps "
      "its only cell. For cosines the whole diagonal (always 1) is hidden.");
  ImGui::Checkbox("grey noise (|value| < 2 SE)", &view.grey_noise);
  explain(
      "In the diagonal-normalized view, grey the cells whose value is within 2 standard errors of 0, so "
      "that noise looks like noise and not like structure.");
  ImGui::Checkbox("one colour range for all layers", &view.shared_range);
  explain("Share one range across the layer panels, so colours compare across layers.");
  if (ImGui::Checkbox("light theme", &view.light_theme)) {
    if (view.light_theme) ImGui::StyleColorsLight();
    else ImGui::StyleColorsDark();
  }
  explain("Light theme: better on projectors and in screenshots for slides.");
}

}  // namespace maskscope::gui
