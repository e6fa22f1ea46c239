// GL side of the heatmaps: textures, the colormap shader, and the draw-list callback.
#include "window/heatmap.hpp"

#include <cstdio>
#include <string>
#include <string_view>

#include "common/embedded_asset.hpp"

namespace maskscope::gui {

namespace {
GLuint compile(GLenum type, std::string_view body) {
  // The #version line is added here, so the shader files stay plain GLSL bodies.
  const std::string src = kShaderPreamble + std::string(body);
  const char* p = src.c_str();
  GLuint s = glCreateShader(type);
  glShaderSource(s, 1, &p, nullptr);
  glCompileShader(s);
  GLint ok = 0;
  glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    char log[2048];
    glGetShaderInfoLog(s, sizeof log, nullptr, log);
    std::fprintf(stderr, "maskscope: heatmap shader failed to compile:\n%s\n", log);
  }
  return s;
}
}  // namespace

HeatmapRenderer::HeatmapRenderer() {
  for (int c = 0; c < kColormapCount; ++c) {
    const Colormap& cm = colormap(static_cast<ColormapId>(c));
    glGenTextures(1, &colormap_textures_[c]);
    glBindTexture(GL_TEXTURE_2D, colormap_textures_[c]);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glTexImage2D(GL_TEXTURE_2D, 0, GLint(kColormapFormat), GLsizei(cm.rgb.size()), 1, 0, GL_RGB, GL_FLOAT,
                 cm.rgb.data());
  }
}

HeatmapRenderer::~HeatmapRenderer() {
  if (!textures_.empty()) glDeleteTextures(GLsizei(textures_.size()), textures_.data());
  glDeleteTextures(kColormapCount, colormap_textures_.data());
  if (program_) glDeleteProgram(program_);
}

void HeatmapRenderer::upload(int slot, const std::vector<float>& values, int n) {
  while (int(textures_.size()) <= slot) {
    GLuint t;
    glGenTextures(1, &t);
    glBindTexture(GL_TEXTURE_2D, t);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    textures_.push_back(t);
  }
  if (int(texture_sizes_.size()) <= slot) texture_sizes_.resize(std::size_t(slot) + 1, 0);
  glBindTexture(GL_TEXTURE_2D, textures_[slot]);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  // The same size: new texels into the texture's storage. A new storage at every snapshot costs
  // a software renderer's driver (llvmpipe) a fresh allocation and its page faults.
  if (texture_sizes_[std::size_t(slot)] == n) {
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, n, n, GL_RED, GL_FLOAT, values.data());
  } else {
    glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, n, n, 0, GL_RED, GL_FLOAT, values.data());
    texture_sizes_[std::size_t(slot)] = n;
  }
}

void HeatmapRenderer::begin_frame() { params_.clear(); }

void HeatmapRenderer::ensure_program() {
  if (program_) return;
  // Match the attribute locations of the Dear ImGui backend's program, whose vertex array is bound.
  GLint backend = 0;
  glGetIntegerv(GL_CURRENT_PROGRAM, &backend);
  program_ = glCreateProgram();
  const GLuint vs = compile(GL_VERTEX_SHADER, embedded_asset(AssetKind::shader, "heatmap.vert"));
  const GLuint fs = compile(GL_FRAGMENT_SHADER, embedded_asset(AssetKind::shader, "heatmap.frag"));
  glAttachShader(program_, vs);
  glAttachShader(program_, fs);
  for (const char* attr : {"Position", "UV", "Color"}) {
    const GLint loc = backend ? glGetAttribLocation(GLuint(backend), attr) : -1;
    if (loc >= 0) glBindAttribLocation(program_, GLuint(loc), attr);
  }
  glLinkProgram(program_);
  GLint ok = 0;
  glGetProgramiv(program_, GL_LINK_STATUS, &ok);
  if (!ok) {
    char log[2048];
    glGetProgramInfoLog(program_, sizeof log, nullptr, log);
    std::fprintf(stderr, "maskscope: heatmap program failed to link:\n%s\n", log);
  }
  glDeleteShader(vs);
  glDeleteShader(fs);
  loc_proj_ = glGetUniformLocation(program_, "ProjMtx");
  loc_values_ = glGetUniformLocation(program_, "Values");
  loc_colormap_ = glGetUniformLocation(program_, "Colormap");
  loc_min_ = glGetUniformLocation(program_, "RangeMin");
  loc_max_ = glGetUniformLocation(program_, "RangeMax");
  loc_masked_ = glGetUniformLocation(program_, "MaskedColor");
  loc_noise_ = glGetUniformLocation(program_, "NoiseColor");
}

void HeatmapRenderer::callback(const ImDrawList*, const ImDrawCmd* cmd) {
  const DrawParams& p = *static_cast<const DrawParams*>(cmd->UserCallbackData);
  HeatmapRenderer& self = *p.self;
  // The same orthographic projection the OpenGL3 backend builds from the draw data (callbacks
  // run inside ImGui_ImplOpenGL3_RenderDrawData, after ImGui::Render, so the draw data is valid).
  const ImDrawData* dd = ImGui::GetDrawData();
  const float L = dd->DisplayPos.x, R = dd->DisplayPos.x + dd->DisplaySize.x;
  const float T = dd->DisplayPos.y, B = dd->DisplayPos.y + dd->DisplaySize.y;
  const float proj[16] = {2.0f / (R - L),    0, 0,   0, 0, 2.0f / (T - B), 0, 0, 0, 0, -1.0f, 0, (R + L) / (L - R),
                          (T + B) / (B - T), 0, 1.0f};
  self.ensure_program();
  glUseProgram(self.program_);
  glUniformMatrix4fv(self.loc_proj_, 1, GL_FALSE, proj);
  glUniform1i(self.loc_values_, 0);
  glUniform1i(self.loc_colormap_, 1);
  glUniform1f(self.loc_min_, p.lo);
  glUniform1f(self.loc_max_, p.hi);
  glUniform4fv(self.loc_masked_, 1, p.masked.data());
  glUniform4fv(self.loc_noise_, 1, p.noise.data());
  glActiveTexture(GL_TEXTURE1);
  glBindTexture(GL_TEXTURE_2D, p.colormap);
  glActiveTexture(GL_TEXTURE0);
}

void HeatmapRenderer::draw(ImDrawList* dl, int slot, ImVec2 p0, ImVec2 p1, float range_min, float range_max,
                           ColormapId map, ImVec4 masked_color, ImVec4 noise_color) {
  if (slot >= int(textures_.size())) return;
  params_.push_back({this,
                     range_min,
                     range_max,
                     colormap_textures_[static_cast<int>(map)],
                     {masked_color.x, masked_color.y, masked_color.z, masked_color.w},
                     {noise_color.x, noise_color.y, noise_color.z, noise_color.w}});
  dl->AddCallback(&HeatmapRenderer::callback, &params_.back());
  dl->AddImage(reinterpret_cast<ImTextureID>(static_cast<intptr_t>(textures_[slot])), p0, p1);
  dl->AddCallback(ImDrawCallback_ResetRenderState, nullptr);
}

}  // namespace maskscope::gui
