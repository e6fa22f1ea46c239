// The left column: every setting of docs/model.md sections 1-2 with a tooltip that says what it is,
// which paper and equation it comes from, and its range; then the view options.
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <variant>

#include "core/model/settings_text.hpp"
#include "core/model/threading.hpp"
#include "common/format.hpp"
#include "window/live/control_helpers.hpp"
#include "window/live/live.hpp"
#include "window/widgets.hpp"

namespace maskscope::gui {

void explain(const char* text) {
  if (!ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) return;
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 28);
  ImGui::TextUnformatted(text);
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

namespace {

// Where a slider spans less than the settings accept (Limits): the whole range would make it too coarse, or
// a logarithmic slider cannot reach 0. The tooltips say so; the CLI and --set take the rest.
constexpr int kHeadsSliderMax = 16;                         // of Limits::heads_max
constexpr int kVocabSliderLog2Max = 20;                     // powers of two to 2^20, of Limits::vocab_max
constexpr int kWidthSliderLog2Max = 12;                     // parameter-free d: powers of two to 4096, of Limits::d_max
constexpr double kInitMeanSliderMax = 10;                   // |mu|, of Limits::init_mean_max
constexpr double kStdSliderMin = 1e-4;                      // a logarithmic slider: not 0
constexpr double kStdSliderMax = 10;                        // of Limits::init_std_max
constexpr double kGammaSliderMin = 0.01;                    // the residual checkbox is gamma 0
constexpr double kRopeSliderMin = 2, kRopeSliderMax = 1e6;  // of [Limits::rope_base_min, rope_base_max]
constexpr std::int64_t kSamplesSliderMin = 500, kSamplesSliderMax = 100'000'000;

// The settings table's rows of `family` (nullopt: both) that the column draws from the row alone (a
// window_label), in the table's order, each where its window_shown says: a new such setting needs no code here.
void table_controls(Settings& s, std::optional<Model> family) {
  for (const SettingInfo& row : setting_table()) {
    if (!row.window_label || row.family != family) continue;
    if (row.window_shown && !row.window_shown(s)) {
      // A std of a table that is not there is unset (validate() refuses it; nothing follows it).
      if (row.kind == SettingKind::optional_real) (s.*std::get<std::optional<double> Settings::*>(row.member)).reset();
      continue;
    }
    const FamilyOnly guard(!family || *family == s.model);
    const char* help = row.window_help ? row.window_help : row.help;
    const char* only = family == Model::parameter_free ? kParameterFreeOnly : kRandomWeightsOnly;
    if (row.widget == SettingWidget::checkbox && std::holds_alternative<bool Settings::*>(row.member)) {
      ImGui::Checkbox(row.window_label, &(s.*std::get<bool Settings::*>(row.member)));
    } else if (row.widget == SettingWidget::checkbox && row.kind == SettingKind::enumeration && row.names.count == 2) {
      bool on = row.names.index_of(s) == 1;  // a two-valued enum: its second name is "on" ("fixed")
      if (ImGui::Checkbox(row.window_label, &on)) row.names.set_index(s, on ? 1 : 0);
    } else if (row.widget == SettingWidget::combo && row.kind == SettingKind::enumeration) {
      setting_combo(row.window_label, s, row);
    } else if (row.widget == SettingWidget::input && std::holds_alternative<std::uint64_t Settings::*>(row.member)) {
      std::uint64_t step = 1;
      ImGui::InputScalar(row.window_label, ImGuiDataType_U64, &(s.*std::get<std::uint64_t Settings::*>(row.member)),
                         &step);
    } else if (row.kind == SettingKind::optional_real && row.follows) {
      // An optional std: unset follows another setting (row.follows); "own ..." gives it a value of its own.
      std::optional<double>& value = s.*std::get<std::optional<double> Settings::*>(row.member);
      bool own = value.has_value();
      const std::string own_label = std::string("own ") + row.window_label;
      if (ImGui::Checkbox(own_label.c_str(), &own)) value = own ? std::optional<double>(row.follows(s)) : std::nullopt;
      explain_family(help, guard.off, only);
      if (!value) continue;
      double v = *value;
      const double lo = std::max(row.min, kStdSliderMin), hi = std::min(row.max, kStdSliderMax);
      if (ImGui::SliderScalar(row.window_label, ImGuiDataType_Double, &v, &lo, &hi, "%.4g",
                              ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp))
        value = v;
    } else {
      continue;
    }
    explain_family(help, guard.off, only);
  }
}

void family_controls(Settings& s) {
  Model model = s.model;
  if (enum_combo("model", model, kModelNames, kModelLabels)) {
    const bool was_random_weights = s.random_weights();
    s.model = model;
    // Family defaults (docs/model.md section 7): a GPT-2 block has its residual; one head where heads do not exist.
    apply_family_default_gamma(s, was_random_weights, /*gamma_given=*/false);
    if (s.random_weights()) {
      if (s.d > Limits::rw_d_max) s.d = 384;
      if (s.d % s.heads != 0) s.heads = 1;
    } else {
      s.heads = 1;
    }
  }
  explain(
      "Model family (docs/model.md section 7). parameter-free: the decoder of LN-recency and Behind RoPE, no weights, "
      "inputs with anisotropy alpha. random weights: a GPT-2 / NanoGPT decoder with random initialization, "
      "token embeddings, H heads, an optional MLP and no positional encoding (Zuo et al. Sec. 5.1): position "
      "emerges after the first causal layer all the same.");
}

void random_network_controls(Settings& s) {
  const FamilyOnly guard(s.random_weights());
  const bool off = guard.off;
  int heads = s.heads;
  if (ImGui::SliderInt("heads", &heads, Limits::heads_min, kHeadsSliderMax, "%d", ImGuiSliderFlags_AlwaysClamp)) {
    // Only divisors of d: step to the nearest one in the direction of the move.
    const int dir = heads > s.heads ? 1 : -1;
    auto valid = [](int h) { return h >= Limits::heads_min && h <= Limits::heads_max; };
    while (valid(heads) && s.d % heads != 0) heads += dir;
    if (valid(heads) && s.d % heads == 0) s.heads = heads;
  }
  explain_family(
      "Attention heads H; d must be divisible by H (head width d_h = d / H), so the slider steps over "
      "divisors of d. Maps show the mean over heads, or one head (View). Zuo et al. use 6 heads at d 384.",
      off, kRandomWeightsOnly);
  int log2v = 0;
  while ((std::int64_t(1) << (log2v + 1)) <= s.vocab && log2v < kVocabSliderLog2Max) ++log2v;
  char vlabel[32];
  std::snprintf(vlabel, sizeof vlabel, "%lld", static_cast<long long>(s.vocab));
  if (ImGui::SliderInt("vocab", &log2v, 0, kVocabSliderLog2Max, vlabel, ImGuiSliderFlags_NoInput))
    s.vocab = std::int64_t(1) << log2v;
  explain_family(
      "Vocabulary size V: token ids are uniform over V, so small V repeats tokens (as real text does). "
      "Powers of two from 1 to 2^20 here (CLI: 1 to 10^9).",
      off, kRandomWeightsOnly);
  const double mmin = -kInitMeanSliderMax, mmax = kInitMeanSliderMax;
  ImGui::SliderScalar("init mean", ImGuiDataType_Double, &s.init_mean, &mmin, &mmax, "%.2f",
                      ImGuiSliderFlags_AlwaysClamp);
  explain_family("Mean mu of every initial weight (Zuo et al. Table 4: 0, 4, 8). Slider -10 to 10 (CLI: -100 to 100).",
                 off, kRandomWeightsOnly);
  const double smin = kStdSliderMin, smax = kStdSliderMax;
  ImGui::SliderScalar("init std", ImGuiDataType_Double, &s.init_std, &smin, &smax, "%.4g",
                      ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp);
  explain_family(
      "Standard deviation sigma of the initial weights (NanoGPT: 0.02; Zuo et al. Table 5: 0.002, 0.02, "
      "0.2). W_O and W_2 get sigma / sqrt(2 L) (GPT-2's scaled residual projections).",
      off, kRandomWeightsOnly);
  enum_combo("positions", s.pos_embedding, kPosEmbeddingNames, kPosEmbeddingLabels);
  explain_family(
      "none: no positional encoding (NoPE). learned absolute: a position table P (n x d), drawn like the token "
      "table, is added to the embeddings, x_i = E[t_i] + P[i], as in Zuo et al.'s Fig. 5 at initialization.",
      off, kRandomWeightsOnly);
  enum_combo("weights", s.weights, kWeightsNames, kWeightsLabels);
  explain_family(
      "per sample: every Monte Carlo sample draws a fresh network, so the maps are expectations over "
      "initializations. fixed: one network from the weight seed; samples vary the tokens only (Zuo et al. "
      "average one network over 256 inputs).",
      off, kRandomWeightsOnly);
  // The rarer rows (token file, MLP, own embedding std, W_O W_2 mean, hidden state, token format) fold under a
  // header, open at first when one of them is set: the column's View group fits a 1280x800 window (issue 48).
  if (s.random_weights()) {
    const Settings d;
    const bool set = !s.tokens.empty() || s.embed_std || s.mlp != d.mlp || s.residual_mean != d.residual_mean ||
                     s.hidden != d.hidden || s.tokens_format != d.tokens_format;
    ImGui::SetNextItemOpen(set, ImGuiCond_Once);
    const bool open = ImGui::CollapsingHeader("more network settings");
    explain("Token file, MLP, own embedding std, W_O W_2 mean, hidden state, token format. Click to show them.");
    if (!open) return;
  }
  // Given token sequences (docs/model.md section 11): a path, applied on Enter (a half-typed path is no file).
  char path[512];
  std::snprintf(path, sizeof path, "%s", s.tokens.c_str());
  if (ImGui::InputTextWithHint("token file", "uniform ids (e.g. builtin:zuo-reversal)", path, sizeof path,
                               ImGuiInputTextFlags_EnterReturnsTrue))
    s.tokens = path;
  explain_family(
      "Given token sequences instead of uniform ids (docs/model.md section 11): a file with one sequence per line "
      "(sample s reads line s mod lines), or builtin:zuo-addition, builtin:zuo-reversal, builtin:zuo-indexing, "
      "builtin:zuo-ordering (Zuo et al.'s tasks, characters). Every line needs n tokens (n - 1 with BOS) and ids "
      "below vocab; a bad file is named in red below. Press Enter to apply; clear it for uniform ids.",
      off, kRandomWeightsOnly);
  table_controls(s, Model::random_weights);
}

void model_controls(Settings& s, float label_w) {
  family_controls(s);
  const bool rw = s.random_weights();
  if (rw) {
    int d = s.d;
    if (ImGui::InputInt("d (width)", &d, 64, 256)) s.d = std::clamp(d, Limits::d_min, Limits::rw_d_max);
    explain("Token width d, 1 to 4096 for the random-weight network (Zuo et al.: 384). Type a value or step by 64.");
  } else {
    int log2d = 0;
    while ((1 << (log2d + 1)) <= s.d && log2d < kWidthSliderLog2Max) ++log2d;
    char dlabel[32];
    std::snprintf(dlabel, sizeof dlabel, "%d", s.d);
    if (ImGui::SliderInt("d (width)", &log2d, 0, kWidthSliderLog2Max, dlabel, ImGuiSliderFlags_NoInput))
      s.d = 1 << log2d;
    explain(
        "Token width d (docs/model.md section 1). Larger d concentrates the inner products: the layer-2 "
        "recency bias of LayerNorm shrinks as d grows (LN-recency Sec. 3: RP 0.6382 at d 16, 0.5544 at d 64). "
        "Slider: powers of two, 1 to 4096 (CLI: 1 to 65536).");
  }
  ImGui::SliderInt("n (tokens)", &s.n, Limits::n_min, Limits::n_max, "%d",
                   ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp);
  explain(
      "Sequence length n: the maps are n x n (query i down, key j across, 0-based). Range 1 to 512. "
      "RP needs n >= 3, the adjacency score n >= 3.");
  ImGui::SliderInt("layers", &s.layers, Limits::layers_min, Limits::layers_max, "%d", ImGuiSliderFlags_AlwaysClamp);
  explain(
      "Number of layers L (docs/model.md sections 2 and 7), 1 to 48. Position appears from layer 2 on in the "
      "parameter-free model (layer 1 sees exchangeable inputs, Behind RoPE Sec. 3), and right after the first "
      "causal layer in a random network's hidden states (Zuo et al.).");
  {
    const FamilyOnly guard(!rw);
    const double amin = Limits::alpha_min, amax = Limits::alpha_max;
    ImGui::SliderScalar("alpha", ImGuiDataType_Double, &s.alpha, &amin, &amax, "%.2f", ImGuiSliderFlags_AlwaysClamp);
    explain_family(
        "Input anisotropy alpha in [0, 1]: x_i = (eps_i + c v) / sqrt(d), c = sqrt(alpha / (1 - alpha)), so "
        "E[cos(x_i, x_j)] -> alpha (LN-recency Eq. 6). Anisotropic inputs amplify the recency bias.",
        guard.off, kParameterFreeOnly);
  }
  if (rw) {
    ImGui::Spacing();
    ImGui::TextDisabled("Random network");
    random_network_controls(s);
  } else {
    // The other family's twelve greyed rows, folded: the column (Reset, View) fits a 1280x800 window (issue 48).
    const bool open = ImGui::CollapsingHeader("random network (greyed)");
    explain("The random-weight family's settings: they apply with model = random weights. Click to see them.");
    if (open) random_network_controls(s);
    ImGui::Spacing();
  }

  enum_combo("norm", s.norm, kNormNames, kNormLabels);
  explain(
      "Y = Norm(X) before the scores (docs/model.md section 2). none: no positional bias beyond the mask "
      "(LN-recency Prop. 1, RP 0.5); LayerNorm: recency (LN-recency Sec. 3); L2: Behind RoPE's setting.");
  {
    const FamilyOnly guard(!rw);
    enum_combo("score scale", s.scale, kScaleNames, kScaleLabels);
    explain_family(
        "S = scale * Q K^T. 1/sqrt(d): LN-recency (and standard attention); 1: Behind RoPE Sec. 3.2; "
        "1/d: Behind RoPE Fig. 7.",
        guard.off, kParameterFreeOnly);
  }

  bool residual = s.gamma > 0;
  if (ImGui::Checkbox("residual", &residual)) s.gamma = residual ? 1.0 : 0.0;
  explain(
      "Residual connection X' = A Y + gamma X (docs/model.md section 2). The residual damps the recency bias "
      "(LN-recency Sec. 3: RP 0.6382 -> 0.5931 at d 16). gamma in [0, 1].");
  if (residual) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(-label_w - ImGui::GetCursorPosX() + ImGui::GetStyle().WindowPadding.x);
    const double gmin = kGammaSliderMin, gmax = Limits::gamma_max;
    ImGui::SliderScalar("gamma", ImGuiDataType_Double, &s.gamma, &gmin, &gmax, "%.2f", ImGuiSliderFlags_AlwaysClamp);
    explain("Residual strength gamma in (0, 1].");
  }

