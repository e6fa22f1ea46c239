// Drawing of the controls, heatmap grids, plots and status line.
#include "views.hpp"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <thread>

#include "core/metrics.hpp"
#include "core/theory.hpp"
#include "plot.hpp"

namespace maskscope::gui {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string format_se(double v, double se) {
  char buf[64];
  if (!std::isfinite(v)) return "n/a";
  std::snprintf(buf, sizeof buf, "%.4f +- %.4f", v, std::isfinite(se) ? se : 0.0);
  return buf;
}

ImU32 to_u32(const std::array<float, 3>& c) { return ImGui::ColorConvertFloat4ToU32(ImVec4(c[0], c[1], c[2], 1.0f)); }

ImU32 series_color(int k) {
  static const ImU32 palette[] = {IM_COL32(31, 119, 180, 255), IM_COL32(255, 127, 14, 255), IM_COL32(44, 160, 44, 255),
                                  IM_COL32(214, 39, 40, 255),  IM_COL32(148, 103, 189, 255), IM_COL32(140, 86, 75, 255)};
  return palette[k % 6];
}

}  // namespace

Views::Views(Controller& controller, RunOptions run_options)
    : controller_(controller), figure_runs_(std::move(run_options)) {}

bool Views::showing_final_snapshot() const {
  return shown_ && (shown_->finished || shown_->cancelled) && shown_restart_ == controller_.restarts();
}

void Views::refresh_textures() {
  auto snap = controller_.snapshot();
  if (snap == shown_ && view_ == uploaded_view_) return;
  const bool new_run = shown_restart_ != controller_.restarts();
  shown_ = snap;
  uploaded_view_ = view_;
  if (snap->samples_done == 0 && !new_run) return;
  panels_ = build_panels(*snap, view_);
  const int n = snap->settings.n;
  std::vector<float> texels(std::size_t(n) * n);
  for (std::size_t k = 0; k < panels_.size(); ++k) {
    std::transform(panels_[k].value.begin(), panels_[k].value.end(), texels.begin(),
                   [](double v) { return static_cast<float>(v); });
    renderer_.upload(int(k), texels, n);
  }
  if (new_run && snap->samples_done > 0) {
    shown_restart_ = controller_.restarts();
    first_heatmap_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - controller_.run_started()).count();
  }
}

void Views::draw(float ui_scale) {
  controller_.poll();
  draw_menu();
  refresh_figure(false);
  renderer_.begin_frame();
  refresh_textures();

  const float controls_w = 330.0f * ui_scale;
  ImGui::BeginChild("##controls", ImVec2(controls_w, 0), true);
  draw_controls(ui_scale);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginGroup();
  const float status_h = ImGui::GetFrameHeightWithSpacing() + ImGui::GetStyle().WindowPadding.y;
  ImGui::BeginChild("##main", ImVec2(0, -status_h), false);
  if (ImGui::BeginTabBar("##tabs")) {
    // The tab asked for (command line) is selected once; afterwards the user's clicks rule.
    const bool request = requested_tab_;
    const Tab wanted = view_.tab;
    auto tab = [&](const char* label, Tab t) {
      const ImGuiTabItemFlags flags = (request && wanted == t) ? ImGuiTabItemFlags_SetSelected : 0;
      if (ImGui::BeginTabItem(label, nullptr, flags)) {
        if (!request) view_.tab = t;
        ImGui::EndTabItem();
      }
    };
    tab("Attention", Tab::attention);
    tab("Diagonal-normalized", Tab::diagonal);
    tab("h(j) and norms", Tab::h_of_j);
    tab("Metrics", Tab::metrics);
    tab("Figure", Tab::figure);
    ImGui::EndTabBar();
    requested_tab_ = false;
  }
  switch (view_.tab) {
    case Tab::attention: draw_heatmaps(false); break;
    case Tab::diagonal: draw_heatmaps(true); break;
    case Tab::h_of_j: draw_h_of_j(); break;
    case Tab::metrics: draw_metrics(); break;
    case Tab::figure: draw_figure(); break;
  }
  ImGui::EndChild();
  draw_status();
  ImGui::EndGroup();
}

