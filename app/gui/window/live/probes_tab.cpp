// The Probes tab (Zuo et al. `003` Sec. 5.5, Fig. 8; docs/model.md section 9): Pearson-R and NRMSE of the
// position probes against layer, one line per feature (X, Var_X, Sim_X) with bootstrap SEs, computed on a
// background thread while the tab is shown (and again with other sizes on request), cancelled when the
// settings change.
#define GLFW_INCLUDE_NONE  // GL comes from epoxy (window/plot.hpp)
#include <GLFW/glfw3.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/formats/tensor_analysis.hpp"
#include "core/model/threading.hpp"
#include "core/model/token_file.hpp"
#include "core/run/position_probes.hpp"
#include "common/figure/analysis_charts.hpp"
#include "window/live/live.hpp"
#include "window/plot.hpp"

namespace maskscope::gui {

ProbesTab::~ProbesTab() { stop(); }

void ProbesTab::stop() {
  cancel_ = true;
  if (worker_.joinable()) worker_.join();
  cancel_ = false;
  running_ = false;
}

void ProbesTab::start(const Settings& s) {
  stop();
  for_settings_ = s;
  {
    std::lock_guard lock(mutex_);
    result_.reset();
  }
  message_.clear();
  running_ = true;
  collected_ = 0;
  // A token file of L lines repeats its lines past L sequences: the fields become L / 2 training and the rest test
  // sequences, saying so, where they ask for more (validate_probe refuses it, as the CLI does).
  std::string fitted;
  note_.clear();
  if (!s.tokens.empty() && validate(s).empty()) {
    const std::int64_t lines = load_token_sequences(s.tokens, s.tokens_format)->lines;
    if (std::int64_t(train_) + test_ > lines && lines >= 4) {
      train_ = int(lines / 2);
      test_ = int(lines - lines / 2);
      fitted = "train and test set to " + std::to_string(train_) + " + " + std::to_string(test_) +
               ": the token file has " + std::to_string(lines) +
               " lines, and the test sequences must not repeat training ones";
    }
  }
  ProbeRequest r;
  r.train = train_;
  r.test = test_;
  r.probe.kind = mlp_ ? ProbeKind::mlp : ProbeKind::ridge;
  r.probe.seed = s.seed;
  if (const auto errors = validate_probe(s, r); !errors.empty()) {
    for (const auto& e : errors) message_ += e.setting + ": " + e.message + "\n";
    running_ = false;
    return;
  }
  note_ = fitted;
  if (!kThreadsAvailable) {  // the browser's one-thread page: the probes' fit would hold the page for seconds
    message_ = kNeedsThreads;
    running_ = false;
    return;
  }
  worker_ = std::thread([this, s, r] {
    auto table = run_position_probes(s, r, &cancel_, &collected_);
    std::lock_guard lock(mutex_);
    if (table) result_ = std::move(*table);
    running_ = false;
    glfwPostEmptyEvent();  // the idle window waits for events: draw the result now
  });
}

void ProbesTab::draw(const Settings& s) {
  if (!folder_.empty()) {  // back from a tensor folder
    stop();
    folder_.clear();
    std::lock_guard lock(mutex_);
    result_.reset();
  }
  if (for_settings_ && !s.same_simulation(*for_settings_)) {  // cancelled on change
    stop();
    for_settings_.reset();
    std::lock_guard lock(mutex_);
    result_.reset();
    message_.clear();
  }
  if (!for_settings_ && !running_) start(s);  // computed when the tab is shown, again after each change
  ImGui::TextWrapped(
      "Position probes (Zuo et al. Sec. 5.5, Fig. 8): per layer, a probe predicts a token's position from X, its "
      "variance Var_X or its cosine Sim_X with the last position, trained on %d sequences and tested on %d others "
      "of one fixed network. Needs model random_weights with one fixed network.",
      train_, test_);
  ImGui::SetNextItemWidth(120);
  ImGui::InputInt("train", &train_, 100);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(120);
  ImGui::InputInt("test", &test_, 100);
  ImGui::SameLine();
  ImGui::Checkbox("MLP probe (else ridge)", &mlp_);
  ImGui::SameLine();
  if (running_) {
    if (ImGui::Button("Cancel")) stop();
    ImGui::SameLine();
    ImGui::Text("hidden states %lld / %d", static_cast<long long>(collected_.load()), train_ + test_);
  } else if (ImGui::Button("Recompute")) {
    start(s);
  }
  if (!note_.empty()) ImGui::TextDisabled("%s", note_.c_str());
  if (!message_.empty()) ImGui::TextColored(ImVec4(0.95f, 0.4f, 0.3f, 1), "%s", message_.c_str());
  plots();
}

void ProbesTab::draw_tensors(const std::string& folder, int prompts) {
  if (folder != folder_) {  // another folder: start over
    stop();
    for_settings_.reset();
    folder_ = folder;
    message_.clear();
    {
      std::lock_guard lock(mutex_);
      result_.reset();
    }
    ProbeRequest r;
    r.train = prompts / 2;
    r.test = prompts - prompts / 2;
    if (r.train < 2 || r.test < 2) {
      message_ = "the probes need at least 4 prompts (" + std::to_string(prompts) + " here)";
      return;
    }
    running_ = true;
    worker_ = std::thread([this, folder, r] {
      std::optional<ProbeTable> table;
      std::string why;
      try {
        const TensorSet t = open_tensors(folder);
        table = probe_tensors(t, r, int(hardware_threads()), &cancel_);
      } catch (const std::exception& e) { why = e.what(); }
      std::lock_guard lock(mutex_);
      if (table) result_ = std::move(*table);
      message_ = why;
      running_ = false;
      glfwPostEmptyEvent();
    });
  }
  ImGui::TextWrapped(
      "Position probes (Zuo et al. Sec. 5.5) on the model's hidden states: the first %d prompts "
      "train a ridge probe per layer, the other %d test it.",
      prompts / 2, prompts - prompts / 2);
  if (running_) ImGui::TextUnformatted("computing...");
  {
    std::lock_guard lock(mutex_);
    if (!message_.empty()) ImGui::TextColored(ImVec4(0.95f, 0.4f, 0.3f, 1), "%s", message_.c_str());
  }
  plots();
}

void ProbesTab::plots() {
  std::lock_guard lock(mutex_);
  if (!result_) return;
  const ImU32 colors[3] = {IM_COL32(31, 119, 180, 255), IM_COL32(255, 127, 14, 255), IM_COL32(44, 160, 44, 255)};
  const char* names[3] = {"X", "Var_X", "Sim_X"};
  // The exported charts' series (probe_charts), drawn on screen: one definition of what is plotted.
  const std::vector<LineChart> charts = probe_charts(*result_);
  auto on_screen = [&](const LineChart& chart) {
    std::vector<PlotSeries> out;
    for (const ChartSeries& c : chart.series) {
      PlotSeries p;
      p.label = c.label;
      p.x = c.x;
      p.y = c.y;
      p.err = c.se;
      for (int f = 0; f < 3; ++f)
        if (c.label == names[f]) p.color = colors[f];
      out.push_back(std::move(p));
    }
    return out;
  };
  const std::vector<PlotSeries> r_series = on_screen(charts[0]), e_series = on_screen(charts[1]);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 half(avail.x * 0.5f - 4, std::max(160.0f, avail.y - ImGui::GetTextLineHeightWithSpacing() * 2));
  PlotSpec pr, pe;
  pr.title = "(a) Pearson-R, \xC2\xB1 1 SE (bootstrap over test sequences)";
  pe.title = "(b) NRMSE (RMSE / n), \xC2\xB1 1 SE";
  pr.x_label = pe.x_label = "layer (0 = embeddings)";
  pr.y_label = "Pearson-R";
  pe.y_label = "NRMSE";
  pr.integer_x = pe.integer_x = true;
  plot("##probe_r", half, pr, r_series);
  ImGui::SameLine();
  plot("##probe_nrmse", half, pe, e_series);
  ImGui::Text("%s probe: hidden states %.1f s, probes %.1f s", mlp_ ? "MLP" : "ridge", result_->collect_s,
              result_->fit_s);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(220);
  ImGui::InputText("##probe_dir", export_dir_, sizeof export_dir_);
  ImGui::SameLine();
  if (ImGui::Button("Export PNG, SVG, CSV")) {
    const ExportResult res = export_charts(
        export_dir_, "probes", charts_page("Position probes (Zuo et al. Fig. 8)", probe_charts(*result_), 2),
        probes_csv(*result_), ExportOptions{});
    export_message_ = res.ok ? "wrote probes.png, .svg, .csv to " + std::string(export_dir_) : res.error;
  }
  if (!export_message_.empty()) ImGui::TextUnformatted(export_message_.c_str());
}

}  // namespace maskscope::gui