  bool rope = s.rope();
  if (ImGui::Checkbox("RoPE", &rope)) s.rope_base = rope ? 10000.0 : 0.0;
  explain(
      "Rotary position embedding on Q and K (Su et al., RoFormer Eq. 34); values are not rotated. "
      "Without the mask RoPE is purely relative; with the causal mask the pattern becomes absolute "
      "(Behind RoPE Fig. 4 and 10). Needs even d.");
  if (rope) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(-label_w - ImGui::GetCursorPosX() + ImGui::GetStyle().WindowPadding.x);
    const double bmin = kRopeSliderMin, bmax = kRopeSliderMax;
    ImGui::SliderScalar("base", ImGuiDataType_Double, &s.rope_base, &bmin, &bmax, "%.0f",
                        ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp);
    explain("RoPE base theta: pair p turns by i * theta^(-2p/d). 10000 in the papers; slider 2 to 1e6.");
  }

  enum_combo("mask", s.mask, kMaskKindNames, kMaskKindLabels);
  explain(
      "Which keys a query sees (docs/model.md section 2): causal j <= i (the source of position), bidirectional "
      "all j (exchangeable tokens: RP and adjacency 0.5), sliding window i - w < j <= i.");
  if (s.mask == MaskKind::window) {
    s.window = std::clamp(s.window, 1, s.n);
    ImGui::SliderInt("window w", &s.window, 1, s.n, "%d", ImGuiSliderFlags_AlwaysClamp);
    explain("Window width w in [1, n]: query i sees keys i - w < j <= i.");
  }
  table_controls(s, std::nullopt);
  table_controls(s, Model::parameter_free);
}

