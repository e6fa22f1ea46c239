// Validation and naming of the simulation settings.
#include "core/model/settings.hpp"

#include <charconv>
#include <cmath>
#include <sstream>
#include "core/model/threading.hpp"

#include "core/model/checkpoint_config.hpp"
#include "core/model/token_file.hpp"

namespace maskscope {

namespace {

std::string range_text(double lo, double hi) {
  std::ostringstream os;
  os << "[" << lo << ", " << hi << "]";
  return os.str();
}

}  // namespace

bool Settings::same_simulation(const Settings& other) const {
  Settings a = *this, b = other;
  a.threads = b.threads = 0;
  return a == b;
}

std::vector<SettingError> validate(const Settings& s) {
  std::vector<SettingError> errors;
  auto add = [&](std::string name, std::string message) { errors.push_back({std::move(name), std::move(message)}); };
  if (s.n < Limits::n_min || s.n > Limits::n_max)
    add("n", "n = " + std::to_string(s.n) + " is out of range; valid: integer in " +
                 range_text(Limits::n_min, Limits::n_max));
  if (s.d < Limits::d_min || s.d > Limits::d_max)
    add("d", "d = " + std::to_string(s.d) + " is out of range; valid: integer in " +
                 range_text(Limits::d_min, Limits::d_max));
  if (s.layers < Limits::layers_min || s.layers > Limits::layers_max)
    add("layers", "layers = " + std::to_string(s.layers) + " is out of range; valid: integer in " +
                      range_text(Limits::layers_min, Limits::layers_max));
  if (!std::isfinite(s.alpha) || s.alpha < Limits::alpha_min || s.alpha > Limits::alpha_max)
    add("alpha", "alpha must be a number in [0, 1] (1 = every token is the shared vector v)");
  if (!std::isfinite(s.gamma) || s.gamma < Limits::gamma_min || s.gamma > Limits::gamma_max)
    add("gamma", "gamma (residual strength) must be a number in " + range_text(Limits::gamma_min, Limits::gamma_max));
  if (!std::isfinite(s.rope_base) ||
      (s.rope_base != 0.0 && (s.rope_base < Limits::rope_base_min || s.rope_base > Limits::rope_base_max)))
    add("rope", "rope (RoPE base theta) must be 0 (off) or a number in " +
                    range_text(Limits::rope_base_min, Limits::rope_base_max));
  if (s.rope() && s.d % 2 != 0)
    add("rope", "RoPE rotates pairs of coordinates and needs an even d (d = " + std::to_string(s.d) +
                    "); use an even d or rope 0");
  if (s.rope_scramble != 0 && !s.rope())
    add("rope_scramble", "scrambled RoPE needs RoPE on (rope > 0); use rope_scramble 0 or set rope");
  if (s.mask == MaskKind::window && (s.window < 1 || s.window > std::max(1, s.n)))
    add("mask", "window width w = " + std::to_string(s.window) +
                    " is out of range; valid: window:W with W in [1, n] = " + range_text(1, std::max(1, s.n)));
  if (s.samples < Limits::samples_min || s.samples > Limits::samples_max)
    add("samples", "samples = " + std::to_string(s.samples) + " is out of range; valid: integer in [1, 10^12]");
  if (s.random_weights()) {
    if (s.d > Limits::rw_d_max)
      add("d", "d = " + std::to_string(s.d) + " is out of range for random_weights; valid: integer in " +
                   range_text(Limits::d_min, Limits::rw_d_max));
    if (s.heads < Limits::heads_min || s.heads > Limits::heads_max)
      add("heads", "heads = " + std::to_string(s.heads) + " is out of range; valid: integer in " +
                       range_text(Limits::heads_min, Limits::heads_max));
    else if (s.d % s.heads != 0)
      add("heads", "d = " + std::to_string(s.d) + " is not divisible by heads = " + std::to_string(s.heads) +
                       "; every head has width d / heads");
    else if (s.rope() && s.head_width() % 2 != 0)
      add("rope", "RoPE rotates pairs of coordinates within each head and needs an even head width d / heads (" +
                      std::to_string(s.head_width()) + "); use rope 0 or change d or heads");
    if (s.vocab < Limits::vocab_min || s.vocab > Limits::vocab_max)
      add("vocab", "vocab = " + std::to_string(s.vocab) + " is out of range; valid: integer in [1, 10^9]");
    if (!std::isfinite(s.init_mean) || std::abs(s.init_mean) > Limits::init_mean_max)
      add("init_mean", "init_mean must be a number in " + range_text(-Limits::init_mean_max, Limits::init_mean_max));
    if (!std::isfinite(s.init_std) || s.init_std < 0.0 || s.init_std > Limits::init_std_max)
      add("init_std", "init_std must be a number in " + range_text(0.0, Limits::init_std_max));
    if (s.embed_std && (!std::isfinite(*s.embed_std) || *s.embed_std < 0.0 || *s.embed_std > Limits::init_std_max))
      add("embed_std",
          "embed_std must be a number in " + range_text(0.0, Limits::init_std_max) + " (or unset: init_std)");
    if (s.pos_std && (!std::isfinite(*s.pos_std) || *s.pos_std < 0.0 || *s.pos_std > Limits::init_std_max))
      add("pos_std",
          "pos_std must be a number in " + range_text(0.0, Limits::init_std_max) + " (or unset: the embedding std)");
    else if (s.pos_std && s.pos_embedding != PosEmbedding::learned)
      add("pos_std", "pos_std is the std of the learned position table, and pos_embedding is " +
                         std::string(to_string(s.pos_embedding)) +
                         "; valid: pos_std with pos_embedding learned, or no pos_std");
    if (s.vocab >= Limits::vocab_min && s.vocab <= Limits::vocab_max && s.n >= Limits::n_min && s.n <= Limits::n_max)
      for (SettingError& e : check_token_file(s)) errors.push_back(std::move(e));
    if (s.step < Limits::step_min || s.step > Limits::step_max)
      add("step",
          "step = " + std::to_string(s.step) + " is out of range; valid: -1 (the last) or an integer in [0, 10^12]");
    else if (!s.from_checkpoint() && s.step != -1)
      add("step", "step picks a checkpoint of a run folder; set checkpoint, or step -1");
    else if (s.from_checkpoint() && s.weights != WeightsMode::fixed)
      add("checkpoint", "a checkpoint is one network: it needs weights fixed");
    else
      for (SettingError& e : check_checkpoint(s)) errors.push_back(std::move(e));
  } else {
    if (s.from_checkpoint())
      add("checkpoint", "a checkpoint is a random-weight-family network (GPT-2 layout); use model random_weights");
    if (s.heads != 1)
      add("heads", "the parameter-free model has one head (heads = " + std::to_string(s.heads) +
                       "); use model random_weights for several heads");
    if (!s.tokens.empty())
      add("tokens",
          "given token sequences feed the random-weight network's embedding table; the parameter-free model draws "
          "its inputs (docs/model.md section 1); use model random_weights, or no tokens");
  }
  if (s.histograms < 0 || s.histograms > Limits::histograms_max || s.histograms % 2 != 0)
    add("histograms", "histograms = " + std::to_string(s.histograms) +
                          " is out of range; valid: 0 (off) or an even number of bins in [2, " +
                          std::to_string(Limits::histograms_max) + "] (0 is a bin edge)");
  else if (s.histograms > 0 && !s.random_weights())
    add("histograms",
        "the histograms are computed by the random-weight model only; use model random_weights or "
        "histograms 0");
  if (s.threads < Limits::threads_min || s.threads > Limits::threads_max)
    add("threads", "threads = " + std::to_string(s.threads) +
                       " is out of range; valid: 0 (all cores) or an integer in " + range_text(1, Limits::threads_max));
  return errors;
}

std::string_view to_string(Norm v) { return enum_name(kNormNames, v); }
std::string_view to_string(Scale v) { return enum_name(kScaleNames, v); }
std::string_view to_string(Model v) { return enum_name(kModelNames, v); }
std::string_view to_string(WeightsMode v) { return enum_name(kWeightsNames, v); }
std::string_view to_string(ResidualMean v) { return enum_name(kResidualMeanNames, v); }
std::string_view to_string(HiddenState v) { return enum_name(kHiddenStateNames, v); }
std::optional<Norm> parse_norm(std::string_view t) { return enum_value(kNormNames, t); }
std::optional<Scale> parse_scale(std::string_view t) { return enum_value(kScaleNames, t); }
std::optional<Model> parse_model(std::string_view t) { return enum_value(kModelNames, t); }
std::optional<WeightsMode> parse_weights(std::string_view t) { return enum_value(kWeightsNames, t); }
std::string_view to_string(PosEmbedding v) { return enum_name(kPosEmbeddingNames, v); }
std::string_view to_string(FirstToken v) { return enum_name(kFirstTokenNames, v); }
std::string_view to_string(TokensFormat v) { return enum_name(kTokensFormatNames, v); }

std::string mask_to_string(const Settings& s) {
  switch (s.mask) {
    case MaskKind::causal: return "causal";
    case MaskKind::bidirectional: return "bidirectional";
    case MaskKind::window: return "window:" + std::to_string(s.window);
  }
  return "?";
}

bool parse_mask(std::string_view t, Settings& s) {
  if (t == "causal") {
    s.mask = MaskKind::causal;
    return true;
  }
  if (t == "bidirectional") {
    s.mask = MaskKind::bidirectional;
    return true;
  }
  constexpr std::string_view prefix = "window:";
  if (t.substr(0, prefix.size()) == prefix) {
    std::string_view num = t.substr(prefix.size());
    int w = 0;
    auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), w);
    if (ec != std::errc() || ptr != num.data() + num.size() || num.empty()) return false;
    s.mask = MaskKind::window;
    s.window = w;
    return true;
  }
  return false;
}

