// The stages of one layer's forward pass whose Gram matrices a run with `stage_grams` accumulates
// (docs/model.md section 12; Behind RoPE `000` Fig. 3 and 8), and which of them each model family has.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/model/enum_names.hpp"
#include "core/model/settings.hpp"

namespace maskscope {

// The rows s_1 .. s_n of each stage (n x d); the scores are not a stage: they are the existing score map
// S = Mask(scale Q K^T), itself the (scaled, masked) inner products of queries and keys (`000` Fig. 3 (b), (i)).
enum class Stage : std::uint8_t {
  input,       // the layer's input x (the embeddings at layer 1 of random weights)
  normalized,  // Norm(x)
  query,       // random weights: q = Norm(x) W_Q (RoPE'd, heads concatenated); parameter-free Q = K = Rope(Y)
  key,         // random weights: k = Norm(x) W_K (RoPE'd, heads concatenated)
  mix,         // the attention's mix before any output projection: concat_h(A_h v_h), parameter-free A Y
  attention,   // random weights: the attention sublayer's output concat_h(A_h v_h) W_O
  residual,    // after the residual add: h = gamma x + attention (parameter-free: the layer output X')
  mlp,         // random weights with the MLP: the block output x' = h + MLP(Norm(h))
};
inline constexpr int kStageCount = 8;

inline constexpr EnumTable<Stage, kStageCount> kStageNames{{{Stage::input, "input"},
                                                            {Stage::normalized, "normalized"},
                                                            {Stage::query, "query"},
                                                            {Stage::key, "key"},
                                                            {Stage::mix, "mix"},
                                                            {Stage::attention, "attention"},
                                                            {Stage::residual, "residual"},
                                                            {Stage::mlp, "mlp"}}};

// The stages these settings accumulate, one bit each (bit int(stage)); 0 without `stage_grams`.
// Parameter-free: input, normalized, query (the one queries/keys stage), mix (A Y), residual (X').
// Random weights: every stage but mlp without the MLP.
inline unsigned stage_bits(const Settings& s) {
  if (!s.stage_grams) return 0;
  auto bit = [](Stage st) { return 1u << unsigned(st); };
  unsigned b = bit(Stage::input) | bit(Stage::normalized) | bit(Stage::query) | bit(Stage::mix) | bit(Stage::residual);
  if (s.random_weights()) {
    b |= bit(Stage::key) | bit(Stage::attention);
    if (s.mlp) b |= bit(Stage::mlp);
  }
  return b;
}

// What a window or figure calls the stage in this family.
constexpr std::string_view stage_label(Stage st, bool random_weights) {
  switch (st) {
    case Stage::input: return "layer input x";
    case Stage::normalized: return "Norm(x)";
    case Stage::query: return random_weights ? "queries q" : "queries/keys Rope(Norm(x))";
    case Stage::key: return "keys k";
    case Stage::mix: return random_weights ? "A V (before W_O)" : "A Y (before the residual)";
    case Stage::attention: return "attention output (A V) W_O";
    case Stage::residual: return random_weights ? "after the residual h" : "after the residual X'";
    case Stage::mlp: return "after the MLP x'";
  }
  return "?";
}

}  // namespace maskscope
