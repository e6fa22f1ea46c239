// 192-bit fixed-point sums (see exact_sums.hpp).
#include "core/stats/exact_sums.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <new>
#include <stdexcept>

namespace maskscope {

namespace {

__extension__ typedef unsigned __int128 u128;

inline void add3(std::uint64_t* w, std::uint64_t v0, std::uint64_t v1, std::uint64_t v2) {
  const u128 s0 = u128(w[0]) + v0;
  const u128 s1 = u128(w[1]) + v1 + std::uint64_t(s0 >> 64);
  w[0] = std::uint64_t(s0);
  w[1] = std::uint64_t(s1);
  w[2] = w[2] + v2 + std::uint64_t(s1 >> 64);  // modulo 2^192: exact as long as the total fits
}

inline void sub3(std::uint64_t* w, std::uint64_t v0, std::uint64_t v1, std::uint64_t v2) {
  // w - v = w + (~v + 1)
  const std::uint64_t n0 = ~v0, n1 = ~v1, n2 = ~v2;
  const u128 s0 = u128(w[0]) + n0 + 1;
  const u128 s1 = u128(w[1]) + n1 + std::uint64_t(s0 >> 64);
  w[0] = std::uint64_t(s0);
  w[1] = std::uint64_t(s1);
  w[2] = w[2] + n2 + std::uint64_t(s1 >> 64);
}

// 2^k as long double, for k in [-200, 200].
long double pow2l(int k) {
  static const auto table = [] {
    std::vector<long double> t(401);
    for (int i = 0; i <= 400; ++i) t[i] = std::ldexp(1.0L, i - 200);
    return t;
  }();
  return table[std::size_t(k + 200)];
}

}  // namespace

bool exact_add(std::uint64_t* w, double x) {
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
  const int biased = int((bits >> 52) & 0x7ff);
  if (biased >= 1023 + 48) return false;  // |x| >= 2^48, inf or NaN
  std::uint64_t m = bits & ((std::uint64_t(1) << 52) - 1);
  int e2;  // |x| = m 2^e2
  if (biased == 0) {
    if (m == 0) return true;  // +-0
    e2 = -1074;
  } else {
    m |= std::uint64_t(1) << 52;
    e2 = biased - 1075;
  }
  int p = e2 + ExactSums::kFractionBits;  // bit position of m's lowest bit; at most 47 + 100 - 52 = 95
  if (p < 0) {                            // below the resolution: round to nearest, ties away from zero
    const int sh = -p;
    m = sh >= 64 ? 0 : (m >> sh) + ((sh >= 1 && ((m >> (sh - 1)) & 1)) ? 1 : 0);
    p = 0;
    if (m == 0) return true;
  }
  std::uint64_t v0 = 0, v1 = 0, v2 = 0;
  if (p < 64) {
    const u128 t = u128(m) << p;
    v0 = std::uint64_t(t);
    v1 = std::uint64_t(t >> 64);
  } else {
    const u128 t = u128(m) << (p - 64);
    v1 = std::uint64_t(t);
    v2 = std::uint64_t(t >> 64);
  }
  if (bits >> 63) sub3(w, v0, v1, v2);
  else add3(w, v0, v1, v2);
  return true;
}

long double exact_value(const std::uint64_t* w) {
  std::uint64_t a0 = w[0], a1 = w[1], a2 = w[2];
  const bool negative = (a2 >> 63) != 0;
  if (negative) {  // two's complement negation
    a0 = ~a0;
    a1 = ~a1;
    a2 = ~a2;
    const u128 s0 = u128(a0) + 1;
    const u128 s1 = u128(a1) + std::uint64_t(s0 >> 64);
    a0 = std::uint64_t(s0);
    a1 = std::uint64_t(s1);
    a2 += std::uint64_t(s1 >> 64);
  }
  long double v;
  if (a2 != 0) {
    const int lz = std::countl_zero(a2);
    const std::uint64_t top = lz == 0 ? a2 : (a2 << lz) | (a1 >> (64 - lz));
    v = static_cast<long double>(top) * pow2l(128 - lz - ExactSums::kFractionBits);
  } else if (a1 != 0) {
    const int lz = std::countl_zero(a1);
    const std::uint64_t top = lz == 0 ? a1 : (a1 << lz) | (a0 >> (64 - lz));
    v = static_cast<long double>(top) * pow2l(64 - lz - ExactSums::kFractionBits);
  } else {
    v = static_cast<long double>(a0) * pow2l(-ExactSums::kFractionBits);
  }
  return negative ? -v : v;
}

ExactSums::ExactSums(std::size_t size) : invalid_(size, 0) {
  const std::size_t bytes = sizeof(std::uint64_t) * std::max<std::size_t>(1, kWordsPerValue * size);
  words_ = std::unique_ptr<std::uint64_t[], Free>(static_cast<std::uint64_t*>(big_zeroed_alloc(bytes)), Free(bytes));
}

ExactSums::ExactSums(const ExactSums& other) : ExactSums(other.size()) { *this = other; }

ExactSums& ExactSums::operator=(const ExactSums& other) {
  if (this == &other) return *this;
  if (other.size() != size()) *this = ExactSums(other.size());
  std::copy(other.words(), other.words() + other.word_count(), words_.get());
  invalid_ = other.invalid_;
  count_ = other.count_;
  return *this;
}

[[gnu::optimize("-ffp-contract=off")]] void ExactSums::add(const BlockSums& segment) {
  if (segment.count == 0) return;
  const bool implied = segment.squares_implied();  // one sample: its squares are its values squared
  if (segment.sum.size() != size() || (!implied && segment.sumsq.size() != size()))
    throw std::logic_error("ExactSums::add: size mismatch");
  const std::size_t n = size();
  for (std::size_t k = 0; k < n; ++k) {
    std::uint64_t* w = &words_[kWordsPerValue * k];
    const double sq = implied ? segment.sum[k] * segment.sum[k] : segment.sumsq[k];
    // An invalid value stays invalid (so the result does not depend on the grouping either).
    if (!exact_add(w, segment.sum[k]) || !exact_add(w + 3, sq)) invalid_[k] = 1;
  }
  count_ += segment.count;
}

void ExactSums::add(const ExactSums& other) {
  if (other.size() != size()) throw std::logic_error("ExactSums::add: size mismatch");
  const std::size_t n = size();
  for (std::size_t k = 0; k < n; ++k) {
    std::uint64_t* w = &words_[kWordsPerValue * k];
    const std::uint64_t* o = &other.words_[kWordsPerValue * k];
    add3(w, o[0], o[1], o[2]);
    add3(w + 3, o[3], o[4], o[5]);
    invalid_[k] |= other.invalid_[k];
  }
  count_ += other.count_;
}

void ExactSums::moments(RunMoments& io, std::int64_t pending_count) const {
  const std::size_t n = size();
  io.mean.resize(n, 0.0);
  io.m2.resize(n, 0.0);
  io.count = count_ + pending_count;
  if (io.count == 0) return;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (count_ == 0) {  // a live picture before the first segment is added: the open segment alone
    const double c = static_cast<double>(io.count);
    for (std::size_t k = 0; k < n; ++k) {
      const double mean = io.mean[k] / c;
      io.m2[k] = std::max(0.0, io.m2[k] - io.mean[k] * mean);
      io.mean[k] = mean;
    }
    return;
  }
  const long double total = static_cast<long double>(io.count);
  for (std::size_t k = 0; k < n; ++k) {
    if (invalid_[k]) {
      io.mean[k] = io.m2[k] = nan;
      continue;
    }
    const std::uint64_t* w = &words_[kWordsPerValue * k];
    long double s1 = io.mean[k], s2 = io.m2[k];
    if ((w[0] | w[1] | w[2]) != 0) s1 += exact_value(w);
    if ((w[3] | w[4] | w[5]) != 0) s2 += exact_value(w + 3);
    const long double mean = s1 / total;
    io.mean[k] = static_cast<double>(mean);
    io.m2[k] = static_cast<double>(std::max(0.0L, s2 - s1 * mean));
  }
}

}  // namespace maskscope