double scale_factor(Scale scale, int d) {
  switch (scale) {
    case Scale::one: return 1.0;
    case Scale::sqrt_d: return 1.0 / std::sqrt(static_cast<double>(d));
    case Scale::d: return 1.0 / static_cast<double>(d);
  }
  return 1.0;
}

namespace {

// An enum row's SettingEnum: its names in table order, read and written by index (no casts).
template <auto Member, const auto& Table>
constexpr SettingEnum enum_names() {
  return {Table.size(), [](std::size_t i) { return Table[i].name; },
          [](const Settings& s) {
            for (std::size_t i = 0; i < Table.size(); ++i)
              if (Table[i].value == s.*Member) return i;
            return std::size_t{0};
          },
          [](Settings& s, std::size_t i) { s.*Member = Table[i].value; }};
}

// The same with the labels of `Labels` (settings.hpp's k*Labels) for sweep legends, titles and the like.
template <auto Member, const auto& Table, const auto& Labels>
constexpr SettingEnum enum_labeled() {
  SettingEnum e = enum_names<Member, Table>();
  e.label_at = [](std::size_t i) { return enum_name(Labels, Table[i].value); };
  return e;
}

using K = SettingKind;
using W = SettingWidget;
constexpr std::optional<Model> kPF = Model::parameter_free, kRW = Model::random_weights;
constexpr double kU64 = 0;  // u64, boolean, enumeration, text, mask: no numeric range

// The one table of settings (settings.hpp), in the CLI's --help order. A row: flag, key, kind, member, enum
// names, range (min, max), family (kPF, kRW; {} both), why a sweep cannot vary it (nullptr: it can), the
// window's widget, the help, and the first values of the window's Sweep tab.
// clang-format off
const SettingInfo kSettings[] = {
    {"model", "model", K::enumeration, {}, enum_labeled<&Settings::model, kModelNames, kModelLabels>(), kU64, kU64, {}, nullptr,
     W::combo, "model family: parameter_free | random_weights (docs/model.md section 7)",
     "parameter_free,random_weights"},
    {"n", "n", K::whole, &Settings::n, {}, Limits::n_min, Limits::n_max, {}, nullptr, W::log_slider,
     "tokens per sequence [1, 512]",
     "4:64:5log"},
    {"d", "d", K::whole, &Settings::d, {}, Limits::d_min, Limits::d_max, {}, nullptr, W::log_slider,
     "hidden width [1, 65536]; random_weights [1, 4096]",
     "4:1024:9log"},
    {"layers", "layers", K::whole, &Settings::layers, {}, Limits::layers_min, Limits::layers_max, {}, nullptr,
     W::slider, "layers L [1, 48]",
     "1:8:8"},
    {"alpha", "alpha", K::real, &Settings::alpha, {}, Limits::alpha_min, Limits::alpha_max, kPF, nullptr, W::slider,
     "input anisotropy [0, 1]",
     "0:0.95:20"},  // not to alpha 1: every input the same, every comparison a tie
    {"norm", "norm", K::enumeration, {}, enum_labeled<&Settings::norm, kNormNames, kNormLabels>(), kU64, kU64, {}, nullptr, W::combo,
     "none | l2 | layernorm | rmsnorm",
     "none,l2,layernorm,rmsnorm"},
    {"scale", "scale", K::enumeration, {}, enum_labeled<&Settings::scale, kScaleNames, kScaleLabels>(), kU64, kU64, kPF, nullptr,
     W::combo, "score scale: one | sqrt_d (1/sqrt(d)) | d (1/d)",
     "one,sqrt_d,d"},
    {"gamma", "gamma", K::real, &Settings::gamma, {}, Limits::gamma_min, Limits::gamma_max, {}, nullptr, W::slider,
     "residual strength [0, 1] (random_weights: default 1)",
     "0:1:11"},
    {"rope", "rope", K::real, &Settings::rope_base, {}, 0.0, Limits::rope_base_max, {}, nullptr, W::log_slider,
     "RoPE base theta; 0 = off, else [1, 1e9]",
     "10:1000000:11log"},
    {"rope-scramble", "rope_scramble", K::u64, &Settings::rope_scramble, {}, kU64, kU64, {}, nullptr, W::input,
     "RoPE's frequency bands permuted over the dimensions by this seed; 0 = off (Ruscio et al.'s scrambled RoPE)"},
    {"mask", "mask", K::mask, {}, {}, kU64, kU64, {}, nullptr, W::combo, "causal | bidirectional | window:W",
     "causal,bidirectional"},
    {"unit-input", "unit_input", K::boolean, &Settings::unit_input, {}, kU64, kU64, kPF, nullptr, W::checkbox,
     "rescale inputs to unit norm (0 | 1)",
     "0,1", "unit-norm inputs",
     "Rescale every input x_i to unit L2 norm (Behind RoPE Sec. 3.2 assumes it; its closed forms need it)."},
    {"heads", "heads", K::whole, &Settings::heads, {}, Limits::heads_min, Limits::heads_max, kRW, nullptr, W::slider,
     "attention heads H [1, 64]; d divisible by H",
     "1,2,4,8"},
    {"vocab", "vocab", K::whole, &Settings::vocab, {}, Limits::vocab_min, Limits::vocab_max, kRW, nullptr,
     W::log_slider, "vocabulary size V [1, 1e9]"},
    {"mlp", "mlp", K::boolean, &Settings::mlp, {}, kU64, kU64, kRW, nullptr, W::checkbox,
     "GELU MLP of width 4d in every block (0 | 1)",
     "0,1", "MLP",
     "The block's MLP, GELU(Norm(h) W_1) W_2 with width 4d (GELU with erf), after attention."},
    {"init-mean", "init_mean", K::real, &Settings::init_mean, {}, -Limits::init_mean_max, Limits::init_mean_max, kRW,
     nullptr, W::slider, "mean of every initial weight [-100, 100]",
     "0,0.02,0.2,1"},
    {"init-std", "init_std", K::real, &Settings::init_std, {}, 0.0, Limits::init_std_max, kRW, nullptr,
     W::log_slider, "std of the initial weights [0, 100]; W_O, W_2 get std / sqrt(2 L)",
     "0.002,0.02,0.2,1"},
    {"embed-std", "embed_std", K::optional_real, &Settings::embed_std, {}, 0.0, Limits::init_std_max, kRW, nullptr,
     W::log_slider, "std of the embedding table [0, 100] (default: init-std)",
     nullptr, "embedding std",
     "Give the embedding table its own standard deviation instead of init std. The balance between the "
     "token-specific embedding (norm sigma sqrt(d)) and the running mean that causal attention adds "
     "decides whether adjacency shows: at d 384 it does (about 0.8), at d 64 barely (about 0.51).",
     nullptr, [](const Settings& s) { return s.init_std; }},
    {"residual-mean", "residual_mean", K::enumeration, {}, enum_names<&Settings::residual_mean, kResidualMeanNames>(),
     kU64, kU64, kRW, nullptr, W::combo,
     "mean of W_O and W_2: init_mean (like every weight) | zero (NanoGPT's c_proj init as written)",
     nullptr, "W_O W_2 mean",
     "Mean of the residual projections W_O and W_2. init_mean: mu like every weight. zero: NanoGPT's "
     "c_proj init as written when only _init_weights gets the changed mean (the reading that reproduces "
     "Zuo et al. Table 4)."},
    {"hidden", "hidden", K::enumeration, {}, enum_names<&Settings::hidden, kHiddenStateNames>(), kU64, kU64, kRW,
     nullptr, W::combo,
     "hidden state measured in layers 1..L: block (the block's output) | attention (the attention sublayer's "
     "output)",
     nullptr, "hidden state",
     "The hidden state of layers 1..L whose cosines, adjacency and norms are shown. block: the residual "
     "stream after the block. attention: concat(A v) W_O before the residual add (Zuo et al.'s \"causal "
     "attention's output embeddings\"; with it their Table 4 is reproduced)."},
    {"weights", "weights", K::enumeration, {}, enum_labeled<&Settings::weights, kWeightsNames, kWeightsLabels>(), kU64, kU64, kRW,
     nullptr, W::combo, "per_sample (a new network every sample) | fixed (one network from --weight-seed)"},
    {"weight-seed", "weight_seed", K::u64, &Settings::weight_seed, {}, kU64, kU64, kRW, nullptr, W::input,
     "seed of the fixed network [0, 2^64 - 1]",
     nullptr, "weight seed", "Seed of the fixed network.",
     [](const Settings& s) { return s.weights == WeightsMode::fixed; }},
    {"pos-embedding", "pos_embedding", K::enumeration, {},
     enum_labeled<&Settings::pos_embedding, kPosEmbeddingNames, kPosEmbeddingLabels>(), kU64, kU64, kRW, nullptr, W::combo,
     "none (NoPE) | learned (an absolute position table added to the embeddings, Zuo et al. Fig. 5)"},
    {"pos-std", "pos_std", K::optional_real, &Settings::pos_std, {}, 0.0, Limits::init_std_max, kRW, nullptr,
     W::log_slider,
     "std of the learned position table [0, 100] (default: the embedding std); needs pos-embedding learned",
     nullptr, "position std", "Give the position table its own standard deviation instead of the embedding table's.",
     [](const Settings& s) { return s.pos_embedding == PosEmbedding::learned; },
     [](const Settings& s) { return s.embedding_std(); }},
    {"histograms", "histograms", K::whole, &Settings::histograms, {}, 0, Limits::histograms_max, kRW, nullptr,
     W::input,
     "bins of the cosine-difference and per-sample adjacency / RP histograms (Zuo et al. Fig. 2, 13); 0 = off, "
     "else even in [2, 4096]"},
    {"stage-grams", "stage_grams", K::boolean, &Settings::stage_grams, {}, kU64, kU64, {}, nullptr, W::checkbox,
     "Gram matrices (mean inner products and cosines) of every stage of each layer: input, Norm, q, k, A V, "
     "attention output, residual, MLP (0 | 1; docs/model.md section 12)"},
    {"first-token", "first_token", K::enumeration, {}, enum_names<&Settings::first_token, kFirstTokenNames>(), kU64,
     kU64, {}, nullptr, W::checkbox,
     "none (every position exchangeable) | fixed (position 0 shared by every sequence: parameter_free v / sqrt(d), "
     "random_weights a BOS token, id vocab)",
     nullptr, "fixed first token (BOS)",
     "A fixed first token (docs/model.md section 10; Ruscio et al. Sec. 5.1, 5.7): position 0 is the same in "
     "every sequence, an anchor like the BOS token. Parameter-free: x_0 = v / sqrt(d), the common direction "
     "every token leans toward (the alpha -> 1 token), so keys score higher at 0 and an attention sink forms "
     "for alpha > 0. Random weights: position 0 holds BOS, an embedding row beyond the vocabulary (id vocab). "
     "The Leakage tab shows the weight on key 0 and r_l = dR^2 bidirectional / dR^2 causal per layer."},
    {"tokens", "tokens", K::text, &Settings::tokens, {}, kU64, kU64, kRW, nullptr, W::text_input,
     "random_weights: token sequences from FILE (one per line; sample s uses line s mod lines), or builtin:NAME "
     "(zuo-addition, zuo-reversal, zuo-indexing, zuo-ordering); empty = ids uniform over the vocabulary"},
    {"tokens-format", "tokens_format", K::enumeration, {}, enum_names<&Settings::tokens_format, kTokensFormatNames>(),
     kU64, kU64, kRW, nullptr, W::combo,
     "ids (whole numbers separated by spaces) | chars (every character a token, id = ASCII code - 32)",
     nullptr, "token format",
     "ids: whole numbers separated by spaces. chars: every character is a token, id = ASCII code - 32 "
     "(vocab 95 covers all)."},
    {"checkpoint", "checkpoint", K::text, &Settings::checkpoint, {}, kU64, kU64, kRW,
     nullptr, W::text_input,
     "random_weights: a trained or GPT-2-layout network: FILE.safetensors (config.json beside it) or a run folder "
     "DIR (its last step-NNNNNN.safetensors; DIR@STEP or --step for another); its config.json sets the model "
     "settings; empty = a drawn network"},
    {"step", "step", K::whole, &Settings::step, {}, double(Limits::step_min), double(Limits::step_max), kRW, nullptr,
     W::input, "the checkpoint's step in a run folder [0, 1e12]; -1 = the last"},
    {"samples", "samples", K::whole, &Settings::samples, {}, double(Limits::samples_min),
     double(Limits::samples_max), {}, "--samples is each point's cap", W::log_slider,
     "Monte Carlo samples [1, 1e12]"},
    {"seed", "seed", K::u64, &Settings::seed, {}, kU64, kU64, {}, nullptr, W::input, "random seed [0, 2^64 - 1]"},
    {"threads", "threads", K::whole, &Settings::threads, {}, Limits::threads_min, Limits::threads_max, {},
     "it does not change the numbers", W::slider, "worker threads [0, 256]; 0 = all cores"},
};
// clang-format on

}  // namespace

