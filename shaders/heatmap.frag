// Maps a float texture (one cell per texel, NaN = masked) through a 1D colormap texture.
// The value range is a uniform, so changing it costs nothing.
in vec2 Frag_UV;
uniform sampler2D Values;    // R32F, nearest filtering: cells stay crisp
uniform sampler2D Colormap;  // 256 x 1 RGB
uniform float RangeMin;
uniform float RangeMax;
uniform vec4 MaskedColor;
uniform vec4 NoiseColor;     // +inf marks cells within 2 SE of 0 (noise, greyed)
out vec4 Out_Color;
void main() {
  float v = texture(Values, Frag_UV).r;
  if (isnan(v)) {
    Out_Color = MaskedColor;
    return;
  }
  if (isinf(v)) {
    Out_Color = NoiseColor;
    return;
  }
  float t = clamp((v - RangeMin) / max(RangeMax - RangeMin, 1e-30), 0.0, 1.0);
  Out_Color = vec4(texture(Colormap, vec2(t * (255.0 / 256.0) + 0.5 / 256.0, 0.5)).rgb, 1.0);
}
