// The Leakage tab (Ruscio et al., `004`; docs/model.md section 8): dR^2 per layer for the causal run and
// its bidirectional twin (same settings and seed, so the same random draws), the causal-mask share,
// the query-position bin profile, and a split of one layer's mean logits into the saturated
// relative baseline (one mean per offset) and the absolute part that dR^2 measures.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "core/stats/leakage.hpp"
#include "common/format.hpp"
#include "common/ticks.hpp"
#include "window/live/live.hpp"
#include "window/plot.hpp"

namespace maskscope::gui {

namespace {

constexpr int kSplitSlot = 200;  // heatmap texture slots of the relative / absolute split

ImU32 u32(std::size_t k, float alpha = 1.0f) {
  const auto c = series_color(k);
  return ImGui::ColorConvertFloat4ToU32(ImVec4(c[0], c[1], c[2], alpha));
}

// dR^2 per layer as grouped bars (causal, bidirectional) with +-1 SE whiskers.
void leakage_bars(const char* id, ImVec2 size, const Snapshot& causal, const Snapshot* bi) {
  ImGui::BeginChild(id, size, false, ImGuiWindowFlags_NoScrollbar);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float fh = ImGui::GetFontSize();
  const float left = fh * 4.2f, bottom = fh * 2.6f, top = fh * 2.6f;
  const ImVec2 p0(o.x + left, o.y + top), p1(o.x + size.x - fh, o.y + size.y - bottom);
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  dl->AddText(o, text, "dR^2 of the logits per layer (Ruscio et al. Eq. 4), \xC2\xB1 1 SE");
  double top_value = 0;
  auto value = [](const Snapshot* s, std::size_t l) -> const Leakage* {
    return s && l < s->layers.size() && s->samples_done > 0 ? &s->layers[l].leakage : nullptr;
  };
  for (std::size_t l = 0; l < causal.layers.size(); ++l)
    for (const Leakage* k : {value(&causal, l), value(bi, l)})
      if (k && std::isfinite(k->delta_r2.mean))
        top_value = std::max(top_value, k->delta_r2.mean + (std::isfinite(k->delta_r2.se) ? k->delta_r2.se : 0));
  if (!(top_value > 0)) top_value = 1e-6;
  const auto ticks = nice_ticks(0, top_value * 1.05, 4);
  const double hi = ticks.empty() ? top_value : std::max(top_value * 1.05, ticks.back());
  auto Y = [&](double v) { return p1.y - float(v / hi) * (p1.y - p0.y); };
  const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : hi;
  for (double t : ticks) {
    dl->AddLine(ImVec2(p0.x, Y(t)), ImVec2(p1.x, Y(t)), IM_COL32(128, 128, 128, 60));
    const std::string lab = tick_text(t, step);
    dl->AddText(ImVec2(p0.x - ImGui::CalcTextSize(lab.c_str()).x - 4, Y(t) - fh * 0.5f), text, lab.c_str());
  }
  dl->AddLine(ImVec2(p0.x, p1.y), ImVec2(p1.x, p1.y), text);
  const std::size_t L = causal.layers.size();
  const float group = (p1.x - p0.x) / float(std::max<std::size_t>(1, L));
  const float bar = group * 0.32f;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  for (std::size_t l = 0; l < L; ++l) {
    const float gx = p0.x + group * float(l) + group * 0.5f;
    const Leakage* ks[2] = {value(&causal, l), value(bi, l)};
    for (int side = 0; side < 2; ++side) {
      const Leakage* k = ks[side];
      if (!k || !std::isfinite(k->delta_r2.mean)) continue;
      const float x0 = gx + (side == 0 ? -bar - 1 : 1), x1 = x0 + bar;
      dl->AddRectFilled(ImVec2(x0, Y(std::max(0.0, k->delta_r2.mean))), ImVec2(x1, p1.y), u32(side == 0 ? 3 : 0));
      if (std::isfinite(k->delta_r2.se)) {
        const float xm = (x0 + x1) / 2;
        dl->AddLine(ImVec2(xm, Y(std::max(0.0, k->delta_r2.mean - k->delta_r2.se))),
                    ImVec2(xm, Y(k->delta_r2.mean + k->delta_r2.se)), text);
      }
      if (ImGui::IsWindowHovered() && mouse.x >= x0 && mouse.x < x1 && mouse.y >= p0.y && mouse.y < p1.y)
        ImGui::SetTooltip(
            "layer %zu, %s mask\ndR^2 = %s\nR^2 of the relative baseline = %.4f\ndR^2 of the mean map = %.3g\n"
            "weights A: dR^2 = %.3g",
            l + 1, side == 0 ? "causal" : "bidirectional", value_with_se(k->delta_r2.mean, k->delta_r2.se).c_str(),
            k->r2_base, k->delta_r2_mean_map, (side == 0 ? causal : *bi).layers[l].weight_leakage.delta_r2.mean);
    }
    const std::string lab = std::to_string(l + 1);
    dl->AddText(ImVec2(gx - ImGui::CalcTextSize(lab.c_str()).x / 2, p1.y + 3), text, lab.c_str());
  }
  dl->AddText(ImVec2((p0.x + p1.x) / 2 - fh * 1.5f, p1.y + fh * 1.3f), text, "layer");
  // Legend.
  const ImVec2 lg(p1.x - fh * 12, o.y + fh * 1.3f);
  dl->AddRectFilled(lg, ImVec2(lg.x + fh * 0.8f, lg.y + fh * 0.8f), u32(3));
  dl->AddText(ImVec2(lg.x + fh, lg.y - fh * 0.1f), text, "causal");
  dl->AddRectFilled(ImVec2(lg.x + fh * 5, lg.y), ImVec2(lg.x + fh * 5.8f, lg.y + fh * 0.8f), u32(0));
  dl->AddText(ImVec2(lg.x + fh * 6, lg.y - fh * 0.1f), text, bi ? "bidirectional" : "bidirectional (starting)");
  ImGui::EndChild();
}

// Per layer: dR^2 of the causal run and its bidirectional twin, r_l = their ratio (Ruscio et al. Table 8) and the
// weight on key 0 (the attention sink, docs/model.md section 10), each +- 1 SE.
void share_table(const Snapshot& causal, const Snapshot* bi, float height) {
  const ImGuiTableFlags flags =
      ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX |
      ImGuiTableFlags_SizingFixedFit;  // columns as wide as their widest text: no SE digit cut (issue 48)
  if (!ImGui::BeginTable("##shares", 6, flags, ImVec2(0, height))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  for (const char* h : {"layer", "dR^2 causal", "dR^2 bidirectional", "r_l = bi / causal", "weight on key 0 (causal)",
                        "weight on key 0 (bidirectional)"})
    ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();
  for (std::size_t l = 0; l < causal.layers.size(); ++l) {
    const LayerStats& c = causal.layers[l];
    const LayerStats* b = bi && l < bi->layers.size() ? &bi->layers[l] : nullptr;
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::Text("%zu", l + 1);
    ImGui::TableNextColumn();
    // A null or SE-0 value at float resolution says why on hover (docs/model.md section 4.1).
    auto estimate = [](const Estimate& e) {
      ImGui::TextUnformatted(value_with_se(e).c_str());
      if (e.note != EstimateNote::none && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", note_text(e.note).data());
    };
    estimate(c.leakage.delta_r2);
    ImGui::TableNextColumn();
    if (b) estimate(b->leakage.delta_r2);
    else ImGui::TextUnformatted("...");
    ImGui::TableNextColumn();
    const ResidualShare r = b ? residual_stream_share(b->leakage, c.leakage) : ResidualShare{};
    if (b && std::isfinite(r.value)) ImGui::TextUnformatted(value_with_se(r.value, r.se).c_str());
    else ImGui::TextDisabled(b ? "-- (causal dR^2 < 3 SE)" : "...");
    if (b && r.note != EstimateNote::none && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", note_text(r.note).data());
    ImGui::TableNextColumn();
    estimate(c.sink_weight);
    ImGui::TableNextColumn();
    if (b) estimate(b->sink_weight);
    else ImGui::TextUnformatted("...");
  }
  ImGui::EndTable();
}

// A centred or sequential n x n map with its range written below.
void split_map(HeatmapRenderer& renderer, int slot, const std::vector<double>& values, int n, bool centred,
               const ViewOptions& view, const char* title, const char* tip, float size) {
  PanelData p;
  p.n = n;
  p.value = values;
  p.se.assign(values.size(), std::numeric_limits<double>::quiet_NaN());
  if (view.hide_diagonal)  // as the Attention tab: S_ii = ||y_i||^2 scale would swamp the colour range
    for (int i = 1; i < n; ++i) p.value[std::size_t(i) * n + i] = std::numeric_limits<double>::quiet_NaN();
  fit_range(p, RangeMode::robust, centred, view.hide_diagonal);
  std::vector<float> texels(values.size());
  for (std::size_t e = 0; e < values.size(); ++e) texels[e] = static_cast<float>(p.value[e]);
  renderer.upload(slot, texels, n);
  ImGui::BeginGroup();
  ImGui::TextUnformatted(title);
  explain(tip);
  const ImVec2 p0 = ImGui::GetCursorScreenPos(), p1(p0.x + size, p0.y + size);
  const ImVec4 masked = view.light_theme ? ImVec4(1, 1, 1, 1) : ImVec4(0.08f, 0.08f, 0.09f, 1);
  renderer.draw(ImGui::GetWindowDrawList(), slot, p0, p1, p.lo, p.hi, centred ? view.diverging : view.sequential,
                masked, masked);
  ImGui::GetWindowDrawList()->AddRect(p0, p1, ImGui::GetColorU32(ImGuiCol_Border));
  ImGui::Dummy(ImVec2(size, size));
  const std::vector<ColorbarTick> ticks = colorbar_ticks(p.lo, p.hi);
  std::string range = "colour range " +
                      (ticks.empty() ? std::string() : ticks.front().text + " .. " + ticks.back().text) +
                      (centred ? " (blue < 0 < red)" : "");
  ImGui::TextDisabled("%s", range.c_str());
  ImGui::EndGroup();
}

}  // namespace

void LeakageTab::stop() { twin_.reset(); }

bool LeakageTab::settled(const Snapshot& live) const {
  if (live.settings.mask == MaskKind::bidirectional) return true;
  Settings twin = live.settings;
  twin.mask = MaskKind::bidirectional;
  if (!twin_ || !twin_->settings().same_simulation(twin)) return false;
  const auto bi = twin_->snapshot();
  return bi->finished || bi->cancelled;
}

void LeakageTab::draw(const Snapshot& live, HeatmapRenderer& renderer, const ViewOptions& view, bool allow_twin) {
  const Settings& s = live.settings;
  if (live.layers.empty()) return;
  const bool causal = s.mask != MaskKind::bidirectional;
  // The bidirectional twin: the same settings and seed (the same random draws), only the mask differs.
  Settings twin = s;
  twin.mask = MaskKind::bidirectional;
  if (!allow_twin) twin_.reset();
  if (allow_twin && causal && (!twin_ || !twin_->settings().same_simulation(twin))) {
    RunOptions options;
    options.low_priority = true;
    options.first_picture_alone = true;
    twin_.reset();
    twin_ = std::make_unique<Run>(twin, options);
  }
  std::shared_ptr<const Snapshot> bi = causal && twin_ ? twin_->snapshot() : nullptr;
  const Snapshot* bi_snap = bi && bi->samples_done > 0 ? bi.get() : nullptr;

  const float fh = ImGui::GetFontSize();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  layer_ = std::clamp(layer_, 1, int(live.layers.size()));
  ImGui::SetNextItemWidth(fh * 10);
  ImGui::SliderInt("layer", &layer_, 1, int(live.layers.size()), "layer %d", ImGuiSliderFlags_AlwaysClamp);
  explain("The layer of the position-bin profile, the causal-mask share and the relative / absolute split below.");
  // With several heads, the head chosen under View (or the mean of heads) is the one shown.
  const LayerStats ls = head_view(live.layers[std::size_t(layer_ - 1)], view.head);
  const Leakage& c = ls.leakage;
  const LayerStats bi_layer = bi_snap ? head_view(bi_snap->layers[std::size_t(layer_ - 1)], view.head) : LayerStats{};
  const Leakage* b = bi_snap ? &bi_layer.leakage : nullptr;
  ImGui::SameLine();
  if (!causal) {
    ImGui::TextDisabled("  The live run is bidirectional: the causal-mask share needs the causal mask (Ruscio Eq. 5).");
  } else if (b && std::isfinite(b->delta_r2.mean)) {
    // r_l = dR^2 bidirectional / dR^2 causal, NaN unless the causal dR^2 exceeds 3 SE (as the CLI's table).
    const ResidualShare r = residual_stream_share(*b, c);
    if (!std::isfinite(r.value)) {
      ImGui::TextDisabled("  causal-mask share: n/a (the causal dR^2 is within 3 SE of 0)");
    } else if (r.value > 1.0) {
      // 1 - r_l < 0: the twin without the mask leaks more (a fixed first token, issue 36): no share to show.
      ImGui::Text("  causal-mask share: none (r_l = %s > 1)", value_with_se(r.value, r.se).c_str());
      explain(
          "Ruscio et al. Eq. 5's share, 1 - r_l, is below 0: without the mask the position leaks more than with it "
          "(r_l = dR^2 bidirectional / dR^2 causal > 1), so the mask causes none of it. A fixed first token does "
          "this in the parameter-free model: the anchor, not the mask's denominator, carries position.");
    } else {
      ImGui::Text("  causal-mask share %.1f%% (r_l %s)", 100.0 * (1.0 - r.value), value_with_se(r.value, r.se).c_str());
      explain(
          "Ruscio et al. Eq. 5: 1 - dR^2 (bidirectional) / dR^2 (causal), the part of the leakage that the causal "
          "mask's growing softmax denominator causes; the rest comes from the residual stream. Real LLMs: 65-91% "
          "(Ruscio et al. Table 6). In the parameter-free model the residual stream carries no position without the "
          "mask, "
          "so the share is close to 100%.");
    }
  } else if (!allow_twin) {
    ImGui::TextDisabled(
        "  causal-mask share: n/a (a model's tensors have no bidirectional twin; export it with a bidirectional mask)");
  } else {
    ImGui::TextDisabled("  causal-mask share: waiting for the bidirectional twin");
  }
  // On the same line when it fits, else on its own: never cut at the tab's edge.
  char numbers[256];
  std::snprintf(numbers, sizeof numbers, "   dR^2 %s   weights A: %.3g   mean map: %.3g   R^2 base %.4f",
                value_with_se(c.delta_r2.mean, c.delta_r2.se).c_str(), ls.weight_leakage.delta_r2.mean,
                c.delta_r2_mean_map, c.r2_base);
  ImGui::SameLine();
  if (ImGui::GetContentRegionAvail().x < ImGui::CalcTextSize(numbers).x) ImGui::NewLine();
  ImGui::TextUnformatted(numbers);
  explain(
      "dR^2 = R^2 (offset means + query position) - R^2 (offset means), pooled over samples as the paper pools "
      "prompts (Ruscio Eq. 4). weights A: the same for the attention weights, where the causal softmax "
      "denominator makes even purely relative logits depend on i (Eq. 3). mean map: dR^2 of the sample-mean "
      "map, systematic structure only. R^2 base: how much the saturated relative baseline explains.");

  const float row_h = std::max(fh * 12, avail.y * 0.42f);
  leakage_bars("##dr2bars", ImVec2(avail.x * 0.5f, row_h), live, causal ? bi_snap : nullptr);
  ImGui::SameLine();
  {
    PlotSeries pc, pb;
    pc.label = causal ? "causal" : "bidirectional";
    pb.label = "bidirectional";
    pc.color = u32(3);
    pb.color = u32(0);
    for (std::size_t k = 0; k < c.bins.size(); ++k) {
      pc.x.push_back(double(k + 1));
      pc.y.push_back(c.bins[k].delta_r2);
      if (b && k < b->bins.size()) {
        pb.x.push_back(double(k + 1));
        pb.y.push_back(b->bins[k].delta_r2);
      }
    }
    std::string bins;
    for (std::size_t k = 0; k < c.bins.size(); ++k)
      bins += (k ? ", " : "") + std::to_string(k + 1) + " = [" + std::to_string(c.bins[k].from) + "," +
              std::to_string(c.bins[k].to) + ")";
    PlotSpec spec;
    spec.title = "dR^2 by query-position bin, layer " + std::to_string(layer_) + " (Ruscio et al. Table 7)";
    spec.x_label = "bin: " + bins;
    spec.integer_x = true;
    std::vector<PlotSeries> series = {pc};
    if (causal && b) series.push_back(pb);
    plot("##bins", ImVec2(0, row_h), spec, series);
  }

  {
    const float table_h = fh * 1.6f * float(std::min<std::size_t>(live.layers.size(), 5) + 1) + fh * 0.4f;
    share_table(live, causal ? bi_snap : nullptr, table_h);
    explain(
        "Per layer, +- 1 SE. r_l = dR^2 bidirectional / dR^2 causal: the residual-stream share of the leakage "
        "(Ruscio et al. Table 8: mean 0.21 Qwen-2.5-3B, 0.62 Llama-3.2-3B, 0.66 Mistral-7B), SE by the delta "
        "method. Weight on key 0: per sample the mean of A_i0 over query rows i >= 1 (the attention sink, Ruscio et "
        "al. "
        "Table 2), averaged over samples. A fixed first token (left column) makes position 0 an anchor; without "
        "it every position is exchangeable and the bidirectional dR^2 is about 0.");
  }
  // Where absolute position lives: the relative part (each offset's mean) and the rest.
  const int n = s.n;
  const KeyRanges keys = key_ranges(s);
  const std::vector<double> scores = ls.score_mean.unpacked();
  const std::vector<double> relative = offset_means(n, keys, scores);
  std::vector<double> absolute(scores.size(), std::numeric_limits<double>::quiet_NaN());
  for (std::size_t e = 0; e < absolute.size(); ++e)
    if (std::isfinite(scores[e]) && std::isfinite(relative[e])) absolute[e] = scores[e] - relative[e];
  const float size = std::max(fh * 8, std::min(ImGui::GetContentRegionAvail().y - fh * 3.5f, avail.x / 3 - fh * 2));
  split_map(renderer, kSplitSlot, scores, n, false, view, "mean logits S",
            "The layer's mean scores S_ij (query i down, key j across).", size);
  ImGui::SameLine(0, fh * 2);
  split_map(renderer, kSplitSlot + 1, relative, n, false, view, "relative part: mean of each offset i - j",
            "The saturated relative baseline (Ruscio Eq. 4): one free mean per offset. A purely relative map (RoPE "
            "without the mask) is all relative part.",
            size);
  ImGui::SameLine(0, fh * 2);
  split_map(renderer, kSplitSlot + 2, absolute, n, true, view, "absolute part: S - offset mean",
            "What the relative baseline cannot explain: the dependence on the absolute query position that dR^2 "
            "measures. Under the causal mask it grows with depth (g(i) h(j) in Behind RoPE Eq. 3-4 is not a function "
            "of i - j).",
            size);
}

}  // namespace maskscope::gui
