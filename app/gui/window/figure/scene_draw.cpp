// Draws a figure Scene into a Dear ImGui draw list: the Figure tab's preview is the export itself.
#include "window/figure/scene_draw.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <vector>

namespace maskscope::gui {

namespace {

ImU32 to_u32(const Rgba& c) { return ImGui::ColorConvertFloat4ToU32(ImVec4(c.r, c.g, c.b, c.a)); }

// Draws the scene into `dl` with its origin at `o` and `s` screen pixels per scene unit.
}  // namespace

void draw_scene(ImDrawList* dl, const Scene& scene, ImVec2 o, float s) {
  auto P = [&](float x, float y) { return ImVec2(o.x + x * s, o.y + y * s); };
  dl->AddRectFilled(P(0, 0), P(scene.width, scene.height), to_u32(scene.background));
  ImFont* font = ImGui::GetFont();
  for (const SceneItem& item : scene.items) {
    if (const auto* r = std::get_if<SceneRect>(&item)) {
      if (r->fill.a > 0) dl->AddRectFilled(P(r->x0, r->y0), P(r->x1, r->y1), to_u32(r->fill));
      if (r->stroke_width > 0)
        dl->AddRect(P(r->x0, r->y0), P(r->x1, r->y1), to_u32(r->stroke), 0, 0, std::max(1.0f, r->stroke_width * s));
    } else if (const auto* h = std::get_if<SceneHeatmap>(&item)) {
      for (int i = 0; i < h->n; ++i) {
        const float y0 = h->y0 + (h->y1 - h->y0) * float(i) / float(h->n),
                    y1 = h->y0 + (h->y1 - h->y0) * float(i + 1) / float(h->n);
        for (int j = 0; j < h->n; ++j) {
          const float x0 = h->x0 + (h->x1 - h->x0) * float(j) / float(h->n),
                      x1 = h->x0 + (h->x1 - h->x0) * float(j + 1) / float(h->n);
          // Snap to whole pixels so that neighbouring cells meet without seams.
          const ImVec2 a = P(x0, y0), b = P(x1, y1);
          dl->AddRectFilled(ImVec2(std::round(a.x), std::round(a.y)), ImVec2(std::round(b.x), std::round(b.y)),
                            to_u32(h->cells[std::size_t(i) * std::size_t(h->n) + std::size_t(j)]));
        }
      }
    } else if (const auto* b = std::get_if<SceneColorbar>(&item)) {
      const std::size_t k = b->stops.size();
      for (std::size_t m = 0; m + 1 < k; ++m) {
        const float y1 = b->y1 - (b->y1 - b->y0) * float(m) / float(k - 1),
                    y0 = b->y1 - (b->y1 - b->y0) * float(m + 1) / float(k - 1);
        const ImU32 lo = to_u32(b->stops[m]), hi = to_u32(b->stops[m + 1]);
        dl->AddRectFilledMultiColor(P(b->x0, y0), P(b->x1, y1), hi, hi, lo, lo);
      }
    } else if (const auto* t = std::get_if<SceneText>(&item)) {
      const float size = t->size * s;
      const ImVec2 ext = font->CalcTextSizeA(size, FLT_MAX, 0.0f, t->text.c_str());
      const float shift = t->anchor == Anchor::start ? 0 : t->anchor == Anchor::middle ? ext.x / 2 : ext.x;
      const float ascent = font->Ascent * size / font->FontSize;
      const ImVec2 at = P(t->x, t->y);
      if (!t->vertical) {
        dl->AddText(font, size, ImVec2(at.x - shift, at.y - ascent), to_u32(t->color), t->text.c_str());
        continue;
      }
      // Vertical: lay the text out horizontally about the clip rectangle's centre (so no glyph is
      // culled), then turn the glyph quads by -90 degrees onto the anchor point.
      const ImVec4 clip =
          dl->GetClipRectMin().x < dl->GetClipRectMax().x
              ? ImVec4(dl->GetClipRectMin().x, dl->GetClipRectMin().y, dl->GetClipRectMax().x, dl->GetClipRectMax().y)
              : ImVec4(0, 0, 0, 0);
      const ImVec2 c((clip.x + clip.z) / 2, (clip.y + clip.w) / 2);
      const int first = dl->VtxBuffer.Size;
      dl->AddText(font, size, ImVec2(c.x - shift, c.y - ascent), to_u32(t->color), t->text.c_str());
      for (int v = first; v < dl->VtxBuffer.Size; ++v) {
        ImVec2& p = dl->VtxBuffer[v].pos;
        const float dx = p.x - c.x, dy = p.y - c.y;
        p = ImVec2(at.x + dy, at.y - dx);
      }
    } else if (const auto* p = std::get_if<ScenePath>(&item)) {
      std::vector<ImVec2> pts;
      for (const auto& q : p->points) pts.push_back(P(q[0], q[1]));
      if (p->filled) {
        dl->AddConvexPolyFilled(pts.data(), int(pts.size()), to_u32(p->color));
        continue;
      }
      const float width = std::max(1.0f, p->width * s);
      if (!p->dashed) {
        dl->AddPolyline(pts.data(), int(pts.size()), to_u32(p->color), 0, width);
        continue;
      }
      // Dashes of 4 and gaps of 3 scene units, as the SVG and PNG back ends draw them, carried across vertices.
      const float on = 4 * s, off = 3 * s;
      float phase = 0;  // distance into the current dash + gap period
      for (std::size_t k = 1; k < pts.size(); ++k) {
        const ImVec2 a = pts[k - 1], e = pts[k];
        const float len = std::hypot(e.x - a.x, e.y - a.y);
        float at = 0;
        while (at < len) {
          const bool drawing = phase < on;
          const float step = std::min(len - at, drawing ? on - phase : on + off - phase);
          if (drawing && len > 0) {
            const float t0 = at / len, t1 = (at + step) / len;
            dl->AddLine(ImVec2(a.x + (e.x - a.x) * t0, a.y + (e.y - a.y) * t0),
                        ImVec2(a.x + (e.x - a.x) * t1, a.y + (e.y - a.y) * t1), to_u32(p->color), width);
          }
          at += step;
          phase = std::fmod(phase + step, on + off);
        }
      }
    } else if (const auto* m = std::get_if<SceneMarker>(&item)) {
      dl->AddCircleFilled(P(m->x, m->y), std::max(1.5f, m->radius * s), to_u32(m->fill));
    }
  }
}

}  // namespace maskscope::gui
