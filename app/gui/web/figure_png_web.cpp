// write_scene_png for the browser build (png_from_svg.hpp): the SVG now, the PNG when downloaded.
#include <cmath>
#include <map>
#include <mutex>

#include "core/formats/atomic_file.hpp"
#include "common/figure/figure_render.hpp"
#include "web/png_from_svg.hpp"

namespace maskscope::gui {

namespace web {
namespace {
std::mutex pending_mutex;
std::map<std::string, std::pair<int, int>> pending;
}  // namespace

void note_png_from_svg(const std::string& path, int width, int height) {
  std::lock_guard lock(pending_mutex);
  pending[path] = {width, height};
}

std::optional<std::pair<int, int>> take_png_from_svg(const std::string& path) {
  std::lock_guard lock(pending_mutex);
  const auto it = pending.find(path);
  if (it == pending.end()) return std::nullopt;
  const auto size = it->second;
  pending.erase(it);
  return size;
}
}  // namespace web

bool write_scene_png(const Scene& scene, double scale, const std::string& path, std::string& error) {
  if (!(scale > 0) || !std::isfinite(scale)) {
    error = "PNG scale must be positive";
    return false;
  }
  // The same pixel size as the desktop's cairo PNG (figure_png.cpp); browsers' canvases end at 16384.
  const int w = int(std::ceil(scene.width * scale - 1e-6)), h = int(std::ceil(scene.height * scale - 1e-6));
  if (w < 1 || h < 1 || w > 16384 || h > 16384) {
    error = "PNG size " + std::to_string(w) + "x" + std::to_string(h) +
            " is outside [1, 16384] pixels per side (a browser's largest canvas)";
    return false;
  }
  if (!write_file_atomic(path, scene_to_svg(scene), error)) return false;
  web::note_png_from_svg(path, w, h);
  return true;
}

}  // namespace maskscope::gui
