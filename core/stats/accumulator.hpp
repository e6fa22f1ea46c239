// Streaming sums of every per-sample quantity of docs/model.md section 3, in a fixed flat layout:
// raw sums per block of samples, merged in block order into means and squared deviations
// (Chan et al.'s pairwise update), so memory is independent of the sample count and the
// result is independent of the thread count.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/stats/big_buffer.hpp"
#include "core/model/settings.hpp"

namespace maskscope {

// Where each quantity of layer l lives in the flat arrays. Layers 0..L-1 are the blocks'
// outputs; with embeddings (the random-weight family, docs/model.md section 7) one more block at index
// L holds the embeddings' cosines, norms and adjacency (its score and weight slots stay unused).
// With several heads, each head's score and weight maps and recency follow the layer's own
// (which are the means over heads).
//
// Maps are packed: a score or weight map holds only the cells its mask leaves open, row after
// row (row i: keys lo(i)..hi(i) of KeyRanges), and the cosines only the lower triangle j <= i.
// A causal map at n 512 so takes 131,328 values instead of 262,144.
struct AccumLayout {
  int n = 0;
  int layers = 0;
  int heads = 1;
  bool embeddings = false;
  MaskKind mask = MaskKind::causal;
  int window = 0;             // w of MaskKind::window
  int hist_bins = 0;          // Settings::histograms: bins of each histogram (0: none)
  unsigned stages = 0;        // stage_bits (stages.hpp): the stages whose Gram matrices are summed (0: none)
  std::size_t map_cells = 0;  // open cells of a score or weight map
  std::size_t per_layer = 0;

  AccumLayout() = default;
  AccumLayout(int n_, int layers_, int heads_ = 1, bool embeddings_ = false, MaskKind mask_ = MaskKind::causal,
              int window_ = 0, int hist_bins_ = 0, unsigned stages_ = 0)
      : n(n_),
        layers(layers_),
        heads(heads_),
        embeddings(embeddings_),
        mask(mask_),
        window(window_),
        hist_bins(hist_bins_),
        stages(stages_),
        map_cells(map_row(n_)),
        per_layer(2 * map_cells + triangle() + n_ + 9 + (heads_ > 1 ? std::size_t(heads_) * (2 * map_cells + 3) : 0) +
                  stage_size() + hist_size()) {}

  // The first open key of row i (KeyRanges::lo), and where row i starts in a packed map (i <= n).
  int map_lo(int i) const { return mask == MaskKind::window ? std::max(0, i - window + 1) : 0; }
  std::size_t map_row(int i) const {
    const std::size_t r = std::size_t(i);
    switch (mask) {
      case MaskKind::bidirectional: return r * std::size_t(n);
      case MaskKind::window: {
        const std::size_t w = std::size_t(window);
        return r <= w ? r * (r + 1) / 2 : w * (w + 1) / 2 + (r - w) * w;
      }
      case MaskKind::causal: break;
    }
    return r * (r + 1) / 2;
  }
  // Cell (i, j) of a packed map (j an open key of row i) and of the packed cosines (j <= i).
  std::size_t map_cell(int i, int j) const { return map_row(i) + std::size_t(j - map_lo(i)); }
  static std::size_t cosine_row(int i) { return std::size_t(i) * (std::size_t(i) + 1) / 2; }
  static std::size_t cosine_cell(int i, int j) { return cosine_row(i) + std::size_t(j); }
  std::size_t triangle() const { return cosine_row(n); }

