// Packed heatmaps of a snapshot.
#include "core/stats/map.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <utility>

#include "core/model/key_ranges.hpp"

namespace maskscope {

std::shared_ptr<const MapShape> masked_shape(const KeyRanges& keys) {
  auto s = std::make_shared<MapShape>();
  s->n = int(keys.lo.size());
  s->lo = keys.lo;
  s->hi = keys.hi;
  s->start.assign(std::size_t(s->n) + 1, 0);
  for (int i = 0; i < s->n; ++i)
    s->start[std::size_t(i) + 1] = s->start[std::size_t(i)] + std::size_t(std::max(0, keys.hi[i] - keys.lo[i] + 1));
  return s;
}

std::shared_ptr<const MapShape> symmetric_shape(int n) {
  auto s = std::make_shared<MapShape>();
  s->n = n;
  s->symmetric = true;
  s->lo.assign(std::size_t(n), 0);
  s->hi.resize(std::size_t(n));
  s->start.assign(std::size_t(n) + 1, 0);
  for (int i = 0; i < n; ++i) {
    s->hi[std::size_t(i)] = i;
    s->start[std::size_t(i) + 1] = s->start[std::size_t(i)] + std::size_t(i) + 1;
  }
  return s;
}

double Map::operator()(int i, int j) const {
  const MapShape& s = *shape_;
  if (s.symmetric && j > i) std::swap(i, j);
  if (!cells_ || j < s.lo[std::size_t(i)] || j > s.hi[std::size_t(i)]) return std::numeric_limits<double>::quiet_NaN();
  const double v = cells_.get()[s.cell(i, j)];
  return diagonal_means_ ? v - (*diagonal_means_)[std::size_t(i - j + s.n - 1)] : v;
}

void Map::unpack(std::vector<double>& out) const {
  const int n_ = n();
  const std::size_t nn = size();
  out.assign(nn, std::numeric_limits<double>::quiet_NaN());
  if (!cells_) return;
  double* o = out.data();
  each_cell([o, n_](int i, int j, double v) { o[std::size_t(i) * std::size_t(n_) + std::size_t(j)] = v; });
  if (!shape_->symmetric) return;
  // The upper triangle mirrors the lower, in tiles (a column at a time strides n doubles).
  constexpr int kTile = 32;
  for (int i0 = 0; i0 < n_; i0 += kTile)
    for (int j0 = 0; j0 <= i0; j0 += kTile)
      for (int i = i0; i < std::min(n_, i0 + kTile); ++i)
        for (int j = j0; j < std::min(i, j0 + kTile); ++j)
          out[std::size_t(j) * std::size_t(n_) + std::size_t(i)] =
              out[std::size_t(i) * std::size_t(n_) + std::size_t(j)];
}

std::vector<double> Map::unpacked() const {
  std::vector<double> out;
  unpack(out);
  return out;
}

bool operator==(const Map& a, const Map& b) {
  if (a.n() != b.n()) return false;
  const int n = a.n();
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (!(a(i, j) == b(i, j))) return false;
  return true;
}

bool same_bits(const Map& a, const Map& b) {
  const std::vector<double> x = a.unpacked(), y = b.unpacked();
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0;
}

Map diagonal_normalized(const Map& masked) {
  if (masked.shape_ && masked.shape_->symmetric)
    throw std::invalid_argument("diagonal_normalized: a symmetric map's diagonals are not normalized in place");
  Map out = masked;
  if (!masked.cells_) return out;  // no map, or all NaN
  const int n = masked.shape_->n;
  const int offsets = 2 * n - 1;  // i - j in [-(n-1), n-1]
  std::vector<double> sum(std::size_t(offsets), 0.0);
  std::vector<int> count(std::size_t(offsets), 0);
  Map raw = masked;  // the stored cells, without any diagonal means already subtracted
  raw.diagonal_means_.reset();
  raw.each_cell([&](int i, int j, double v) {
    if (std::isnan(v)) return;
    sum[std::size_t(i - j + n - 1)] += v;
    count[std::size_t(i - j + n - 1)] += 1;
  });
  auto means = std::make_shared<std::vector<double>>(std::size_t(offsets), std::numeric_limits<double>::quiet_NaN());
  for (std::size_t o = 0; o < std::size_t(offsets); ++o)
    if (count[o] > 0) (*means)[o] = sum[o] / count[o];
  out.diagonal_means_ = std::move(means);
  return out;
}

}  // namespace maskscope