void Views::draw_controls(float ui_scale) {
  Settings s = controller_.settings();
  const Settings before = s;
  ImGui::PushItemWidth(-110.0f * ui_scale);
  ImGui::TextUnformatted("Model");
  ImGui::Separator();

  int log2d = 0;
  while ((1 << (log2d + 1)) <= s.d && log2d < 12) ++log2d;
  char dlabel[32];
  std::snprintf(dlabel, sizeof dlabel, "%d", s.d);
  if (ImGui::SliderInt("d (width)", &log2d, 0, 12, dlabel, ImGuiSliderFlags_NoInput)) s.d = 1 << log2d;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Powers of two from 1 to 4096");
  ImGui::SliderInt("n (tokens)", &s.n, 1, 512, "%d", ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp);
  ImGui::SliderInt("layers", &s.layers, 1, 16, "%d", ImGuiSliderFlags_AlwaysClamp);
  const double zero = 0.0, one = 1.0;
  ImGui::SliderScalar("alpha", ImGuiDataType_Double, &s.alpha, &zero, &one, "%.2f", ImGuiSliderFlags_AlwaysClamp);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Input anisotropy: E[cos(x_i, x_j)] -> alpha (LN-recency Eq. 6)");

  int norm = static_cast<int>(s.norm);
  if (ImGui::Combo("norm", &norm, "none\0l2\0layernorm\0rmsnorm\0")) s.norm = static_cast<Norm>(norm);
  int scale = static_cast<int>(s.scale);
  if (ImGui::Combo("score scale", &scale, "1\0001/sqrt(d)\0001/d\0")) s.scale = static_cast<Scale>(scale);

  bool residual = s.gamma > 0;
  if (ImGui::Checkbox("residual", &residual)) s.gamma = residual ? 1.0 : 0.0;
  if (residual) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(-110.0f * ui_scale - ImGui::GetCursorPosX() + ImGui::GetStyle().WindowPadding.x);
    const double gmin = 0.01;
    ImGui::SliderScalar("gamma", ImGuiDataType_Double, &s.gamma, &gmin, &one, "%.2f", ImGuiSliderFlags_AlwaysClamp);
  }

  bool rope = s.rope();
  if (ImGui::Checkbox("RoPE", &rope)) s.rope_base = rope ? 10000.0 : 0.0;
  if (rope) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(-110.0f * ui_scale - ImGui::GetCursorPosX() + ImGui::GetStyle().WindowPadding.x);
    const double bmin = 2.0, bmax = 1e6;
    ImGui::SliderScalar("base", ImGuiDataType_Double, &s.rope_base, &bmin, &bmax, "%.0f",
                        ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp);
  }

  int mask = static_cast<int>(s.mask);
  if (ImGui::Combo("mask", &mask, "causal\0bidirectional\0sliding window\0")) s.mask = static_cast<MaskKind>(mask);
  if (s.mask == MaskKind::window) {
    s.window = std::clamp(s.window, 1, s.n);
    ImGui::SliderInt("window w", &s.window, 1, s.n, "%d", ImGuiSliderFlags_AlwaysClamp);
  }
  ImGui::Checkbox("unit-norm inputs", &s.unit_input);

  ImGui::Spacing();
  ImGui::TextUnformatted("Monte Carlo");
  ImGui::Separator();
  std::int64_t smin = 1000, smax = 100'000'000;
  ImGui::SliderScalar("samples", ImGuiDataType_S64, &s.samples, &smin, &smax, "%lld",
                      ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp);
  std::uint64_t step = 1;
  ImGui::InputScalar("seed", ImGuiDataType_U64, &s.seed, &step);
  int hw = std::max(1, int(std::thread::hardware_concurrency()));
  int threads = s.threads == 0 ? hw : s.threads;
  if (ImGui::SliderInt("threads", &threads, 1, std::max(hw, 1), "%d", ImGuiSliderFlags_AlwaysClamp)) s.threads = threads;

  if (!(s == before)) edit_errors_ = controller_.edit(s);
  if (s == controller_.settings()) edit_errors_.clear();
  for (const auto& e : edit_errors_) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.9f, 0.3f, 0.25f, 1.0f));
    ImGui::TextWrapped("%s: %s", e.setting.c_str(), e.message.c_str());
    ImGui::PopStyleColor();
  }
  if (!ImGui::IsAnyItemActive()) controller_.commit_undo_point();

  ImGui::Spacing();
  if (ImGui::Button("Reset")) controller_.reset_to_defaults(Settings{});
  ImGui::SameLine();
  ImGui::BeginDisabled(!controller_.can_undo());
  if (ImGui::Button("Undo")) controller_.undo();
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(!controller_.can_redo());
  if (ImGui::Button("Redo")) controller_.redo();
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::Button(controller_.paused() ? "Resume" : "Pause")) controller_.set_paused(!controller_.paused());

  ImGui::Spacing();
  ImGui::TextUnformatted("View");
  ImGui::Separator();
  int q = static_cast<int>(view_.quantity);
  if (ImGui::Combo("show", &q, "scores S\0weights A\0cosine of outputs\0")) view_.quantity = static_cast<Quantity>(q);
  int seq = static_cast<int>(view_.sequential);
  if (ImGui::Combo("colormap", &seq, "rocket\0viridis\0magma\0")) view_.sequential = static_cast<ColormapId>(seq);
  int div = static_cast<int>(view_.diverging) - static_cast<int>(ColormapId::rdbu);
  if (ImGui::Combo("diverging", &div, "RdBu\0coolwarm\0"))
    view_.diverging = static_cast<ColormapId>(div + static_cast<int>(ColormapId::rdbu));
  ImGui::Checkbox("hide diagonal (except row 0)", &view_.hide_diagonal);
  ImGui::Checkbox("one colour range for all layers", &view_.shared_range);
  if (ImGui::Checkbox("light theme", &view_.light_theme)) {
    if (view_.light_theme) ImGui::StyleColorsLight();
    else ImGui::StyleColorsDark();
  }
  ImGui::PopItemWidth();

  // Keyboard: Ctrl+Z undo, Ctrl+Shift+Z (or Ctrl+Y) redo, when no text field has focus.
  ImGuiIO& io = ImGui::GetIO();
  if (io.KeyCtrl && !io.WantTextInput) {
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Z), false)) {
      if (io.KeyShift) controller_.redo();
      else controller_.undo();
    }
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Y), false)) controller_.redo();
  }
}

