// Ziggurat tables and the rare slow path of the normal sampler (Marsaglia & Tsang 2000).
#include "rng.hpp"

namespace maskscope {

namespace {

constexpr double kTailStart = 3.442619855899;      // r: start of the tail of the 128-layer ziggurat
constexpr double kLayerArea = 9.91256303526217e-3;  // v: area of each layer

ZigguratTables make_tables() {
  ZigguratTables t{};
  const double m1 = 2147483648.0;  // 2^31
  double dn = kTailStart, tn = dn;
  const double q = kLayerArea / std::exp(-0.5 * dn * dn);
  t.k[0] = static_cast<std::uint32_t>((dn / q) * m1);
  t.k[1] = 0;
  t.w[0] = q / m1;
  t.w[127] = dn / m1;
  t.f[0] = 1.0;
  t.f[127] = std::exp(-0.5 * dn * dn);
  for (int i = 126; i >= 1; --i) {
    dn = std::sqrt(-2.0 * std::log(kLayerArea / dn + std::exp(-0.5 * dn * dn)));
    t.k[i + 1] = static_cast<std::uint32_t>((dn / tn) * m1);
    tn = dn;
    t.f[i] = std::exp(-0.5 * dn * dn);
    t.w[i] = dn / m1;
  }
  return t;
}

}  // namespace

const ZigguratTables& ziggurat_tables() {
  static const ZigguratTables tables = make_tables();
  return tables;
}

double BlockStream::normal_tail(const ZigguratTables& z, std::int32_t h, unsigned layer) {
  for (;;) {
    const double x = h * z.w[layer];
    if (layer == 0) {
      // Tail beyond r, by Marsaglia's exponential method.
      double xt, y;
      do {
        xt = -std::log(uniform()) / kTailStart;
        y = -std::log(uniform());
      } while (y + y < xt * xt);
      return h > 0 ? kTailStart + xt : -kTailStart - xt;
    }
    if (z.f[layer] + uniform() * (z.f[layer - 1] - z.f[layer]) < std::exp(-0.5 * x * x)) return x;
    const std::uint32_t u = static_cast<std::uint32_t>(next() >> 32);
    layer = u & 127u;
    h = static_cast<std::int32_t>(u & 0xFFFFFF00u);
    const std::uint32_t mag = h < 0 ? static_cast<std::uint32_t>(-(static_cast<std::int64_t>(h)))
                                    : static_cast<std::uint32_t>(h);
    if (mag < z.k[layer]) return h * z.w[layer];
  }
}

}  // namespace maskscope
