// Parsing of the embedded colormap tables.
#include "colormap.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>

namespace maskscope::embedded {
extern const std::string_view colormap_rocket, colormap_viridis, colormap_magma, colormap_rdbu, colormap_coolwarm;
}

namespace maskscope::gui {

namespace {
Colormap parse(std::string_view name, bool diverging, std::string_view csv) {
  Colormap c{name, diverging, {}};
  std::istringstream is{std::string(csv)};
  std::string line;
  while (std::getline(is, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::array<float, 3> v{};
    if (std::sscanf(line.c_str(), "%f,%f,%f", &v[0], &v[1], &v[2]) == 3) c.rgb.push_back(v);
  }
  if (c.rgb.empty()) c.rgb.push_back({0.5f, 0.5f, 0.5f});
  return c;
}
}  // namespace

std::array<float, 3> Colormap::at(float t) const {
  const float clamped = std::clamp(t, 0.0f, 1.0f);
  const std::size_t k = std::min(rgb.size() - 1, static_cast<std::size_t>(clamped * float(rgb.size() - 1) + 0.5f));
  return rgb[k];
}

const Colormap& colormap(ColormapId id) {
  static const std::vector<Colormap> maps = {
      parse("rocket", false, embedded::colormap_rocket),   parse("viridis", false, embedded::colormap_viridis),
      parse("magma", false, embedded::colormap_magma),     parse("RdBu", true, embedded::colormap_rdbu),
      parse("coolwarm", true, embedded::colormap_coolwarm),
  };
  return maps[static_cast<int>(id)];
}

}  // namespace maskscope::gui
