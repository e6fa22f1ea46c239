// Heatmaps as float textures coloured in a fragment shader through 1D colormap textures
// (shaders/heatmap.*). The value range is a uniform: changing it costs no upload.
#pragma once

#include "window/gl.hpp"
#include <imgui.h>

#include <array>
#include <deque>
#include <vector>

#include "common/colormap.hpp"

namespace maskscope::gui {

class HeatmapRenderer {
 public:
  HeatmapRenderer();
  ~HeatmapRenderer();
  HeatmapRenderer(const HeatmapRenderer&) = delete;
  HeatmapRenderer& operator=(const HeatmapRenderer&) = delete;

  // Texture `slot` (created on demand) receives an n x n row-major matrix; NaN = masked,
  // +infinity = noise (drawn in the noise colour: |value| within 2 SE of 0).
  void upload(int slot, const std::vector<float>& values, int n);
  // Adds the heatmap of `slot` to `dl` over [p0, p1], row 0 at the top.
  void draw(ImDrawList* dl, int slot, ImVec2 p0, ImVec2 p1, float range_min, float range_max, ColormapId map,
            ImVec4 masked_color, ImVec4 noise_color);
  void begin_frame();  // frees last frame's per-draw parameters

 private:
  struct DrawParams {
    HeatmapRenderer* self;
    float lo, hi;
    GLuint colormap;
    std::array<float, 4> masked, noise;
  };
  static void callback(const ImDrawList*, const ImDrawCmd* cmd);
  void ensure_program();

  std::vector<GLuint> textures_;
  std::vector<int> texture_sizes_;  // n of each texture's storage (0: none yet)
  std::array<GLuint, kColormapCount> colormap_textures_{};
  GLuint program_ = 0;
  GLint loc_proj_ = -1, loc_values_ = -1, loc_colormap_ = -1, loc_min_ = -1, loc_max_ = -1, loc_masked_ = -1,
        loc_noise_ = -1;
  std::deque<DrawParams> params_;  // stable addresses until the frame is rendered
};

}  // namespace maskscope::gui
