// Text widths and boxes of a scene's text in DejaVu Sans, the font the PNG is drawn in (figure_png.cpp) and the
// SVG names first: the layouts size columns and place labels by them, and the layout tests check overlaps by them.
#include <algorithm>
#include <array>
#include <cstdint>

#include "common/figure/figure_render.hpp"

namespace maskscope::gui {

namespace {

struct Advance {
  std::uint32_t code;
  float book, bold;  // em
};

constexpr Advance kAdvances[] = {
#include "common/figure/text_widths.inc"
};

// A character the table does not know: about a wide letter's advance (DejaVu's 'n' is 0.63 em).
constexpr float kOtherAdvance = 0.65f;

// The next code point of UTF-8 `s` from `at` (advanced past it); a stray byte counts as one character.
std::uint32_t next_code_point(std::string_view s, std::size_t& at) {
  const auto b = static_cast<unsigned char>(s[at++]);
  int more = b >= 0xF0 ? 3 : b >= 0xE0 ? 2 : b >= 0xC0 ? 1 : 0;
  std::uint32_t c = more == 3 ? b & 0x07u : more == 2 ? b & 0x0Fu : more == 1 ? b & 0x1Fu : b;
  for (; more > 0 && at < s.size() && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80; --more)
    c = (c << 6) | (static_cast<unsigned char>(s[at++]) & 0x3Fu);
  return c;
}

}  // namespace

float text_width(std::string_view text, float size, bool bold) {
  float em = 0;
  for (std::size_t at = 0; at < text.size();) {
    const std::uint32_t c = next_code_point(text, at);
    const auto* a =
        std::find_if(std::begin(kAdvances), std::end(kAdvances), [&](const Advance& x) { return x.code == c; });
    em += a == std::end(kAdvances) ? kOtherAdvance : bold ? a->bold : a->book;
  }
  return em * size;
}

TextBox text_box(const SceneText& t) {
  const float w = text_width(t.text, t.size, t.bold);
  const float start = t.anchor == Anchor::start ? 0 : t.anchor == Anchor::middle ? -w / 2 : -w;
  const float up = kTextAscent * t.size, down = kTextDescent * t.size;
  if (!t.vertical) return {t.x + start, t.y - up, t.x + start + w, t.y + down};
  // Rotated a quarter turn anticlockwise about (x, y): the text runs upwards, its top to the left.
  return {t.x - up, t.y - start - w, t.x + down, t.y - start};
}

bool boxes_overlap(const TextBox& a, const TextBox& b) {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

}  // namespace maskscope::gui
