// The random-weight transformer of docs/model.md section 7 (Zuo et al., `003` Sec. 5.1): token ids,
// an embedding table, L pre-norm blocks with H heads, optional GELU MLP, GPT-2's initialization.
// Used by Simulator when Settings::model is random_weights.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/stats/accumulator.hpp"
#include "core/random/random_stream.hpp"
#include "core/model/rope.hpp"
#include "core/model/settings.hpp"

namespace maskscope {

struct KeyRanges;
struct TokenSequences;
struct SampleTrace;

// One network, every matrix row-major (d_in x d_out), applied as x W: a drawn one (fixed weights) or a
// trained or loaded one (core/train/, `run --checkpoint`). The optional parameters below are empty in a
// drawn network (no biases, Norm without affine, GELU with erf); a trained network or a GPT-2-layout
// checkpoint carries them (LayerNorm's gain and bias, each linear map's bias, the final norm), and the
// forward pass applies whichever are present. Their GPT-2 names (docs/model.md, the checkpoint layout):
// ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj, ln_f.
enum class Activation { gelu_erf, gelu_tanh };  // GPT-2's "gelu" (erf) and "gelu_new" (tanh approximation)
struct Network {
  struct Block {
    std::vector<float> wqkv;  // d x 3d: W_Q | W_K | W_V (head h owns columns h d_h .. (h+1) d_h - 1 of each)
    std::vector<float> wo;    // d x d
    std::vector<float> w1;    // d x 4d (empty without MLP)
    std::vector<float> w2;    // 4d x d (empty without MLP)
    // Optional (empty: absent, i.e. gain 1 and bias 0): the first and second Norm's gain and bias (d
    // each; RMSNorm has no bias) and the biases of W_QKV (3d), W_O (d), W_1 (4d) and W_2 (d).
    std::vector<float> ln1_gain, ln1_bias, ln2_gain, ln2_bias;
    std::vector<float> bqkv, bo, b1, b2;
  };
  std::vector<float> embed;  // V x d; (V + 1) x d with a fixed first token (row V: BOS)
  std::vector<float> pos;    // n x d: the learned absolute position table P (empty without it)
  std::vector<Block> blocks;
  // Optional: the final Norm's gain and bias (ln_f, d each), read by the language-model head only.
  std::vector<float> lnf_gain, lnf_bias;
  Activation activation = Activation::gelu_erf;
};

// The network of `fixed` weights: drawn once from s.weight_seed (entries N(mu, sigma^2); W_O and
// W_2 with sigma / sqrt(2 L), the embedding with embed_std, the position table with pos_std) and shared
// by every worker of a run.
// With s.checkpoint set it is checkpoint_network(s) instead.
std::shared_ptr<const Network> fixed_network(const Settings& s);

// The network of s.checkpoint (`run --checkpoint`, docs/model.md "Checkpoints"), loaded once per file version and
// shared. Defined in core/train/checkpoint.cpp: the one kernel function a layer above implements, found by the
// linker (maskscope_core holds both), so no include goes up the layers. Throws std::runtime_error naming the file.
std::shared_ptr<const Network> checkpoint_network(const Settings& s);

// GELU with erf, 0.5 x (1 + erf(x / sqrt 2)) (Hendrycks & Gimpel), as the kernel computes it:
// erf from Abramowitz & Stegun 7.1.28 (absolute error <= 3e-7). For tests.
float gelu(float x);

// One head's Bartlett rows (random_weights_bartlett.hpp) for the n rows Y (row-major, `inner` columns)
// and W_QKV's standard deviation sigma: q', k', v' (n x n each, row-major) from `sample`'s stream, as the
// per-sample kernel draws them (head width dh >= n). For tests of their law.
struct BartlettHeadRows {
  std::vector<float> q, k, v;
};
BartlettHeadRows bartlett_head_rows(const std::vector<float>& Y, int n, int inner, int dh, float sigma,
                                    std::uint64_t seed, std::uint64_t sample);

class RandomWeightsModel {
 public:
  // `allow_batched` false keeps a fixed network on the per-sample path (tests compare the two). `network`
  // (fixed weights only): a trained or loaded network of s's shape instead of fixed_network(s).
  RandomWeightsModel(const Settings& s, const KeyRanges& keys, const AccumLayout& layout, bool allow_batched = true,
                     std::shared_ptr<const Network> network = nullptr);
  ~RandomWeightsModel();
  RandomWeightsModel(const RandomWeightsModel&) = delete;
  RandomWeightsModel& operator=(const RandomWeightsModel&) = delete;

  // Runs samples first_sample .. first_sample + count - 1 into `sums` (when given) and records the
  // last into `trace` (when given), or with `trace_every` each sample t into trace[t - first_sample] (an
  // array of count traces). False if cancelled.
  bool run(std::uint64_t first_sample, std::int64_t count, BlockSums* sums, SampleTrace* trace,
           const std::atomic<bool>* cancel, bool trace_every = false);

  const Network* network() const { return network_.get(); }  // nullptr for per_sample weights

  // True when a fixed network's samples go through the batched Eigen products (random_weights_batched.hpp):
  // fixed weights on a processor with AVX2 and FMA. Its results differ from the per-sample path's in the
  // last bits; kernel_name says which ran.
  static bool batched(const Settings& s);

  struct Work;

 private:
  Settings s_;
  const KeyRanges& keys_;
  const AccumLayout& layout_;
  std::shared_ptr<const Network> network_;
  std::shared_ptr<const TokenSequences> tokens_;  // Settings::tokens (null: uniform ids)
  bool batched_ = false;              // run_batched (random_weights_batched.hpp) rather than the per-sample path
  RopeTables rope_;                   // over the head width d_h
  std::vector<ChiLaw> bartlett_chi_;  // Bartlett attention's chi laws (random_weights_bartlett.hpp), else empty
  std::unique_ptr<Work> work_;
};

}  // namespace maskscope
