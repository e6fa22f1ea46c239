// One value type that holds every simulation setting (docs/model.md sections 1-2),
// with defaults in the declaration, and the validation that names each bad setting.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <span>
#include <string_view>
#include <variant>
#include <vector>

#include "core/model/enum_names.hpp"

namespace maskscope {

enum class Norm { none, l2, layernorm, rmsnorm };
enum class Scale { one, sqrt_d, d };  // score scale 1, 1/sqrt(d), 1/d
enum class MaskKind { causal, bidirectional, window };
// docs/model.md section 7: the parameter-free decoder of sections 1-2, or a GPT-2 / NanoGPT decoder
// with random weights (Zuo et al.).
enum class Model { parameter_free, random_weights };
// random_weights: a fresh network every sample (expectation over initializations) or one
// network from weight_seed (samples vary the tokens only).
enum class WeightsMode { per_sample, fixed };
// random_weights: the mean of the residual projections W_O and W_2. init_mean: N(mu_init, .) like every
// weight; zero: N(0, .), as NanoGPT draws them when only its _init_weights gets the changed mean (its
// separate c_proj loop re-draws them with mean 0; Zuo et al. Table 4, docs/papers.md).
enum class ResidualMean { init_mean, zero };
// random_weights: the hidden state of layers 1..L whose cosines, adjacency and norms are measured. block:
// the block's output x' (the residual stream); attention: the attention sublayer's output concat(A v) W_O,
// before the residual add (the reading of Zuo et al.'s "causal attention's output embeddings" that
// reproduces their Table 4, docs/papers.md).
enum class HiddenState { block, attention };
// random_weights: no positional embeddings (NoPE) or a learned absolute position table P (n x d) added to
// the token embeddings, x_i = E[t_i] + P[i], at initialization (Zuo et al. `003` Fig. 5).
enum class PosEmbedding { none, learned };
// Both families (docs/model.md section 12): every position exchangeable (none), or position 0 an anchor
// shared by every sequence (fixed): the parameter-free model's common direction v / sqrt(d), the
// random-weight model's BOS token (an extra embedding row, id vocab). Ruscio et al. `004` Sec. 5.1, 5.7.
enum class FirstToken { none, fixed };
// random_weights with given token sequences (Settings::tokens): each line of the file as token ids separated by
// spaces, or as characters (printable ASCII, id = code - 32; docs/model.md section 11).
enum class TokensFormat { ids, chars };

// The names of each enum as the command line, JSON and presets spell them (enum_names.hpp).
inline constexpr EnumTable<Norm, 4> kNormNames{
    {{Norm::none, "none"}, {Norm::l2, "l2"}, {Norm::layernorm, "layernorm"}, {Norm::rmsnorm, "rmsnorm"}}};
inline constexpr EnumTable<Scale, 3> kScaleNames{{{Scale::one, "one"}, {Scale::sqrt_d, "sqrt_d"}, {Scale::d, "d"}}};
// The mask's kinds; the window kind's text carries its width ("window:4", mask_to_string).
inline constexpr EnumTable<MaskKind, 3> kMaskKindNames{
    {{MaskKind::causal, "causal"}, {MaskKind::bidirectional, "bidirectional"}, {MaskKind::window, "window"}}};
inline constexpr EnumTable<Model, 2> kModelNames{
    {{Model::parameter_free, "parameter_free"}, {Model::random_weights, "random_weights"}}};
inline constexpr EnumTable<WeightsMode, 2> kWeightsNames{
    {{WeightsMode::per_sample, "per_sample"}, {WeightsMode::fixed, "fixed"}}};
inline constexpr EnumTable<ResidualMean, 2> kResidualMeanNames{
    {{ResidualMean::init_mean, "init_mean"}, {ResidualMean::zero, "zero"}}};
inline constexpr EnumTable<HiddenState, 2> kHiddenStateNames{
    {{HiddenState::block, "block"}, {HiddenState::attention, "attention"}}};
inline constexpr EnumTable<PosEmbedding, 2> kPosEmbeddingNames{
    {{PosEmbedding::none, "none"}, {PosEmbedding::learned, "learned"}}};
inline constexpr EnumTable<FirstToken, 2> kFirstTokenNames{{{FirstToken::none, "none"}, {FirstToken::fixed, "fixed"}}};
inline constexpr EnumTable<TokensFormat, 2> kTokensFormatNames{
    {{TokensFormat::ids, "ids"}, {TokensFormat::chars, "chars"}}};

// The labels a reader knows, for figures, legends and the window's combo boxes (issue 48): "1/d", not the
// name "d". Same order as the name tables; setting_value_label (settings_text.hpp) maps a name to its label.
inline constexpr EnumTable<Norm, 4> kNormLabels{
    {{Norm::none, "none"}, {Norm::l2, "L2"}, {Norm::layernorm, "LayerNorm"}, {Norm::rmsnorm, "RMSNorm"}}};
inline constexpr EnumTable<Scale, 3> kScaleLabels{{{Scale::one, "1"}, {Scale::sqrt_d, "1/sqrt(d)"}, {Scale::d, "1/d"}}};
inline constexpr EnumTable<MaskKind, 3> kMaskKindLabels{
    {{MaskKind::causal, "causal"}, {MaskKind::bidirectional, "bidirectional"}, {MaskKind::window, "sliding window"}}};
inline constexpr EnumTable<Model, 2> kModelLabels{
    {{Model::parameter_free, "parameter-free"}, {Model::random_weights, "random weights"}}};
inline constexpr EnumTable<WeightsMode, 2> kWeightsLabels{
    {{WeightsMode::per_sample, "new network per sample"}, {WeightsMode::fixed, "one fixed network"}}};
inline constexpr EnumTable<PosEmbedding, 2> kPosEmbeddingLabels{
    {{PosEmbedding::none, "none (NoPE)"}, {PosEmbedding::learned, "learned absolute"}}};

struct Settings {
  int n = 10;                       // tokens
  int d = 64;                       // width
  int layers = 4;                   // L
  double alpha = 0.5;               // input anisotropy, LN-recency Eq. 6
  Norm norm = Norm::layernorm;      // Y = Norm(X)
  Scale scale = Scale::sqrt_d;      // S = scale * Q K^T
  double gamma = 0.0;               // residual strength, X' = A Y + gamma X
  double rope_base = 0.0;           // RoPE theta; 0 = off
  std::uint64_t rope_scramble = 0;  // != 0: RoPE's frequency bands permuted over the dimensions by this seed (rope.hpp)
  MaskKind mask = MaskKind::causal;
  int window = 4;                 // w of the sliding-window mask (i - w < j <= i)
  bool unit_input = false;        // rescale each x_i to unit L2 norm (Behind RoPE Sec. 3.2)
  std::int64_t samples = 100000;  // Monte Carlo samples
  std::uint64_t seed = 1;
  int threads = 0;                            // worker threads; 0 = all cores
  FirstToken first_token = FirstToken::none;  // position 0 an anchor shared by every sequence (both families)

