// A real model's attention tensors in the window (tensor_analysis.hpp): opened within the window's
// memory budget, and compared in the Figure tab with the parameter-free decoder at the same n.
#include "window/views/views.hpp"

#include <algorithm>

#include "core/formats/tensor_analysis.hpp"
#include "core/run/resources.hpp"

namespace maskscope::gui {

bool Views::open_tensors(const std::string& folder, std::string& error) {
  try {
    TensorSet t = maskscope::open_tensors(folder);
    if (t.hidden) t.histograms = 100;  // Zuo et al.'s Fig. 2 / Fig. 13 from the hidden states (Histograms tab)
    if (std::uint64_t need = tensor_analysis_bytes(t); need > kWindowMemoryBudget) {
      error = folder + ": " + std::to_string(t.L) + " layers x " + std::to_string(t.H) +
              " heads at T = " + std::to_string(t.T) + " need about " + bytes_text(need) + "; the window allows " +
              bytes_text(kWindowMemoryBudget) + " (maskscope-cli analyze has no such limit)";
      return false;
    }
    auto snap = std::make_shared<Snapshot>(analyze_tensors(t));
    tensor_info_ = {folder, t.model, mask_to_string(tensor_settings(t)), t.P, t.L, t.H, t.T, t.d, t.weights != nullptr};
    const std::string label = (t.model.empty() ? folder : t.model) + " (" + std::to_string(t.L) + " layers x " +
                              std::to_string(t.H) + " heads, T " + std::to_string(t.T) + ")";
    controller_.show_tensors(std::move(snap), label);
    set_status_message("opened " + folder);
    return true;
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
}

void Views::compare_tensors_with_simulation() {
  auto snap = controller_.snapshot();
  if (!controller_.showing_tensors() || !snap) return;
  const Settings model = snap->settings;
  Settings sim;  // the parameter-free decoder (LN-recency's setting) at the model's n
  sim.n = model.n;
  sim.layers = std::min(model.layers, Limits::layers_max);
  sim.samples = auto_sample_count(sim);
  FigureSpec spec;
  spec.title =
      tensor_info_.model.empty() ? "Model vs simulation" : tensor_info_.model + " vs the parameter-free decoder";
  spec.kind = FigureKind::heatmaps;
  spec.layers.clear();
  for (int l = 1; l <= std::min(model.layers, 4); ++l) spec.layers.push_back(l);
  FigureRow m;
  // Row titles are drawn beside the panels: a long model name would run over them.
  m.label = tensor_info_.model.empty() || tensor_info_.model.size() > 24 ? "model" : tensor_info_.model;
  m.settings = model;
  m.quantity = view_.quantity;
  const Transform transform = transform_of(view_.tab);
  m.transform = transform;
  FigureRow p;
  p.label = "parameter-free";
  p.settings = sim;
  p.quantity = view_.quantity;
  if (tensor_info_.d == 0 && quantity_info(p.quantity).hidden_states)
    m.quantity = p.quantity = Quantity::score;  // no hidden states: no cosines or norms to compare
  p.transform = transform;
  spec.rows = {m, p};
  figure_.runs().set_stored({{model, snap}});
  figure_.spec() = spec;
  figure_.layers_text() = layers_to_text(spec.layers);
  figure_.refresh(true);
  view_.tab = Tab::figure;
  requested_tab_ = true;
}

}  // namespace maskscope::gui