void Views::draw_status() {
  const auto snap = controller_.snapshot();
  const double rate = snap->samples_per_s;
  const double left = double(snap->samples_target() - snap->samples_done);
  double max_se = 0;
  for (const auto& p : panels_)
    for (std::size_t e = 0; e < p.se.size(); ++e)
      if (std::isfinite(p.value[e]) && std::isfinite(p.se[e])) max_se = std::max(max_se, p.se[e]);
  char eta[32] = "--";
  if (snap->finished) std::snprintf(eta, sizeof eta, "done");
  else if (rate > 0) std::snprintf(eta, sizeof eta, "%.1f s", left / rate);
  ImGui::Separator();
  ImGui::Text("%s  %lld / %lld samples   %.0f samples/s   ETA %s   largest SE on screen %.2g", controller_.paused() ? "[paused]" : "",
              static_cast<long long>(snap->samples_done), static_cast<long long>(snap->samples_target()), rate, eta,
              max_se);
}

void Views::draw_heatmaps(bool diverging) {
  if (!shown_ || panels_.empty()) {
    ImGui::TextUnformatted("Simulating...");
    return;
  }
  const int n = shown_->settings.n;
  const int L = int(panels_.size());
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float fh = ImGui::GetFontSize();
  const ColormapId map = diverging ? view_.diverging : view_.sequential;
  const float colorbar_w = fh * 4.2f;
  const float header_h = fh * 2.6f;
  // Columns that make the panels largest.
  int best_cols = 1;
  float best_size = 0;
  for (int cols = 1; cols <= L; ++cols) {
    const int rows = (L + cols - 1) / cols;
    const float size = std::min(avail.x / cols - colorbar_w - fh * 2.5f, avail.y / rows - header_h - fh * 1.6f);
    if (size > best_size) { best_size = size; best_cols = cols; }
  }
  const float cell = std::max(40.0f, best_size);
  const float panel_w = avail.x / best_cols;
  const ImVec4 masked = view_.light_theme ? ImVec4(1, 1, 1, 1) : ImVec4(0.08f, 0.08f, 0.09f, 1);
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const Colormap& cm = colormap(map);
  const char* what = view_.quantity == Quantity::score ? "S" : view_.quantity == Quantity::weight ? "A" : "cos";

  for (int k = 0; k < L; ++k) {
    const PanelData& p = panels_[k];
    const LayerStats& ls = shown_->layers[k];
    const int col = k % best_cols, row = k / best_cols;
    const ImVec2 top(origin.x + col * panel_w + fh * 1.5f, origin.y + row * (cell + header_h + fh * 1.6f));
    char title[96];
    std::snprintf(title, sizeof title, "Layer %d  %s%s", p.layer, diverging ? "diag-normalized " : "", what);
    dl->AddText(top, text, title);
    char badge[128];
    if (std::isfinite(ls.recency))
      std::snprintf(badge, sizeof badge, "RP %.4f+-%.4f  adj %.3f", ls.recency, ls.recency_se, ls.adjacency);
    else
      std::snprintf(badge, sizeof badge, "RP n/a (needs n >= 3)");
    dl->AddText(ImGui::GetFont(), fh * 0.9f, ImVec2(top.x, top.y + fh * 1.2f),
                ImGui::GetColorU32(ImGuiCol_Text, 0.8f), badge);
    const ImVec2 p0(top.x, top.y + header_h);
    const ImVec2 p1(p0.x + cell, p0.y + cell);
    renderer_.draw(dl, k, p0, p1, p.lo, p.hi, map, masked);
    dl->AddRect(p0, p1, ImGui::GetColorU32(ImGuiCol_Border));
    // Index ticks (0-based, as in the papers' imshow figures).
    const int step = std::max(1, n / 5);
    for (int t = 0; t < n; t += step) {
      char lab[16];
      std::snprintf(lab, sizeof lab, "%d", t);
      const float c = (t + 0.5f) / n * cell;
      const ImVec2 ts = ImGui::CalcTextSize(lab);
      dl->AddText(ImVec2(p0.x + c - ts.x * 0.5f, p1.y + 2), text, lab);
      dl->AddText(ImVec2(p0.x - ts.x - 3, p0.y + c - ts.y * 0.5f), text, lab);
    }
    // Colorbar with ticks, from the same table as the texture.
    const ImVec2 c0(p1.x + fh * 0.6f, p0.y), c1(c0.x + fh * 0.9f, p1.y);
    const int strips = 64;
    for (int s = 0; s < strips; ++s) {
      const float y0 = c1.y - (c1.y - c0.y) * (s + 1) / strips, y1 = c1.y - (c1.y - c0.y) * s / strips;
      dl->AddRectFilled(ImVec2(c0.x, y0), ImVec2(c1.x, y1 + 1), to_u32(cm.at((s + 0.5f) / strips)));
    }
    dl->AddRect(c0, c1, ImGui::GetColorU32(ImGuiCol_Border));
    for (double t : nice_ticks(p.lo, p.hi, 4)) {
      const float y = c1.y - float((t - p.lo) / (p.hi - p.lo)) * (c1.y - c0.y);
      char lab[24];
      std::snprintf(lab, sizeof lab, "%.3g", t);
      dl->AddLine(ImVec2(c1.x - 4, y), ImVec2(c1.x, y), IM_COL32(128, 128, 128, 255));  // tick inside the bar
      dl->AddText(ImGui::GetFont(), fh * 0.85f, ImVec2(c1.x + 4, y - fh * 0.45f), text, lab);
    }
    // Hover: (i, j), value and standard error.
    const ImVec2 m = ImGui::GetIO().MousePos;
    if (ImGui::IsWindowHovered() && m.x >= p0.x && m.x < p1.x && m.y >= p0.y && m.y < p1.y) {
      const int j = std::clamp(int((m.x - p0.x) / cell * n), 0, n - 1);
      const int i = std::clamp(int((m.y - p0.y) / cell * n), 0, n - 1);
      const double v = p.value[std::size_t(i) * n + j], se = p.se[std::size_t(i) * n + j];
      if (std::isnan(v))
        ImGui::SetTooltip("layer %d  query i = %d, key j = %d\nmasked or hidden", p.layer, i, j);
      else
        ImGui::SetTooltip("layer %d  query i = %d, key j = %d\n%s = %s", p.layer, i, j, what, format_se(v, se).c_str());
    }
  }
  const int rows = (L + best_cols - 1) / best_cols;
  ImGui::Dummy(ImVec2(avail.x, rows * (cell + header_h + fh * 1.6f)));
}

