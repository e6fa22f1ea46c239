// A figure as a small vector scene (rectangles, heatmaps, colour bars, text, lines, markers) in
// pixels at 1x, laid out once and drawn by three backends: SVG text (exact cell rectangles, real
// text), PNG through cairo at any scale (text rasterized at that size), and the window's preview.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/figure/figure.hpp"

namespace maskscope::gui {

struct Rgba {
  float r = 0, g = 0, b = 0, a = 1;
};

struct SceneRect {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  Rgba fill;
  Rgba stroke;
  float stroke_width = 0;  // 0: no outline
};
// n x n cells over [x0, x1] x [y0, y1], row 0 at the top; one colour per cell.
struct SceneHeatmap {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  int n = 0;
  std::vector<Rgba> cells;
  std::string id;  // e.g. "r0-c1"
};
// A vertical colour bar, stops from bottom (lo) to top (hi).
struct SceneColorbar {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  std::vector<Rgba> stops;
};
enum class Anchor { start, middle, end };
struct SceneText {
  float x = 0, y = 0;  // baseline point (the anchor decides which end); vertical text reads bottom to top
  float size = 10;
  std::string text;
  Anchor anchor = Anchor::start;
  bool vertical = false;
  bool bold = false;
  Rgba color;
};
struct ScenePath {
  std::vector<std::array<float, 2>> points;
  Rgba color;
  float width = 1;
  bool dashed = false;
  bool filled = false;  // a closed polygon filled with `color` (e.g. a colorbar's clipped-end triangle)
};
struct SceneMarker {
  float x = 0, y = 0, radius = 1;
  Rgba fill;
};

// The width of `text` at font size `size` in DejaVu Sans (book or bold), the font the PNG is drawn in and the SVG
// names first: the sum of its characters' advances (text_widths.inc, measured by cairo), 0.65 em for a character
// not in the table.
float text_width(std::string_view text, float size, bool bold = false);
// How far a text reaches above its baseline (digits' and capitals' tops, 0.73 em in DejaVu Sans) and below it
// (descenders, 0.24 em), in em.
inline constexpr float kTextAscent = 0.76f, kTextDescent = 0.24f;
struct TextBox {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};
// The box a text covers: its width placed by its anchor, from its ascent above the baseline to its descent below
// (turned a quarter for vertical text, which reads bottom to top).
TextBox text_box(const SceneText& t);
// Whether two boxes share more than an edge.
bool boxes_overlap(const TextBox& a, const TextBox& b);

using SceneItem = std::variant<SceneRect, SceneHeatmap, SceneColorbar, SceneText, ScenePath, SceneMarker>;

struct Scene {
  float width = 0, height = 0;
  Rgba background{1, 1, 1, 1};
  std::vector<SceneItem> items;
};

// Lays out the figure (heatmap grid or h(j) plots) on a white page.
Scene layout_figure(const FigureData& data);

// The figure kind table: rows x (groups x layers) of numbers with their SE (figure_table.cpp).
Scene layout_table(const FigureData& data);

std::string scene_to_svg(const Scene& scene);
// Rasterizes with cairo at `scale` (pixel size = ceil(scene size * scale)); heatmap cells are
// snapped to whole device pixels so that neighbouring cells leave no seams.
bool write_scene_png(const Scene& scene, double scale, const std::string& path, std::string& error);

// n x n values, one line per query row i, "nan" where masked; full precision (%.17g).
std::string panel_csv(const PanelData& p);
// h(j) figure: j, then theory / simulated / simulated_se per row.
std::string curves_csv(const std::vector<FigureCurve>& curves);
// Table figure: one line per cell: row, label, group, layer, metric, value, se.
std::string table_csv(const FigureData& data);

struct ExportResult {
  bool ok = false;
  std::string error;
  std::vector<std::string> files;  // written, relative to the folder
  int png_width = 0, png_height = 0;
};
// Writing an export's files into a folder: created if needed (else `res.error`), a killed export's
// temporaries removed, each file through a temporary renamed into place and listed in `res.files`; after
// the first error nothing more is written. Shared by the figure and the sweep exports.
class ExportFolder {
 public:
  ExportFolder(std::string dir, ExportResult& res);
  bool ok() const { return res_.error.empty(); }
  void text(const std::string& name, const std::string& content);
  // The scene as PNG at the options' size (a width in pixels, or a scale of its natural size); sets
  // res.png_width / png_height. Returns the scale used.
  double png(const std::string& name, const Scene& scene, const ExportOptions& options);

 private:
  std::string dir_;
  ExportResult& res_;
};

// Writes figure.png, figure.svg, one CSV per panel, figure.json (panel list with metrics) and
// preset.json into `dir` (created if needed). Every file goes to a temporary name first and is
// renamed into place.
ExportResult export_figure(const FigureData& data, const Preset& preset, const std::string& dir,
                           const ExportOptions& options);

}  // namespace maskscope::gui