  // Model family and the random-weight network's settings (docs/model.md section 7); alpha, scale and
  // unit_input apply to parameter_free only, the fields below to random_weights only.
  Model model = Model::parameter_free;
  int heads = 1;                                         // H; d divisible by H, d_h = d / H
  std::int64_t vocab = 16;                               // V: token ids uniform over V
  bool mlp = true;                                       // GELU(Norm(h) W_1) W_2 with W_1 in R^(d x 4d)
  double init_mean = 0.0;                                // mu_init of every weight
  double init_std = 0.02;                                // sigma_init (NanoGPT); W_O, W_2 get sigma_init / sqrt(2 L)
  std::optional<double> embed_std;                       // std of the embedding table; unset = init_std
  ResidualMean residual_mean = ResidualMean::init_mean;  // mean of W_O and W_2
  HiddenState hidden = HiddenState::block;               // the measured hidden state of layers 1..L
  WeightsMode weights = WeightsMode::per_sample;
  std::uint64_t weight_seed = 1;  // the network of `fixed`
  PosEmbedding pos_embedding = PosEmbedding::none;
  std::optional<double> pos_std;  // std of the position table; unset = the embedding table's std
  // Given token sequences instead of uniform ids (docs/model.md section 11): a file path, or builtin:NAME for a
  // shipped file (assets/tokens); sample s reads line s mod lines. Empty: ids uniform over the vocabulary.
  std::string tokens;
  TokensFormat tokens_format = TokensFormat::ids;
  // Zuo et al.'s Fig. 2 and Fig. 13: fixed-bin histograms of the cosine differences and of each sample's
  // adjacency and RP, with this many bins (0 = off; docs/model.md section 9).
  int histograms = 0;
  // The Gram matrices E[<s_i, s_j>] and E[cos(s_i, s_j)] of every stage of each layer's forward pass
  // (stages.hpp, docs/model.md section 12): n^2 d per stage and sample, so off unless asked for.
  bool stage_grams = false;
  // A trained or GPT-2-layout network instead of a drawn one (docs/model.md, "Checkpoints"): a .safetensors file
  // with its config.json beside it, or a run folder (its last step-NNNNNN.safetensors, or `step`; "DIR@STEP" too).
  // The model settings (d, layers, heads, vocab, norm, gamma, mlp, RoPE, positions, first token) come from its
  // config.json (checkpoint_config.hpp). Empty: the network is drawn.
  std::string checkpoint;
  std::int64_t step = -1;  // a run folder's checkpoint step; -1 = the last