void monte_carlo_controls(Controller& controller, Settings& s) {
  bool automatic = controller.auto_samples();
  if (ImGui::Checkbox("auto", &automatic)) controller.set_auto_samples(automatic);
  explain(
      "Auto sample count: about five seconds of both cores at any size (100,000 at n 10, d 64, L 4; "
      "fewer at large n, at least 500). Untick to choose the count yourself.");
  ImGui::SameLine();
  ImGui::BeginDisabled(automatic);
  std::int64_t smin = kSamplesSliderMin, smax = kSamplesSliderMax;
  ImGui::SliderScalar("samples", ImGuiDataType_S64, &s.samples, &smin, &smax, "%lld",
                      ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp);
  ImGui::EndDisabled();
  explain(
      "Monte Carlo samples: every map and metric is a mean over samples, with its standard error. "
      "The papers use 10^5 (Behind RoPE) and 10^7 (LN-recency). The view refines while they arrive.");
  std::uint64_t step = 1;
  ImGui::InputScalar("seed", ImGuiDataType_U64, &s.seed, &step);
  explain("Random seed. Same seed, same numbers, whatever the thread count.");
  const int hw = int(hardware_threads());
  int threads = s.threads == 0 ? hw : s.threads;
  if (ImGui::SliderInt("threads", &threads, 1, hw, "%d", ImGuiSliderFlags_AlwaysClamp)) s.threads = threads;
  explain("Worker threads (1 to the machine's cores). Changes speed only, never the numbers.");
}

