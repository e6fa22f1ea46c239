// The OpenGL the window draws with: 3.3 core through epoxy on the desktop, WebGL 2 (OpenGL ES 3.0)
// in the browser build (app/gui/web/). The shader sources are shared; only their first lines differ.
#pragma once

#ifdef __EMSCRIPTEN__
#include <GLES3/gl3.h>
#else
#include <epoxy/gl.h>
#endif

namespace maskscope::gui {

#ifdef __EMSCRIPTEN__
// GLSL ES 3.00 needs a default float precision in fragment shaders.
inline constexpr const char* kShaderPreamble = "#version 300 es\nprecision highp float;\n";
inline constexpr const char* kImGuiGlslVersion = "#version 300 es";
// WebGL 2 filters 16-bit float textures linearly without an extension (32-bit ones need one).
inline constexpr GLenum kColormapFormat = GL_RGB16F;
#else
inline constexpr const char* kShaderPreamble = "#version 330 core\n";
inline constexpr const char* kImGuiGlslVersion = "#version 330 core";
inline constexpr GLenum kColormapFormat = GL_RGB32F;
#endif

}  // namespace maskscope::gui
