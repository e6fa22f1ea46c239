// The h(j) tab: the closed form that applies to the settings (LN-recency Eq. 42 for layernorm,
// Behind RoPE h(i) for l2, none otherwise, with the reason) beside the simulation after layer 1.
#include <imgui.h>

#include <cmath>
#include <cstdio>

#include "core/model/theory.hpp"
#include "common/format.hpp"
#include "common/h_of_j.hpp"
#include "window/live/live.hpp"
#include "window/plot.hpp"

namespace maskscope::gui {

namespace {

ImU32 series_u32(std::size_t k, float alpha = 1.0f) {
  const auto c = series_color(k);
  return ImGui::ColorConvertFloat4ToU32(ImVec4(c[0], c[1], c[2], alpha));
}

}  // namespace

void draw_h_of_j_tab(const Snapshot& snap, const ViewOptions& view) {
  if (snap.layers.empty() || snap.samples_done == 0) {
    ImGui::TextUnformatted("Simulating...");
    return;
  }
  const Settings& s = snap.settings;
  const int n = s.n;
  const LayerStats& l1 = snap.layers[0];
  const ImU32 sim_colour = view.light_theme ? IM_COL32(0, 0, 0, 255) : IM_COL32(240, 240, 240, 255);
  std::vector<double> js(n);
  for (int j = 0; j < n; ++j) js[j] = j + 1;
  const HTheory kind = h_theory(s);

  ImGui::PushTextWrapPos(ImGui::GetContentRegionAvail().x);
  ImGui::TextDisabled("%s", h_theory_note(s).c_str());
  ImGui::PopTextWrapPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();

  std::vector<PlotSeries> series;
  PlotSpec spec;
  spec.x_label = "key index j (1-based, as in the paper; heatmap index = j - 1)";
  spec.integer_x = n <= 20;
  if (kind == HTheory::behind_rope) {
    // Behind RoPE Eq. 3: h(i) = ||x_i^(1)|| for unit inputs, scale 1.
    PlotSeries th, sm;
    th.label = "Behind RoPE h(i), Eq. 3";
    th.x = js;
    th.color = series_u32(3);
    th.thickness = 2.5f;
    th.markers = false;
    for (int i = 1; i <= n; ++i) th.y.push_back(theory::behind_rope_h(i, s.alpha, s.gamma));
    sm.label = "simulated ||x_i^(1)||";
    sm.x = js;
    sm.y = l1.norm_mean;
    sm.err = l1.norm_se;
    sm.color = sim_colour;
    series = {th, sm};
    spec.title = "h(i) = ||x_i|| after layer 1 (Behind RoPE Sec. 3.2)";
    spec.x_label = "position i (1-based, as in the paper; heatmap index = i - 1)";
    spec.y_label = "||x_i^(1)||";
  } else {
    // LN-recency Eq. 42 for the paper's family of alpha (one fixed colour each) and the current alpha.
    const double family[] = {0.0, 0.2, 0.4, 0.6, 0.8};
    bool current_in_family = false;
    if (kind == HTheory::ln_recency_eq42) {
      for (std::size_t k = 0; k < 5; ++k) {
        const bool current = std::fabs(family[k] - s.alpha) < 1e-9;
        current_in_family = current_in_family || current;
        PlotSeries t;
        char label[64];
        std::snprintf(label, sizeof label, "Eq. 42, alpha = %.1f%s", family[k], current ? " (current)" : "");
        t.label = label;
        t.x = js;
        t.y = theory::ln_recency_h_curve(n, s.d, family[k], s.gamma, false);
        for (double& v : t.y) v /= t.y[0] > 0 ? t.y[0] : 1.0;
        t.color = series_u32(k, current ? 1.0f : 0.6f);
        t.thickness = current ? 3.0f : 1.3f;
        t.markers = false;
        t.dashed = !current;
        series.push_back(std::move(t));
      }
      if (!current_in_family) {
        PlotSeries t;
        char label[64];
        std::snprintf(label, sizeof label, "Eq. 42, alpha = %.2f (current)", s.alpha);
        t.label = label;
        t.x = js;
        t.y = theory::ln_recency_h_curve(n, s.d, s.alpha, s.gamma, false);
        for (double& v : t.y) v /= t.y[0] > 0 ? t.y[0] : 1.0;
        t.color = series_u32(6);
        t.thickness = 3.0f;
        t.markers = false;
        series.push_back(std::move(t));
      }
    }
    PlotSeries sim;
    sim.label = "simulated 1/||x_j^(1)||, scaled to 1 at j = 1";
    sim.x = js;
    sim.color = sim_colour;
    sim.thickness = 2.0f;
    scaled_inverse_norms(l1, 1.0, sim.y, sim.err);
    series.push_back(std::move(sim));
    char title[160];
    std::snprintf(title, sizeof title, "h(j) / h(1) after layer 1 (d = %d, gamma = %.2f)%s", s.d, s.gamma,
                  kind == HTheory::ln_recency_eq42 ? ": LN-recency Eq. 42 vs simulation" : "");
    spec.title = title;
    spec.y_label = "h(j) / h(1)";
  }
  plot("##hofj", ImVec2(avail.x, avail.y), spec, series);
}

}  // namespace maskscope::gui
