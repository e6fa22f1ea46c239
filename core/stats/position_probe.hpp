// Position probes (Zuo et al. `003` Sec. 5.5, Fig. 4 and Fig. 8; docs/model.md section 9): from one feature
// of a token's hidden state, predict its position; scored on held-out sequences by Pearson-R and the RMSE
// normalized by the sequence length (NRMSE), with bootstrap standard errors over the test sequences.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace maskscope {

// The features of `003` Sec. 5.5: the state X itself (d values), its variance Var_X over the d
// coordinates (1 value), and Sim_X, its cosine with the state at the last position (1 value).
enum class ProbeFeature { x, var, sim };
inline constexpr std::array<ProbeFeature, 3> kProbeFeatures{ProbeFeature::x, ProbeFeature::var, ProbeFeature::sim};
// "x", "var", "sim". Inline, as to_string(ProbeKind): result_json.cpp names them, and the preset fuzzer
// links that file without the probes (tests/fuzz/CMakeLists.txt).
inline std::string_view to_string(ProbeFeature f) {
  switch (f) {
    case ProbeFeature::x: return "x";
    case ProbeFeature::var: return "var";
    case ProbeFeature::sim: return "sim";
  }
  return "?";
}
std::optional<ProbeFeature> parse_probe_feature(std::string_view text);

// ridge: closed-form ridge regression (fast default); mlp: the paper's 4-layer MLP with ReLU.
enum class ProbeKind { ridge, mlp };
inline std::string_view to_string(ProbeKind k) { return k == ProbeKind::ridge ? "ridge" : "mlp"; }
std::optional<ProbeKind> parse_probe_kind(std::string_view text);

struct ProbeOptions {
  ProbeKind kind = ProbeKind::ridge;
  // Ridge: penalty lambda on standardized features, relative to the number of training rows (the
  // normal equations are (Z^T Z / N + lambda I) w = Z^T y / N). Scalar features enter as the powers
  // z, z^2, z^3 of the standardized value, so a monotone but curved relation is not lost.
  double ridge = 1e-3;
  // MLP (`003` Sec. 5.5: 4 layers, ReLU between): in -> width -> width -> width -> 1, He-normal
  // initialization, Adam (beta 0.9, 0.999, eps 1e-8), mean squared error on position / n, minibatches
  // in an order drawn from `seed`; one thread per probe, so the same bits for any thread count.
  int mlp_width = 64;
  int mlp_epochs = 20;
  int mlp_batch = 128;
  double mlp_learning_rate = 1e-3;
  std::uint64_t seed = 1;
  int bootstrap = 200;  // resamples of the test sequences for the standard errors
};

// The rows of one probe: `width` values per token, n tokens per sequence; the target of row r is
// its position r mod n (0 .. n-1).
struct ProbeData {
  int n = 0;
  int width = 0;
  std::int64_t train_sequences = 0, test_sequences = 0;
  std::vector<float> train, test;  // (sequences * n) x width, row-major
};

struct ProbeScore {
  double pearson_r = 0, pearson_r_se = 0;  // 0 when the predictions are constant
  double nrmse = 0, nrmse_se = 0;          // sqrt(mean (predicted - true)^2) / n
};

// The `width` values of feature f for each of the n tokens of one sequence x (n x d), appended to out.
int feature_width(ProbeFeature f, int d);
void append_features(ProbeFeature f, int n, int d, const float* x, std::vector<float>& out);

// Fits the probe on data.train, scores it on data.test. nullopt if cancelled.
std::optional<ProbeScore> fit_probe(const ProbeData& data, const ProbeOptions& o,
                                    const std::atomic<bool>* cancel = nullptr);

// Pearson-R and NRMSE of predictions against positions (row r: position r mod n), with bootstrap
// standard errors over whole sequences (o.bootstrap resamples from o.seed). For tests and fit_probe.
ProbeScore score_predictions(const std::vector<double>& predicted, int n, const ProbeOptions& o);

}  // namespace maskscope

namespace maskscope {

// Every probe of a run: one per layer (0 the embeddings) and feature.
struct ProbeRequest {
  std::vector<ProbeFeature> features{kProbeFeatures.begin(), kProbeFeatures.end()};
  ProbeOptions probe;
  std::int64_t train = 1600, test = 1600;  // sequences (`003` Sec. 5.5: 1,600 each)
};

struct ProbeLayer {
  int layer = 0;                                   // 0: the embeddings
  std::array<std::optional<ProbeScore>, 3> score;  // by ProbeFeature (those requested)
};

struct ProbeTable {
  std::vector<ProbeLayer> layers;
  double collect_s = 0, fit_s = 0;  // seconds for the hidden states and for the probes
};

// The hidden states' features, sequence by sequence, in preallocated rows: sequences [0, train) are
// the training set, [train, train + test) the test set. add_sequence may be called from several
// threads for different sequences (each writes only its own rows).
class ProbeCollector {
 public:
  ProbeCollector(int n, int d, int blocks, const ProbeRequest& r);
  // Layer `layer` (0 .. blocks-1) of sequence `sequence`: its n x d hidden states.
  void add_sequence(std::int64_t sequence, int layer, const float* x);
  int blocks() const { return blocks_; }
  const ProbeData& data(int layer, ProbeFeature f) const { return data_[std::size_t(layer) * 3 + std::size_t(f)]; }
  // Bytes the rows of these sizes take (for a refusal before allocating).
  static std::uint64_t bytes(int n, int d, int blocks, const ProbeRequest& r);

 private:
  int n_, d_, blocks_;
  ProbeRequest r_;
  std::vector<ProbeData> data_;  // layer-major, 3 features each (unrequested ones empty)
};

// Fits every requested probe on `threads` threads (each probe on one thread: the same numbers for
// any thread count). nullopt if cancelled.
std::optional<ProbeTable> fit_probes(const ProbeCollector& c, const ProbeRequest& r, int threads,
                                     const std::atomic<bool>* cancel = nullptr);

}  // namespace maskscope
