// Streaming sums of every per-sample quantity of MODEL.md section 3, in a fixed flat layout:
// raw sums per block of samples, merged in block order into means and squared deviations
// (Chan et al.'s pairwise update), so memory is independent of the sample count and the
// result is independent of the thread count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace maskscope {

// Where each quantity of layer l lives in the flat arrays.
struct AccumLayout {
  int n = 0;
  int layers = 0;
  std::size_t per_layer = 0;

  AccumLayout() = default;
  AccumLayout(int n_, int layers_)
      : n(n_), layers(layers_), per_layer(3 * std::size_t(n_) * n_ + n_ + 4) {}

  std::size_t total() const { return per_layer * layers; }
  std::size_t base(int l) const { return per_layer * l; }
  std::size_t score(int l) const { return base(l); }                            // n x n, S_ij
  std::size_t weight(int l) const { return base(l) + std::size_t(n) * n; }      // n x n, A_ij
  std::size_t cosine(int l) const { return base(l) + 2 * std::size_t(n) * n; }  // n x n, j <= i
  std::size_t norm(int l) const { return base(l) + 3 * std::size_t(n) * n; }    // n, ||x_i||
  std::size_t recency(int l) const { return norm(l) + n; }                      // per-sample RP
  std::size_t adjacency(int l) const { return recency(l) + 1; }                 // per-sample adjacency
  std::size_t recency_ties(int l) const { return recency(l) + 2; }              // per-sample tie fraction (RP)
  std::size_t adjacency_ties(int l) const { return recency(l) + 3; }            // per-sample tie fraction (adjacency)
};

// Raw sums of one block of samples.
struct BlockSums {
  std::int64_t count = 0;
  std::vector<double> sum, sumsq;

  explicit BlockSums(std::size_t size = 0) : sum(size, 0.0), sumsq(size, 0.0) {}
  void reset();
};

// Means and sums of squared deviations of everything merged so far.
struct RunMoments {
  std::int64_t count = 0;
  std::vector<double> mean, m2;

  explicit RunMoments(std::size_t size = 0) : mean(size, 0.0), m2(size, 0.0) {}
  // Adds one block (Chan, Golub, LeVeque 1979 pairwise update).
  void merge(const BlockSums& block);
  // Standard error of the mean of entry k (0 with fewer than 2 samples).
  double standard_error(std::size_t k) const;
};

}  // namespace maskscope