void Views::draw_h_of_j() {
  if (!shown_ || shown_->layers.empty()) return;
  const Settings& s = shown_->settings;
  const int n = s.n;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  std::vector<PlotSeries> series;
  // LN-recency Eq. 42 for a family of alpha, current alpha highlighted; each curve / its h(1).
  const std::vector<double> family = {0.0, 0.2, 0.4, 0.6, 0.8};
  std::vector<double> js(n);
  for (int j = 0; j < n; ++j) js[j] = j + 1;
  int colour = 0;
  auto theory_series = [&](double alpha, bool current) {
    PlotSeries t;
    char label[64];
    std::snprintf(label, sizeof label, "Eq. 42, alpha=%.2f%s", alpha, current ? " (current)" : "");
    t.label = label;
    t.x = js;
    t.y = theory::ln_recency_h_curve(n, s.d, alpha, s.gamma, false);
    const double h1 = t.y[0];
    for (double& v : t.y) v /= h1;
    t.color = current ? IM_COL32(214, 39, 40, 255) : series_color(colour++);
    if (!current) t.color = (t.color & 0x00FFFFFF) | 0x99000000;
    t.thickness = current ? 3.0f : 1.3f;
    t.markers = false;
    t.dashed = !current;
    series.push_back(std::move(t));
  };
  for (double a : family)
    if (std::fabs(a - s.alpha) > 1e-9) theory_series(a, false);
  theory_series(s.alpha, true);
  // Simulated: 1 / mean ||x_j|| after layer 1, over its j = 1 value; SE by the delta method.
  const LayerStats& l1 = shown_->layers[0];
  PlotSeries sim;
  sim.label = "simulated 1/||x_j^(1)||";
  sim.x = js;
  sim.color = view_.light_theme ? IM_COL32(0, 0, 0, 255) : IM_COL32(240, 240, 240, 255);
  sim.thickness = 2.0f;
  const double ref = 1.0 / l1.norm_mean[0];
  for (int j = 0; j < n; ++j) {
    const double m = l1.norm_mean[j];
    sim.y.push_back(m > 0 ? (1.0 / m) / ref : kNaN);
    sim.err.push_back(m > 0 ? (l1.norm_se[j] / (m * m)) / ref : kNaN);
  }
  series.push_back(std::move(sim));
  PlotSpec spec;
  char title[128];
  std::snprintf(title, sizeof title, "h(j) / h(1): LN-recency Eq. 42 (d=%d, gamma=%.2f) vs simulation", s.d, s.gamma);
  spec.title = title;
  spec.x_label = "key index j";
  spec.y_label = "h(j)/h(1)";
  spec.integer_x = n <= 20;
  const bool l2 = s.norm == Norm::l2;
  plot("##hofj", ImVec2(l2 ? avail.x * 0.5f - 4 : avail.x, avail.y), spec, series);
  if (l2) {
    ImGui::SameLine();
    // Behind RoPE Eq. 3: h(i) = ||x_i^(1)|| for unit inputs, scale 1.
    PlotSeries th, sm;
    th.label = "Behind RoPE h(i)";
    th.x = js;
    th.color = IM_COL32(214, 39, 40, 255);
    th.thickness = 2.5f;
    th.markers = false;
    for (int i = 1; i <= n; ++i) th.y.push_back(theory::behind_rope_h(i, s.alpha, s.gamma));
    sm.label = "simulated ||x_i^(1)||";
    sm.x = js;
    sm.y = l1.norm_mean;
    sm.err = l1.norm_se;
    sm.color = view_.light_theme ? IM_COL32(0, 0, 0, 255) : IM_COL32(240, 240, 240, 255);
    PlotSpec sp;
    sp.title = s.unit_input && s.scale == Scale::one ? "Behind RoPE h(i) vs simulation"
                                                      : "Behind RoPE h(i) (assumes unit inputs, scale 1)";
    sp.x_label = "position i";
    sp.y_label = "norm";
    sp.integer_x = n <= 20;
    plot("##hbr", ImVec2(avail.x * 0.5f - 4, avail.y), sp, {th, sm});
  }
}