std::span<const SettingInfo> setting_table() { return kSettings; }

const SettingInfo* setting_info(std::string_view key) {
  for (const SettingInfo& row : kSettings)
    if (key == row.key) return &row;
  return nullptr;
}

std::optional<Model> setting_family(std::string_view key) {
  const SettingInfo* row = setting_info(key);
  return row ? row->family : std::nullopt;
}

std::string short_label(const Settings& s) {
  std::ostringstream os;
  if (s.random_weights()) {
    os << "mu=" << s.init_mean << ", sigma=" << s.init_std;
    if (s.embed_std) os << ", embed sigma=" << *s.embed_std;
    if (s.residual_mean == ResidualMean::zero) os << ", W_O W_2 mean 0";
  } else {
    os << "alpha=" << s.alpha;
  }
  switch (s.norm) {
    case Norm::none: os << ", noLN"; break;
    case Norm::l2: os << ", L2"; break;
    case Norm::layernorm: os << ", LN"; break;
    case Norm::rmsnorm: os << ", RMS"; break;
  }
  if (s.gamma > 0) os << (s.gamma == 1.0 ? ", Res" : ", Res " + std::to_string(s.gamma).substr(0, 4));
  if (s.rope()) os << (s.rope_scramble ? ", scrambled RoPE" : ", RoPE");
  if (s.mask != MaskKind::causal) os << ", " << mask_to_string(s);
  if (s.fixed_first_token()) os << (s.random_weights() ? ", BOS" : ", x_0 = v");
  if (s.random_weights()) {
    if (s.heads > 1) os << ", H=" << s.heads;
    if (!s.mlp) os << ", no MLP";
    if (s.weights == WeightsMode::fixed) os << ", fixed net";
    if (s.hidden == HiddenState::attention) os << ", attention output";
    if (s.learned_positions()) os << ", learned APE";
    if (!s.tokens.empty()) os << ", tokens " << s.tokens;
  }
  return os.str();
}

int resolved_threads(const Settings& s) {
  if (!kThreadsAvailable) return 1;  // the browser's one-thread page (threading.hpp)
  if (s.threads > 0) return s.threads;
  return static_cast<int>(hardware_threads());
}

}  // namespace maskscope
