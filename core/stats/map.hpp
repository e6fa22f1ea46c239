// One quantity of a layer over the n x n grid of queries i and keys j (a heatmap), as a snapshot
// holds it: only the cells a run sums (AccumLayout's packing). A masked map (scores, weights)
// stores each row's open keys; a symmetric one (cosines) its lower triangle; the diagonal-normalized
// scores read the score map's cells less each diagonal's mean. Reading any other cell gives NaN
// (masked) or its mirror (symmetric), so a Map reads like the full row-major n x n array it stands
// for, at half its memory under the causal mask (at n 512, 1 MiB instead of 2 a map).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace maskscope {

struct KeyRanges;

// Which cells of an n x n map are stored, and where.
struct MapShape {
  int n = 0;
  bool symmetric = false;          // stores j <= i; (i, j) with j > i reads (j, i)
  std::vector<int> lo, hi;         // row i stores keys lo[i]..hi[i] (hi < lo: none)
  std::vector<std::size_t> start;  // n + 1 entries: where row i's cells begin; start[n] is the count

  std::size_t cells() const { return start.empty() ? 0 : start.back(); }
  // The stored index of (i, j), which must be a stored cell.
  std::size_t cell(int i, int j) const { return start[std::size_t(i)] + std::size_t(j - lo[std::size_t(i)]); }
};

// The open cells of a masked map (the mask's key ranges), row after row: AccumLayout's map packing.
std::shared_ptr<const MapShape> masked_shape(const KeyRanges& keys);
// The lower triangle j <= i of a symmetric n x n map: AccumLayout's cosine packing.
std::shared_ptr<const MapShape> symmetric_shape(int n);

class Map {
 public:
  Map() = default;  // no map (the embeddings' scores): size() 0
  // `cells`: shape.cells() values, row after row; nullptr makes every cell NaN.
  Map(std::shared_ptr<const MapShape> shape, std::shared_ptr<const double> cells)
      : shape_(std::move(shape)), cells_(std::move(cells)) {}

  int n() const { return shape_ ? shape_->n : 0; }
  std::size_t size() const { return std::size_t(n()) * std::size_t(n()); }  // the full grid's cells
  bool empty() const { return size() == 0; }

  double operator()(int i, int j) const;
  // Cell e of the row-major n x n grid (e = i n + j).
  double operator[](std::size_t e) const {
    const int n_ = n();
    return (*this)(int(e / std::size_t(n_)), int(e % std::size_t(n_)));
  }
  // The full row-major n x n array (NaN where masked), into `out` (its memory reused).
  void unpack(std::vector<double>& out) const;
  std::vector<double> unpacked() const;

  const MapShape* shape() const { return shape_.get(); }
  // The stored cells (nullptr: all NaN), before any diagonal means are subtracted.
  const double* cells() const { return cells_.get(); }
  // f(i, j, value) for every stored cell, row after row (the lower triangle of a symmetric map);
  // nothing when every cell is NaN.
  template <class F>
  void each_cell(F&& f) const {
    if (!cells_) return;
    const MapShape& s = *shape_;
    const double* d = diagonal_means_ ? diagonal_means_->data() + (s.n - 1) : nullptr;  // d[i - j]
    for (int i = 0; i < s.n; ++i) {
      const double* row = cells_.get() + s.start[std::size_t(i)] - std::size_t(s.lo[std::size_t(i)]);  // row[j]
      if (d)
        for (int j = s.lo[std::size_t(i)]; j <= s.hi[std::size_t(i)]; ++j) f(i, j, row[j] - d[i - j]);
      else
        for (int j = s.lo[std::size_t(i)]; j <= s.hi[std::size_t(i)]; ++j) f(i, j, row[j]);
    }
  }
  // The same shape with every cell NaN (a quantity a source does not have).
  Map all_nan() const { return Map(shape_, nullptr); }

  // Cell by cell as the full arrays compare (NaN is unequal to everything, itself included).
  friend bool operator==(const Map& a, const Map& b);
  // Every cell of the full arrays the same bits (masked cells, NaN in both, included).
  friend bool same_bits(const Map& a, const Map& b);
  friend Map diagonal_normalized(const Map& masked);

 private:
  std::shared_ptr<const MapShape> shape_;
  std::shared_ptr<const double> cells_;
  // When set (a masked map only), cell (i, j) reads its stored value minus this at i - j + n - 1.
  std::shared_ptr<const std::vector<double>> diagonal_means_;
};

// Behind RoPE's diagonal normalization (metrics.hpp) of a masked map: each cell minus the mean of
// the finite cells on its diagonal i - j. It reads `masked`'s cells (no copy): the new map holds
// only the 2n - 1 diagonal means, summed in the order diagonal_normalized of the full array sums
// them, so it reads the same bits.
Map diagonal_normalized(const Map& masked);

}  // namespace maskscope
