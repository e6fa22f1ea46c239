// One sample's intermediates, layer by layer, for tests, inspection and the tensor exporter.
#pragma once

#include <cstdint>
#include <vector>

namespace maskscope {

// Every intermediate of one sample, for tests and inspection (row-major, NaN where masked).
struct LayerTrace {
  std::vector<float> normalized;                // Y = Norm(X), n x dim
  std::vector<float> scores;                    // S, n x n
  std::vector<float> weights;                   // A, n x n (0 where masked)
  std::vector<float> output;                    // X' = A Y + gamma X, n x dim
  double rp = 0;                                // this sample's recency probability, ties 1/2 (NaN if no triple)
  double rp_ties = 0;                           // fraction of its comparisons that were ties (NaN if no triple)
  double adjacency = 0;                         // this sample's adjacency score, ties 1/2 (NaN if n < 3)
  double adjacency_ties = 0;                    // fraction of its comparisons that were ties (NaN if n < 3)
  double norm_adjacency = 0;                    // adjacency of the output norms (docs/model.md section 7; NaN if n < 3)
  std::vector<std::vector<float>> head_scores;  // random_weights: each head's S (scores is their mean)
};
struct SampleTrace {
  int dim = 0;                       // coordinates per row of input, normalized and output (see InputBasis)
  std::vector<float> input;          // X^(0), n x dim (random_weights: the embeddings E[t_i])
  std::vector<std::int64_t> tokens;  // random_weights: the token ids t_i
  double embedding_adjacency = 0;    // random_weights: layer 0's adjacency and norm adjacency
  double embedding_norm_adjacency = 0;
  std::vector<LayerTrace> layers;
};

}  // namespace maskscope