// Reset, Undo, Redo and Pause, first in the column so that no window size scrolls them away (issue 48).
void action_buttons(Controller& controller) {
  if (ImGui::Button("Reset")) controller.reset_to_defaults(Settings{});
  explain("Back to the defaults (n 10, d 64, 4 layers, LN, alpha 0.5, causal). Undo brings you back.");
  ImGui::SameLine();
  ImGui::BeginDisabled(!controller.can_undo());
  if (ImGui::Button("Undo")) controller.undo();
  ImGui::EndDisabled();
  explain("Undo the last settings change (Ctrl+Z).");
  ImGui::SameLine();
  ImGui::BeginDisabled(!controller.can_redo());
  if (ImGui::Button("Redo")) controller.redo();
  ImGui::EndDisabled();
  explain("Redo (Ctrl+Shift+Z or Ctrl+Y).");
  ImGui::SameLine();
  if (ImGui::Button(controller.paused() ? "Resume" : "Pause")) controller.set_paused(!controller.paused());
  explain("Pause or resume the live simulation (the numbers so far stay on screen).");
}

}  // namespace

void draw_controls(Controller& controller, ViewOptions& view, std::vector<SettingError>& edit_errors, float ui_scale) {
  action_buttons(controller);  // before the settings are read: a Reset shows at once
  ImGui::Spacing();
  Settings s = controller.settings();
  const Settings before = s;
  const float label_w = 110.0f * ui_scale;
  ImGui::PushItemWidth(-label_w);
  ImGui::TextUnformatted("Model");
  ImGui::Separator();
  model_controls(s, label_w);
  ImGui::Spacing();
  ImGui::TextUnformatted("Monte Carlo");
  ImGui::Separator();
  monte_carlo_controls(controller, s);
  if (!(s == before)) {
    if (s.samples != before.samples) controller.set_auto_samples(false);
    edit_errors = controller.edit(s);
  }
  if (controller.settings() == s) edit_errors.clear();
  for (const auto& e : edit_errors) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.9f, 0.3f, 0.25f, 1.0f));
    ImGui::TextWrapped("%s: %s", e.setting.c_str(), e.message.c_str());
    ImGui::PopStyleColor();
  }
  if (!ImGui::IsAnyItemActive()) controller.commit_undo_point();

  ImGui::Spacing();
  ImGui::TextUnformatted("View");
  ImGui::Separator();
  view_controls(view, controller.settings());
  ImGui::PopItemWidth();
}