  bool operator==(const Settings&) const = default;

  bool rope() const { return rope_base > 0.0; }
  bool random_weights() const { return model == Model::random_weights; }
  double embedding_std() const { return embed_std.value_or(init_std); }
  double position_std() const { return pos_std.value_or(embedding_std()); }
  bool learned_positions() const { return random_weights() && pos_embedding == PosEmbedding::learned; }
  bool fixed_first_token() const { return first_token == FirstToken::fixed; }
  bool from_checkpoint() const { return !checkpoint.empty(); }
  int head_width() const { return d / std::max(1, heads); }
  // True when these settings give the same numbers as `other` (threads do not change results).
  bool same_simulation(const Settings& other) const;
};

// Valid ranges, shared by validate(), the CLI's help and the GUI's sliders.
struct Limits {
  static constexpr int n_min = 1, n_max = 512;
  static constexpr int d_min = 1, d_max = 65536;
  static constexpr int layers_min = 1, layers_max = 48;
  static constexpr double alpha_min = 0.0, alpha_max = 1.0;
  static constexpr double gamma_min = 0.0, gamma_max = 1.0;
  static constexpr double rope_base_min = 1.0, rope_base_max = 1e9;
  static constexpr std::int64_t samples_min = 1, samples_max = 1'000'000'000'000LL;
  static constexpr int threads_min = 0, threads_max = 256;
  // random_weights: the network's weights are d x d matrices, so d is bounded tighter.
  static constexpr int rw_d_max = 4096;
  static constexpr int heads_min = 1, heads_max = 64;
  static constexpr std::int64_t vocab_min = 1, vocab_max = 1'000'000'000LL;
  static constexpr double init_mean_max = 100.0;  // |mu_init|
  static constexpr double init_std_max = 100.0;
  static constexpr int histograms_max = 4096;                                   // bins
  static constexpr std::int64_t step_min = -1, step_max = 1'000'000'000'000LL;  // checkpoint steps
};

// The settings descriptor table (after Dear ImGui's GStyleVarInfo): one row per setting with its member,
// its command-line flag, its --set / JSON key, what its value is, its valid range, its model family,
// whether a sweep may vary it, the window's widget for it and its help. Every front end reads this table:
// JSON in and out, `--set`, the CLI's and the window's flags, Python's keywords, the sweep's axes, the
// window's combos and the docs' check (settings_text.hpp). A new setting is a field and a row.
enum class SettingKind {
  real,           // double in [min, max]
  whole,          // int or int64 in [min, max]
  u64,            // a seed: the full unsigned 64-bit range
  optional_real,  // std::optional<double> in [min, max]; null (unset) follows another setting
  boolean,        // 0 / 1 / true / false
  enumeration,    // a name of the row's enum table (settings.hpp's k*Names)
  text,           // any text (a path); empty is null in JSON
  mask,           // "causal", "bidirectional" or "window:W" (mask and window together)
};
// How the window edits the setting. Rows with a window_label are drawn from the row (checkbox: a boolean, or
// a two-valued enum whose second name is "on"; combo: an enum; input: a seed; log_slider: an optional std
// with its "own ..." checkbox); the other hints describe what controls.cpp lays out by hand.
enum class SettingWidget { slider, log_slider, combo, checkbox, input, text_input };

// The member a row reads and writes (a pointer to member; enums and the mask go through SettingEnum and
// mask_to_string / parse_mask instead).
using SettingMember =
    std::variant<std::monostate, int Settings::*, std::int64_t Settings::*, std::uint64_t Settings::*,
                 double Settings::*, std::optional<double> Settings::*, bool Settings::*, std::string Settings::*>;

// An enum row's names (its EnumTable) and its member, by the index into that table: a combo box lists the
// names in table order and sets the value of the picked index, so reordering an enum breaks nothing.
struct SettingEnum {
  std::size_t count = 0;
  std::string_view (*name_at)(std::size_t) = nullptr;
  std::size_t (*index_of)(const Settings&) = nullptr;  // the current value's index in the table
  void (*set_index)(Settings&, std::size_t) = nullptr;
  // The label a reader knows of the name at an index (its k*Labels table: "1/sqrt(d)" for sqrt_d); nullptr: the
  // name is its label.
  std::string_view (*label_at)(std::size_t) = nullptr;
};

struct SettingInfo {
  const char* flag;  // as typed, without "--" (dashes: "init-std")
  const char* key;   // the --set / JSON key (underscores: "init_std")
  SettingKind kind;
  SettingMember member;         // std::monostate for enumeration and mask rows
  SettingEnum names;            // enumeration rows only
  double min, max;              // the range JSON and --set accept (Limits); real, whole and optional_real
  std::optional<Model> family;  // nullopt: both families; else the family it applies to (refused for the other)
  const char* not_swept;        // nullptr: a sweep may vary it; else why not ("it does not change the numbers")
  SettingWidget widget;         // the window's control
  const char* help;             // the CLI's help, with the valid range
  // The values the window's Sweep tab starts an axis of this setting with (sweep --vary's LIST: "0:1:11",
  // "none,l2"); nullptr: the tab does not offer it (the CLI's --vary takes every row without not_swept).
  const char* window_sweep = nullptr;
  // A checkbox or combo row with a window_label is drawn by the window's left column from the row alone
  // (app/gui/window/live/controls.cpp, table_controls), under that label with window_help as its tooltip,
  // greyed for the other family. nullptr: laid out by hand there, or not in the column (set by a tab).
  const char* window_label = nullptr;
  const char* window_help = nullptr;
  // When the column shows the row's control (nullptr: always): a setting that means something only beside
  // another one (the seed of the fixed network, the std of the learned position table).
  bool (*window_shown)(const Settings&) = nullptr;
  // optional_real rows: the value the setting follows while it is unset (the window's "own ..." starts there).
  double (*follows)(const Settings&) = nullptr;
};

// Every setting, in the CLI's --help order.
std::span<const SettingInfo> setting_table();
// The row of a key ("init_std"), or nullptr.
const SettingInfo* setting_info(std::string_view key);

struct SettingError {
  std::string setting;  // the setting's name as the CLI spells it, e.g. "alpha"
  std::string message;  // what is wrong and the valid range
};

// Every violation, each naming its setting and the valid range; empty when valid.
std::vector<SettingError> validate(const Settings& s);

// Names as used on the command line and in JSON.
std::string_view to_string(Norm v);
std::string_view to_string(Scale v);
std::string mask_to_string(const Settings& s);  // "causal", "bidirectional", "window:W"
std::optional<Norm> parse_norm(std::string_view text);
std::optional<Scale> parse_scale(std::string_view text);
std::string_view to_string(Model v);
std::string_view to_string(WeightsMode v);
std::string_view to_string(ResidualMean v);
std::string_view to_string(HiddenState v);
std::string_view to_string(PosEmbedding v);
std::string_view to_string(FirstToken v);
std::string_view to_string(TokensFormat v);
std::optional<Model> parse_model(std::string_view text);
std::optional<WeightsMode> parse_weights(std::string_view text);
// Parses "causal", "bidirectional" or "window:W" into s.mask / s.window; false if malformed.
bool parse_mask(std::string_view text, Settings& s);

// Numeric value of the score scale for width d.
double scale_factor(Scale scale, int d);

// The model family a setting (by its JSON / --set name) belongs to; nullopt when it applies to both.
// alpha, scale and unit_input are the parameter-free model's; the network's fields the random-weight
// family's (docs/model.md section 7).
std::optional<Model> setting_family(std::string_view key);

// Short label in the papers' words, e.g. "alpha=0.5, LN, Res".
std::string short_label(const Settings& s);

// Threads actually used: s.threads, or the machine's cores when 0.
int resolved_threads(const Settings& s);

}  // namespace maskscope