void Views::draw_metrics() {
  if (!shown_ || shown_->layers.empty()) return;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  PlotSeries rp, adj, half;
  rp.label = "recency probability";
  adj.label = "adjacency score";
  half.label = "0.5 (no bias)";
  rp.color = IM_COL32(214, 39, 40, 255);
  adj.color = IM_COL32(31, 119, 180, 255);
  half.color = IM_COL32(128, 128, 128, 255);
  half.dashed = true;
  half.markers = false;
  for (const auto& l : shown_->layers) {
    rp.x.push_back(l.layer);
    rp.y.push_back(l.recency);
    rp.err.push_back(l.recency_se);
    adj.x.push_back(l.layer);
    adj.y.push_back(l.adjacency);
    adj.err.push_back(l.adjacency_se);
    half.x.push_back(l.layer);
    half.y.push_back(0.5);
  }
  PlotSpec spec;
  spec.title = "Recency probability (LN-recency Sec. 3) and adjacency score (Zuo et al. Sec. 4.1)";
  spec.x_label = "layer";
  spec.y_label = "P";
  spec.integer_x = true;
  const float table_h = ImGui::GetTextLineHeightWithSpacing() * float(shown_->layers.size() + 2);
  plot("##metrics", ImVec2(avail.x, std::max(120.0f, avail.y - table_h)), spec, {half, rp, adj});
  if (ImGui::BeginTable("##mtable", 3, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg)) {
    ImGui::TableSetupColumn("layer");
    ImGui::TableSetupColumn("RP +- SE");
    ImGui::TableSetupColumn("adjacency +- SE");
    ImGui::TableHeadersRow();
    for (const auto& l : shown_->layers) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Text("%d", l.layer);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(format_se(l.recency, l.recency_se).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(format_se(l.adjacency, l.adjacency_se).c_str());
    }
    ImGui::EndTable();
  }
}

}  // namespace maskscope::gui
