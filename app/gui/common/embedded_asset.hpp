// The files embedded into the binary at build time (tools/embedded_assets.cmake): the heatmap
// shaders, colormap tables, shipped presets and lessons, looked up here by kind and name only.
#pragma once

#include <exception>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace maskscope::gui {

enum class AssetKind { shader, colormap, preset, lesson };

struct EmbeddedAsset {
  std::string_view name;  // the file's name in shaders/ ("heatmap.vert") or its stem in assets/ ("ln-recency-fig1")
  std::string_view text;
};

// The embedded files of one kind; presets and lessons in the order their menus list them.
std::span<const EmbeddedAsset> embedded_assets(AssetKind kind);
// One embedded file's text; empty when there is none of that name.
std::string_view embedded_asset(AssetKind kind, std::string_view name);

// The shipped presets or lessons: every embedded file of `kind` read by `read(asset)` (which throws
// on a bad one) and named after its file. The tests check each shipped file; a broken one is
// skipped rather than crash the app.
template <class T, class Read>
std::vector<T> read_shipped(AssetKind kind, Read read) {
  std::vector<T> out;
  for (const EmbeddedAsset& asset : embedded_assets(kind)) {
    try {
      T item = read(asset);
      item.name = std::string(asset.name);
      out.push_back(std::move(item));
    } catch (const std::exception&) {}
  }
  return out;
}

}  // namespace maskscope::gui