  int blocks() const { return layers + (embeddings ? 1 : 0); }
  int embedding_block() const { return layers; }  // valid when `embeddings`
  std::size_t total() const { return per_layer * blocks(); }
  std::size_t base(int l) const { return per_layer * l; }
  std::size_t score(int l) const { return base(l); }                              // packed map, S_ij (mean over heads)
  std::size_t weight(int l) const { return base(l) + map_cells; }                 // packed map, A_ij (mean over heads)
  std::size_t cosine(int l) const { return base(l) + 2 * map_cells; }             // packed lower triangle, j <= i
  std::size_t norm(int l) const { return base(l) + 2 * map_cells + triangle(); }  // n, ||x_i||
  std::size_t rp(int l) const { return norm(l) + n; }                             // per-sample RP (mean over heads)
  std::size_t adjacency(int l) const { return rp(l) + 1; }                        // per-sample adjacency
  std::size_t rp_ties(int l) const { return rp(l) + 2; }                          // per-sample tie fraction (RP)
  std::size_t adjacency_ties(int l) const { return rp(l) + 3; }                   // per-sample tie fraction (adjacency)
  std::size_t norm_adjacency(int l) const { return rp(l) + 4; }                   // per-sample norm adjacency
  std::size_t norm_adjacency_ties(int l) const { return rp(l) + 5; }
  std::size_t score_slope(int l) const { return rp(l) + 6; }   // per-sample within-offset slope of S on i
  std::size_t weight_slope(int l) const { return rp(l) + 7; }  // the same for A (docs/model.md section 8)
  // Per-sample weight on key 0 (the attention sink, docs/model.md section 12): the mean of A_i0 over the
  // query rows i >= 1 whose keys include 0 (the head mean's).
  std::size_t sink_weight(int l) const { return rp(l) + 8; }
  // Head h's maps, recency and slope; with one head they are the layer's own.
  std::size_t head_base(int l, int h) const { return rp(l) + 9 + std::size_t(h) * (2 * map_cells + 3); }
  std::size_t head_score(int l, int h) const { return heads > 1 ? head_base(l, h) : score(l); }
  std::size_t head_weight(int l, int h) const { return heads > 1 ? head_base(l, h) + map_cells : weight(l); }
  std::size_t head_rp(int l, int h) const { return heads > 1 ? head_base(l, h) + 2 * map_cells : rp(l); }
  std::size_t head_rp_ties(int l, int h) const { return heads > 1 ? head_base(l, h) + 2 * map_cells + 1 : rp_ties(l); }
  std::size_t head_score_slope(int l, int h) const {
    return heads > 1 ? head_base(l, h) + 2 * map_cells + 2 : score_slope(l);
  }
  // Zuo et al.'s histograms (docs/model.md section 9), at the end of the block: per sample, the share of
  // its (row-weighted) triples in each bin of sim(a, b) - sim(a, c) and of sim(c, b) - sim(c, a), a one in
  // the bin of its adjacency score and of its RP, and the shares of the two differences above 0.
  std::size_t hist_size() const { return hist_bins > 0 ? 4 * std::size_t(hist_bins) + 2 : 0; }
  std::size_t hist_base(int l) const { return base(l) + per_layer - hist_size(); }
  std::size_t forward_difference_hist(int l) const { return hist_base(l); }               // sim(a, b) - sim(a, c)
  std::size_t backward_difference_hist(int l) const { return hist_base(l) + hist_bins; }  // sim(c, b) - sim(c, a)
  std::size_t adjacency_hist(int l) const { return hist_base(l) + 2 * std::size_t(hist_bins); }
  std::size_t rp_hist(int l) const { return hist_base(l) + 3 * std::size_t(hist_bins); }
  std::size_t forward_difference_above(int l) const { return hist_base(l) + 4 * std::size_t(hist_bins); }
  std::size_t backward_difference_above(int l) const { return forward_difference_above(l) + 1; }
  // The Gram matrices of the forward pass's stages (stages.hpp; docs/model.md section 12), before the
  // histograms: per stage in `stages` (in Stage order) the packed lower triangle of the inner products
  // <s_i, s_j>, then that of the cosines. Nothing without stage_grams, so other runs keep their layout.
  bool has_stage(int stage) const { return (stages >> unsigned(stage)) & 1u; }
  std::size_t stage_size() const { return std::size_t(__builtin_popcount(stages)) * 2 * triangle(); }
  std::size_t stage_gram(int l, int stage) const {
    const unsigned below = stages & ((1u << unsigned(stage)) - 1u);
    return hist_base(l) - stage_size() + std::size_t(__builtin_popcount(below)) * 2 * triangle();
  }
  std::size_t stage_cosine(int l, int stage) const { return stage_gram(l, stage) + triangle(); }
};

// The layout of a run with these settings.
AccumLayout accum_layout(const Settings& s);

// The run's large arrays of doubles (big_buffer.hpp).
using BigVector = std::vector<double, BigAllocator<double>>;

// Raw sums of one block of samples.
struct BlockSums {
  std::int64_t count = 0;
  BigVector sum, sumsq;

  explicit BlockSums(std::size_t size = 0) : sum(size), sumsq(size) {}  // zeros (BigAllocator)
  // Zeros of `size` values (allocated on first use: an empty BlockSums costs nothing).
  void reset(std::size_t size);

  // A block of one sample may leave sumsq empty (Simulator::simulate_block, squares implied): its
  // squares are then sum[k] * sum[k], the bits its first sample would have stored (0 + v^2).
  // At n 512 that halves each worker's block (12.6 MB instead of 25) and what it writes per sample.
  bool squares_implied() const { return count == 1 && sumsq.empty() && !sum.empty(); }
  // this += b, element by element (b's squares stored or implied; this one's implied squares are
  // formed first); sizes must agree.
  void add(const BlockSums& b);
  // This becomes b (this held no samples): b's arrays are swapped in, b keeps this one's old ones.
  // b's implied squares stay implied if this has no squares array, else they are formed here.
  void take(BlockSums& b);
};

// out = v[k] * v[k] for every k, rounded products (no fused multiply-add): the squares a one-sample
// block implies (BlockSums::squares_implied), the bits its sample would have stored.
void squares_of(const BigVector& v, BigVector& out);

// Means and sums of squared deviations of everything merged so far.
struct RunMoments {
  std::int64_t count = 0;
  BigVector mean, m2;

  explicit RunMoments(std::size_t size = 0) : mean(size), m2(size) {}  // zeros (BigAllocator)
  // Adds one block (Chan, Golub, LeVeque 1979 pairwise update).
  void merge(const BlockSums& block);
  // Standard error of the mean of entry k (0 with fewer than 2 samples).
  double standard_error(std::size_t k) const {
    if (count < 2) return 0.0;
    const double c = static_cast<double>(count);
    return std::sqrt(std::max(0.0, m2[k]) / (c * (c - 1.0)));
  }
};

}  // namespace maskscope
