// Figure PNGs in the browser build: there is no cairo in the page, so write_scene_png
// (figure_png_web.cpp) writes the figure's SVG at the PNG's path and notes the PNG's pixel size; when
// the file is offered as a download (web_page.cpp) the browser draws that SVG onto a canvas of the
// size and saves the canvas as PNG.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace maskscope::gui::web {

// The pixel size to draw the SVG written at `path` at, once; nullopt for a file that is what it says.
std::optional<std::pair<int, int>> take_png_from_svg(const std::string& path);
void note_png_from_svg(const std::string& path, int width, int height);

}  // namespace maskscope::gui::web
