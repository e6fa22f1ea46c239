// PNG output of a figure scene through cairo: vector drawing rasterized at the export size, so
// text is rendered at that size rather than scaled up from a screen capture.
#include <cairo.h>

#include <cmath>
#include <numbers>

#include "common/figure/figure_render.hpp"

namespace maskscope::gui {

namespace {

void set_color(cairo_t* cr, const Rgba& c) { cairo_set_source_rgba(cr, c.r, c.g, c.b, c.a); }

void draw_text(cairo_t* cr, const SceneText& t) {
  cairo_save(cr);
  cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                         t.bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, t.size);
  cairo_text_extents_t ext;
  cairo_text_extents(cr, t.text.c_str(), &ext);
  const double shift = t.anchor == Anchor::start ? 0 : t.anchor == Anchor::middle ? ext.x_advance / 2 : ext.x_advance;
  cairo_translate(cr, t.x, t.y);
  if (t.vertical) cairo_rotate(cr, -std::numbers::pi / 2);
  cairo_move_to(cr, -shift, 0);
  set_color(cr, t.color);
  cairo_show_text(cr, t.text.c_str());
  cairo_restore(cr);
}

}  // namespace

bool write_scene_png(const Scene& scene, double scale, const std::string& path, std::string& error) {
  if (!(scale > 0) || !std::isfinite(scale)) {
    error = "PNG scale must be positive";
    return false;
  }
  const int w = int(std::ceil(scene.width * scale - 1e-6)), h = int(std::ceil(scene.height * scale - 1e-6));
  if (w < 1 || h < 1 || w > 32768 || h > 32768) {
    error = "PNG size " + std::to_string(w) + "x" + std::to_string(h) + " is outside [1, 32768] pixels per side";
    return false;
  }
  cairo_surface_t* surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
  cairo_t* cr = cairo_create(surface);
  set_color(cr, scene.background);
  cairo_paint(cr);
  cairo_scale(cr, scale, scale);
  // Hint metrics off: glyph advances scale linearly, so the layout is the same at every size.
  cairo_font_options_t* fo = cairo_font_options_create();
  cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
  cairo_font_options_set_antialias(fo, CAIRO_ANTIALIAS_GRAY);
  cairo_set_font_options(cr, fo);
  cairo_font_options_destroy(fo);

  for (const SceneItem& item : scene.items) {
    if (const auto* r = std::get_if<SceneRect>(&item)) {
      cairo_rectangle(cr, r->x0, r->y0, r->x1 - r->x0, r->y1 - r->y0);
      if (r->fill.a > 0) {
        set_color(cr, r->fill);
        if (r->stroke_width > 0) cairo_fill_preserve(cr);
        else cairo_fill(cr);
      }
      if (r->stroke_width > 0) {
        set_color(cr, r->stroke);
        cairo_set_line_width(cr, r->stroke_width);
        cairo_stroke(cr);
      }
      cairo_new_path(cr);
    } else if (const auto* hm = std::get_if<SceneHeatmap>(&item)) {
      // Cells on whole device pixels, no anti-aliasing: crisp, seamless, exact colours.
      cairo_save(cr);
      cairo_identity_matrix(cr);
      cairo_set_antialias(cr, CAIRO_ANTIALIAS_NONE);
      auto edge = [&](float a, float b, int k) { return std::lround((a + (b - a) * float(k) / float(hm->n)) * scale); };
      for (int i = 0; i < hm->n; ++i) {
        const long y0 = edge(hm->y0, hm->y1, i), y1 = edge(hm->y0, hm->y1, i + 1);
        for (int j = 0; j < hm->n; ++j) {
          const long x0 = edge(hm->x0, hm->x1, j), x1 = edge(hm->x0, hm->x1, j + 1);
          set_color(cr, hm->cells[std::size_t(i) * hm->n + j]);
          cairo_rectangle(cr, double(x0), double(y0), double(x1 - x0), double(y1 - y0));
          cairo_fill(cr);
        }
      }
      cairo_restore(cr);
    } else if (const auto* b = std::get_if<SceneColorbar>(&item)) {
      cairo_pattern_t* pat = cairo_pattern_create_linear(0, b->y1, 0, b->y0);
      for (std::size_t k = 0; k < b->stops.size(); ++k) {
        const Rgba& c = b->stops[k];
        cairo_pattern_add_color_stop_rgb(pat, double(k) / double(b->stops.size() - 1), c.r, c.g, c.b);
      }
      cairo_rectangle(cr, b->x0, b->y0, b->x1 - b->x0, b->y1 - b->y0);
      cairo_set_source(cr, pat);
      cairo_fill(cr);
      cairo_pattern_destroy(pat);
    } else if (const auto* t = std::get_if<SceneText>(&item)) {
      draw_text(cr, *t);
    } else if (const auto* p = std::get_if<ScenePath>(&item)) {
      if (p->points.size() < 2) continue;
      cairo_move_to(cr, p->points[0][0], p->points[0][1]);
      for (std::size_t k = 1; k < p->points.size(); ++k) cairo_line_to(cr, p->points[k][0], p->points[k][1]);
      if (p->filled) {
        cairo_close_path(cr);
        set_color(cr, p->color);
        cairo_fill(cr);
        continue;
      }
      const double dashes[] = {4.0, 3.0};
      cairo_set_dash(cr, dashes, p->dashed ? 2 : 0, 0);
      cairo_set_line_width(cr, p->width);
      cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
      set_color(cr, p->color);
      cairo_stroke(cr);
      cairo_set_dash(cr, nullptr, 0, 0);
    } else if (const auto* m = std::get_if<SceneMarker>(&item)) {
      cairo_new_sub_path(cr);
      cairo_arc(cr, m->x, m->y, m->radius, 0, 2 * std::numbers::pi);
      set_color(cr, m->fill);
      cairo_fill(cr);
    }
  }
  cairo_destroy(cr);
  // The PNG goes to the descriptor of the writer's temporary (never reopened by name).
  struct Sink {
    int fd;
    std::string error;
    const std::string& path;
  };
  const bool ok = write_atomically(
      path,
      [&](int fd) {
        Sink file{fd, "", path};
        const cairo_status_t status = cairo_surface_write_to_png_stream(
            surface,
            [](void* closure, const unsigned char* data, unsigned int length) {
              auto* s = static_cast<Sink*>(closure);
              s->error = write_all(s->fd, data, length, s->path);
              return s->error.empty() ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
            },
            &file);
        if (!file.error.empty()) return file.error;
        return status == CAIRO_STATUS_SUCCESS ? std::string()
                                              : "cannot write '" + path + "': " + cairo_status_to_string(status);
      },
      error);
  cairo_surface_destroy(surface);
  return ok;
}

}  // namespace maskscope::gui
