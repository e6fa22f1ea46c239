// The forward pass of MODEL.md section 2 on Monte Carlo inputs of section 1, and the
// accumulation of section 3 for one block of samples.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "accumulator.hpp"
#include "random_stream.hpp"
#include "rope.hpp"
#include "settings.hpp"

namespace maskscope {

struct Network;
class RandomWeightsModel;
class LaneKernel;

// Every intermediate of one sample, for tests and inspection (row-major, NaN where masked).
struct LayerTrace {
  std::vector<float> normalized;  // Y = Norm(X), n x dim
  std::vector<float> scores;      // S, n x n
  std::vector<float> weights;     // A, n x n (0 where masked)
  std::vector<float> output;      // X' = A Y + gamma X, n x dim
  double recency = 0;             // this sample's recency probability, ties 1/2 (NaN if no triple)
  double recency_ties = 0;        // fraction of its comparisons that were ties (NaN if no triple)
  double adjacency = 0;           // this sample's adjacency score, ties 1/2 (NaN if n < 3)
  double adjacency_ties = 0;      // fraction of its comparisons that were ties (NaN if n < 3)
  double norm_adjacency = 0;      // adjacency of the output norms (MODEL.md section 7; NaN if n < 3)
  std::vector<std::vector<float>> head_scores;  // random_weights: each head's S (scores is their mean)
};
struct SampleTrace {
  int dim = 0;               // coordinates per row of input, normalized and output (see InputBasis)
  std::vector<float> input;  // X^(0), n x dim (random_weights: the embeddings E[t_i])
  std::vector<std::int64_t> tokens;       // random_weights: the token ids t_i
  double embedding_adjacency = 0;         // random_weights: layer 0's adjacency and norm adjacency
  double embedding_norm_adjacency = 0;
  std::vector<LayerTrace> layers;
};

// Which keys each query sees: query i attends to keys lo[i] <= j <= hi[i] (MODEL.md section 2).
struct KeyRanges {
  std::vector<int> lo, hi;
  std::int64_t recency_triples = 0;    // (i, k, j) with i > k > j, all keys of i: RP's comparisons
  std::int64_t adjacency_rows = 0;     // rows k >= 2 of the cosine matrix (pairs i < j < k exist)
  // Leakage (MODEL.md section 8): a sample's within-offset slope of a map M on the query position is
  // sum_c slope_coef[c] M_c, slope_coef[c] = (i_c - mean i of c's offset) / sum_c (i_c - mean)^2 over
  // the unmasked cells c = (i, j) (n x n, 0 where masked; all 0 when no offset has two cells).
  std::vector<float> slope_coef;
};

KeyRanges key_ranges(const Settings& s);

// The coordinates the parameter-free kernel works in. Without RoPE every quantity of the model
// (scores, weights, cosines, norms and their metrics) is unchanged by a rotation of R^d (one that
// keeps the all-ones direction, with LayerNorm), so the n token rows and v need only
// m = min(rows, k) coordinates of a Gaussian QR factor instead of d (draw_inputs in simulator.cpp):
// the same law of every result, with fewer draws and shorter vectors when n + 1 < d.
struct InputBasis {
  bool reduced = false;
  int special = 0;     // coordinates drawn as they are: LayerNorm's all-ones direction (1) or none
  int k = 0;           // the dimension of the rest: d - special
  int token_rows = 0;  // n, or 0 when alpha = 1 (every token is v)
  int rows = 0;        // token rows, plus v when alpha > 0
  int m = 0;           // coordinates of the factor: min(rows, k)
  int dim = 0;         // coordinates per row in the kernel (special + m, padded to 8 within d; d if not reduced)
  std::size_t normals = 0;  // normals per sample: special coordinates and entries below the diagonal, then one per chi
};
// `explicit_inputs` asks for all d coordinates even where the reduced basis applies (tests).
InputBasis input_basis(const Settings& s, bool explicit_inputs = false);

// Samples per block: fixed by the settings (never by timing, threads or the number of layers), so the
// merge order, hence the results, do not depend on the thread count; each sample's draws depend
// only on (seed, sample index) (random_stream.hpp).
std::int64_t samples_per_block(const Settings& s);

// How Simulator::simulate_block runs a block (outside the class so that `= {}` can default it).
struct SimulateBlockOptions {
  // A block of one sample on the per-sample kernel stores no squares (BlockSums::squares_implied);
  // other blocks store them as usual.
  bool implied_squares = false;
  // The per-sample kernel's first sample of the block counts its later rows' pairs on a second
  // thread (for a core that is idle anyway: a new run's first sample). The same bits.
  bool split_first_sample = false;
};

class Simulator {
 public:
  // Which kernel runs the parameter-free model: `automatic` takes the lane kernel (lane_kernel.hpp)
  // where it suits the settings and the processor has AVX2 or AVX-512, `per_sample` never (the rounding of the
  // per-sample helpers that `analyze` shares), `lanes` wherever it suits the settings (tests).
  enum class Kernel { automatic, per_sample, lanes };
  // s must be valid. `explicit_inputs` draws all d coordinates even where the reduced basis
  // (InputBasis) applies: the same law, for tests that compare the two.
  explicit Simulator(const Settings& s, bool explicit_inputs = false, Kernel kernel = Kernel::automatic);
  bool uses_lanes() const { return lanes_ != nullptr; }
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  const AccumLayout& layout() const { return layout_; }

  using BlockOptions = SimulateBlockOptions;
  // Runs samples first_sample .. first_sample + count - 1 into `sums` (which it resets first).
  // Returns false, leaving `sums` partial, if `cancel` became true.
  bool simulate_block(std::uint64_t first_sample, std::int64_t count, BlockSums& sums,
                      const std::atomic<bool>* cancel = nullptr, BlockOptions options = {});

  // Sample `sample` of the run, with every intermediate.
  SampleTrace trace_sample(std::uint64_t sample);
  // Samples first_sample .. first_sample + count - 1, each with every intermediate (parameter-free model; for tests).
  std::vector<SampleTrace> trace_block(std::uint64_t first_sample, std::int64_t count);

  // Number of (i, k, j) triples the recency probability counts per sample.
  std::int64_t recency_triples() const { return keys_.recency_triples; }

  // The drawn network of random_weights with fixed weights; nullptr otherwise.
  const Network* network() const;

  struct Work;  // per-simulator scratch buffers (opaque)

 private:
  Settings s_;
  InputBasis basis_;
  AccumLayout layout_;
  KeyRanges keys_;
  RopeTables rope_;
  std::vector<ChiLaw> chi_laws_;  // KernelArgs::chi_laws
  std::unique_ptr<Work> work_;                          // parameter_free
  std::unique_ptr<LaneKernel> lanes_;                   // parameter_free where use_lane_kernel
  std::unique_ptr<RandomWeightsModel> random_weights_;  // random_weights
};

}  // namespace maskscope
