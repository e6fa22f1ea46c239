// Parsing of the embedded colormap tables.
#include "common/colormap.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>

#include "common/embedded_asset.hpp"

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

std::string_view table(std::string_view file) { return embedded_asset(AssetKind::colormap, file); }
}  // namespace

std::array<float, 3> Colormap::at(float t) const {
  const float clamped = std::clamp(t, 0.0f, 1.0f);
  const std::size_t k = std::min(rgb.size() - 1, static_cast<std::size_t>(clamped * float(rgb.size() - 1) + 0.5f));
  return rgb[k];
}

const Colormap& colormap(ColormapId id) {
  static const std::vector<Colormap> maps = {
      parse("rocket", false, table("rocket")),    parse("viridis", false, table("viridis")),
      parse("magma", false, table("magma")),      parse("RdBu", true, table("rdbu")),
      parse("coolwarm", true, table("coolwarm")),
  };
  return maps[static_cast<int>(id)];
}

}  // namespace maskscope::gui