TensorAction draw_tensor_controls(const Controller& controller, ViewOptions& view, const TensorInfo& info,
                                  float ui_scale) {
  TensorAction action = TensorAction::none;
  const float label_w = 110.0f * ui_scale;
  ImGui::PushItemWidth(-label_w);
  ImGui::TextUnformatted("Real model");
  ImGui::Separator();
  ImGui::TextWrapped("%s", info.model.empty() ? "(no model name)" : info.model.c_str());
  ImGui::TextDisabled("%s", info.folder.c_str());
  ImGui::Text("%d prompts, %d layers x %d heads", info.prompts, info.layers, info.heads);
  ImGui::Text("T = %d tokens, %s mask", info.tokens, info.mask.c_str());
  ImGui::Text("hidden states: %s", info.d > 0 ? ("d = " + std::to_string(info.d)).c_str() : "none (no cosines)");
  ImGui::Text("weights: %s", info.weights_given ? "given" : "softmax of the logits");
  explain(
      "Every map and metric is the simulation's, computed on these tensors: each prompt is one sample, so the "
      "numbers are means over prompts and the standard errors are over prompts.");
  ImGui::Spacing();
  if (ImGui::Button("Compare with the simulation")) action = TensorAction::compare;
  explain("A figure with this model's maps beside the parameter-free decoder's prediction at the same n (Figure tab).");
  if (ImGui::Button("Back to the simulation")) action = TensorAction::close;
  explain("Close the tensors; the simulation shown before comes back.");
  ImGui::Spacing();
  ImGui::TextUnformatted("View");
  ImGui::Separator();
  view_controls(view, controller.settings());
  ImGui::PopItemWidth();
  return action;
}

}  // namespace maskscope::gui
