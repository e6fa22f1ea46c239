// Figure layout, SVG and CSV writers, and the export of a whole figure folder.
#include "figure_render.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "core/result_json.hpp"
#include "core/version.hpp"

namespace maskscope::gui {

namespace {

const Rgba kBlack{0, 0, 0, 1};
const Rgba kGrey{0.35f, 0.35f, 0.35f, 1};
const Rgba kMasked{1, 1, 1, 1};  // masked cells show the page

Rgba from_map(const Colormap& cm, double v, float lo, float hi) {
  if (!std::isfinite(v)) return kMasked;
  const auto c = cm.at(hi > lo ? float((v - lo) / (hi - lo)) : 0.5f);
  return {c[0], c[1], c[2], 1};
}

Rgba palette(std::size_t k) {
  static const Rgba p[] = {{0.122f, 0.467f, 0.706f, 1}, {1.0f, 0.498f, 0.055f, 1},   {0.173f, 0.627f, 0.173f, 1},
                           {0.839f, 0.153f, 0.157f, 1}, {0.580f, 0.404f, 0.741f, 1}, {0.549f, 0.337f, 0.294f, 1},
                           {0.890f, 0.467f, 0.761f, 1}, {0.498f, 0.498f, 0.498f, 1}};
  return p[k % 8];
}

// "0.63824 ± 0.00003": at least 4 decimals (the papers' precision), more when the standard error
// needs them, so the SE always shows with one or two significant digits.
std::string value_with_se(double v, double se) {
  int decimals = 4;
  if (std::isfinite(se) && se > 0) decimals = std::clamp(1 - int(std::floor(std::log10(se))), 4, 8);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f \u00b1 %.*f", decimals, v, decimals, std::isfinite(se) ? se : 0.0);
  return buf;
}

// Tick label text for a step (enough decimals to tell ticks apart, no more).
std::string tick_text(double v, double step) {
  const int decimals = step >= 1 ? 0 : std::min(6, int(std::ceil(-std::log10(step) - 1e-9)));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, std::fabs(v) < step * 1e-6 ? 0.0 : v);
  return buf;
}

int index_step(int n) {
  if (n <= 12) return 1;
  for (int s : {2, 5, 10, 20, 50, 100})
    if (n / s <= 8) return s;
  return 200;
}

void add_colorbar(Scene& sc, float x0, float y0, float x1, float y1, const Colormap& cm, float lo, float hi,
                  float tick_size) {
  SceneColorbar bar{x0, y0, x1, y1, {}};
  for (int k = 0; k < 32; ++k) {
    const auto c = cm.at(float(k) / 31.0f);
    bar.stops.push_back({c[0], c[1], c[2], 1});
  }
  sc.items.push_back(bar);
  sc.items.push_back(SceneRect{x0, y0, x1, y1, {0, 0, 0, 0}, kGrey, 0.5f});
  const auto ticks = nice_ticks(lo, hi, 5);
  const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : std::max(1e-6, double(hi - lo));
  for (double t : ticks) {
    const float y = y1 - float((t - lo) / (hi - lo)) * (y1 - y0);
    sc.items.push_back(ScenePath{{{x1, y}, {x1 + 2.5f, y}}, kGrey, 0.6f, false});
    sc.items.push_back(SceneText{x1 + 4, y + tick_size * 0.35f, tick_size, tick_text(t, step), Anchor::start, false, false, kBlack});
  }
}

Scene layout_heatmaps(const FigureData& data) {
  Scene sc;
  const FigureSpec& spec = data.spec;
  const std::size_t rows = data.cells.size();
  const std::size_t cols = rows ? data.cells[0].size() : 0;
  const std::size_t groups = data.group_titles.size();
  const std::size_t per_group = spec.layers.size();
  int n_max = 1;
  for (const auto& line : data.cells)
    for (const auto& c : line) n_max = std::max(n_max, c.panel.n);

  const float fs_title = 14, fs_label = 11, fs_tick = 8.5f, fs_metric = 9;
  const float P = std::max(130.0f, 2.0f * float(n_max));
  const float ytick_w = fs_tick * 0.6f * float(std::to_string(n_max - 1).size()) + 5;
  const float cb_w = 5 + 7 + 34;
  const float col_w = ytick_w + P + cb_w + 6;
  const float left = 8 + fs_label + 6 + fs_metric + 4;
  const float header_h = fs_label + 4 + fs_metric + 5;
  const float row_h = header_h + P + fs_tick + 6;
  float top = 8;
  if (!spec.title.empty()) top += fs_title + 10;
  const bool group_titles = std::any_of(data.group_titles.begin(), data.group_titles.end(),
                                        [](const std::string& t) { return !t.empty(); });
  if (group_titles) top += fs_label + 10;
  sc.width = left + float(cols) * col_w + 6;
  sc.height = top + float(rows) * (row_h + 8) + fs_label + 10;
  sc.width = std::max(sc.width, 200.0f);

  if (!spec.title.empty())
    sc.items.push_back(SceneText{sc.width / 2, 8 + fs_title, fs_title, spec.title, Anchor::middle, false, true, kBlack});
  if (group_titles)
    for (std::size_t g = 0; g < groups; ++g) {
      const float x0 = left + float(g * per_group) * col_w, x1 = x0 + float(per_group) * col_w;
      const float y = top - 8;
      sc.items.push_back(SceneText{(x0 + x1) / 2, y - 3, fs_label, data.group_titles[g], Anchor::middle, false, true, kBlack});
      sc.items.push_back(ScenePath{{{x0 + ytick_w, y}, {x1 - cb_w, y}}, kGrey, 0.6f, false});
    }

  for (std::size_t r = 0; r < rows; ++r) {
    const float ry = top + float(r) * (row_h + 8);
    const float hy0 = ry + header_h, hy1 = hy0 + P;
    sc.items.push_back(SceneText{8 + fs_label, (hy0 + hy1) / 2, fs_label, data.row_labels[r], Anchor::middle, true, true, kBlack});
    for (std::size_t c = 0; c < cols; ++c) {
      const FigureCell& cell = data.cells[r][c];
      const PanelData& p = cell.panel;
      const std::size_t row_index = spec.difference ? r + 1 : r;
      const bool centred = spec.difference || spec.rows[row_index].transform == Transform::diagonal_normalized;
      const Colormap& cm = colormap(centred ? spec.diverging : spec.sequential);
      const float x0 = left + float(c) * col_w + ytick_w, x1 = x0 + P;
      // Title: the layer, and what the map is when it is not the raw one.
      std::string title = "Layer " + std::to_string(p.layer);
      const Quantity q = spec.rows[row_index].quantity;
      if (q != Quantity::score) title += std::string("  ") + std::string(symbol(q));
      if (spec.difference) title += "  (difference)";
      else if (spec.rows[row_index].transform == Transform::diagonal_normalized) title += "  (diag.-normalized)";
      sc.items.push_back(SceneText{(x0 + x1) / 2, ry + fs_label, fs_label, title, Anchor::middle, false, false, kBlack});
      if (!cell.metric_name.empty() && std::isfinite(cell.metric))
        sc.items.push_back(SceneText{(x0 + x1) / 2, ry + fs_label + 4 + fs_metric, fs_metric,
                                     cell.metric_name + " = " + value_with_se(cell.metric, cell.metric_se), Anchor::middle,
                                     false, false, kBlack});
      SceneHeatmap hm{x0, hy0, x1, hy1, p.n, {}, "r" + std::to_string(r) + "-c" + std::to_string(c)};
      hm.cells.reserve(p.value.size());
      for (double v : p.value) hm.cells.push_back(from_map(cm, v, p.lo, p.hi));
      sc.items.push_back(std::move(hm));
      sc.items.push_back(SceneRect{x0, hy0, x1, hy1, {0, 0, 0, 0}, kGrey, 0.5f});
      // Index ticks (0-based, as in the papers' heatmaps).
      const int step = index_step(p.n);
      const float cell_size = P / float(p.n);
      for (int t = 0; t < p.n; t += step) {
        const float pos = (float(t) + 0.5f) * cell_size;
        sc.items.push_back(SceneText{x0 + pos, hy1 + fs_tick + 2, fs_tick, std::to_string(t), Anchor::middle, false, false, kBlack});
        sc.items.push_back(SceneText{x0 - 3, hy0 + pos + fs_tick * 0.35f, fs_tick, std::to_string(t), Anchor::end, false, false, kBlack});
      }
      if (c == 0)
        sc.items.push_back(SceneText{x0 - ytick_w - 3, (hy0 + hy1) / 2, fs_metric, "query i", Anchor::middle, true, false, kGrey});
      if (r + 1 == rows)
        sc.items.push_back(SceneText{(x0 + x1) / 2, hy1 + fs_tick + 4 + fs_metric + 2, fs_metric, "key j", Anchor::middle, false,
                                     false, kGrey});
      if (cell.available) add_colorbar(sc, x1 + 5, hy0, x1 + 12, hy1, cm, p.lo, p.hi, fs_tick);
    }
  }
  if (!data.note.empty())
    sc.items.push_back(SceneText{8, sc.height - 4, fs_tick, data.note, Anchor::start, false, false, kGrey});
  return sc;
}

Scene layout_curves(const FigureData& data) {
  Scene sc;
  const float fs_title = 14, fs_label = 11, fs_tick = 9;
  const float W = 340, H = 240, ml = 56, mr = 14, mt = 26, mb = 40;
  const std::size_t groups = data.curves.size();
  float top = 8;
  if (!data.spec.title.empty()) top += fs_title + 8;
  sc.width = float(groups) * (ml + W + mr) + 8;
  sc.height = top + mt + H + mb;
  if (!data.spec.title.empty())
    sc.items.push_back(SceneText{sc.width / 2, 8 + fs_title, fs_title, data.spec.title, Anchor::middle, false, true, kBlack});
  for (std::size_t g = 0; g < groups; ++g) {
    const auto& curves = data.curves[g];
    const float px0 = 4 + float(g) * (ml + W + mr) + ml, py0 = top + mt, px1 = px0 + W, py1 = py0 + H;
    double xlo = 1, xhi = 1, ylo = INFINITY, yhi = -INFINITY;
    for (const auto& c : curves) {
      if (!c.j.empty()) xhi = std::max(xhi, c.j.back());
      for (std::size_t k = 0; k < c.theory.size(); ++k) {
        for (double v : {c.theory[k], k < c.simulated.size() ? c.simulated[k] : NAN})
          if (std::isfinite(v)) { ylo = std::min(ylo, v); yhi = std::max(yhi, v); }
      }
    }
    if (!std::isfinite(ylo)) { ylo = 0; yhi = 1; }
    const double pad = std::max(1e-9, (yhi - ylo) * 0.06);
    ylo -= pad;
    yhi += pad;
    xlo -= 0.4;
    xhi += 0.4;
    auto X = [&](double x) { return px0 + float((x - xlo) / (xhi - xlo)) * W; };
    auto Y = [&](double y) { return py1 - float((y - ylo) / (yhi - ylo)) * H; };
    if (!data.group_titles[g].empty())
      sc.items.push_back(SceneText{(px0 + px1) / 2, top + fs_label + 4, fs_label, data.group_titles[g], Anchor::middle, false, true, kBlack});
    sc.items.push_back(SceneRect{px0, py0, px1, py1, {0, 0, 0, 0}, kBlack, 0.8f});
    const auto yt = nice_ticks(ylo, yhi, 5);
    const double ystep = yt.size() > 1 ? yt[1] - yt[0] : 1;
    for (double t : yt) {
      sc.items.push_back(ScenePath{{{px0, Y(t)}, {px1, Y(t)}}, {0.85f, 0.85f, 0.85f, 1}, 0.5f, false});
      sc.items.push_back(SceneText{px0 - 4, Y(t) + fs_tick * 0.35f, fs_tick, tick_text(t, ystep), Anchor::end, false, false, kBlack});
    }
    for (double t = 1; t <= xhi; t += (xhi > 24 ? 5 : 1))
      sc.items.push_back(SceneText{X(t), py1 + fs_tick + 4, fs_tick, tick_text(t, 1), Anchor::middle, false, false, kBlack});
    sc.items.push_back(SceneText{(px0 + px1) / 2, py1 + fs_tick + 6 + fs_label + 2, fs_label, "key index j", Anchor::middle, false, false, kBlack});
    sc.items.push_back(SceneText{px0 - ml + 4 + fs_label, (py0 + py1) / 2, fs_label, "h(j)", Anchor::middle, true, false, kBlack});
    float legend_y = py0 + 14;
    for (std::size_t k = 0; k < curves.size(); ++k) {
      const auto& c = curves[k];
      const Rgba col = palette(k);
      ScenePath line{{}, col, 1.8f, false};
      for (std::size_t m = 0; m < c.j.size(); ++m) line.points.push_back({X(c.j[m]), Y(c.theory[m])});
      sc.items.push_back(line);
      for (std::size_t m = 0; m < c.simulated.size(); ++m) {
        if (!std::isfinite(c.simulated[m])) continue;
        const float x = X(c.j[m]);
        const double e = std::isfinite(c.simulated_se[m]) ? c.simulated_se[m] : 0;
        sc.items.push_back(ScenePath{{{x, Y(c.simulated[m] - e)}, {x, Y(c.simulated[m] + e)}}, col, 1.0f, false});
        sc.items.push_back(SceneMarker{x, Y(c.simulated[m]), 2.6f, col});
      }
      sc.items.push_back(ScenePath{{{px0 + 8, legend_y - 3}, {px0 + 26, legend_y - 3}}, col, 1.8f, false});
      sc.items.push_back(SceneText{px0 + 30, legend_y, fs_tick, c.label, Anchor::start, false, false, kBlack});
      legend_y += fs_tick + 4;
    }
    sc.items.push_back(SceneText{px0 + 8, legend_y + 2, fs_tick * 0.9f, "lines: Eq. 42;  dots: simulated 1/||x_j||, scaled at j = 1",
                                 Anchor::start, false, false, kGrey});
  }
  return sc;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string svg_color(const Rgba& c) {
  char buf[16];
  auto b = [](float v) { return int(std::lround(std::clamp(v, 0.0f, 1.0f) * 255.0f)); };
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", b(c.r), b(c.g), b(c.b));
  return buf;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  std::string s = buf;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

std::string csv_number(double v) {
  if (!std::isfinite(v)) return "nan";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

Scene layout_figure(const FigureData& data) {
  return data.spec.kind == FigureKind::h_of_j ? layout_curves(data) : layout_heatmaps(data);
}

std::string scene_to_svg(const Scene& scene) {
  std::ostringstream os;
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
     << "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" << num(scene.width) << "\" height=\""
     << num(scene.height) << "\" viewBox=\"0 0 " << num(scene.width) << " " << num(scene.height) << "\">\n"
     << "<!-- maskscope " << kVersion << " -->\n"
     << "<rect x=\"0\" y=\"0\" width=\"" << num(scene.width) << "\" height=\"" << num(scene.height) << "\" fill=\""
     << svg_color(scene.background) << "\"/>\n";
  int gradients = 0;
  for (const SceneItem& item : scene.items) {
    if (const auto* r = std::get_if<SceneRect>(&item)) {
      os << "<rect x=\"" << num(r->x0) << "\" y=\"" << num(r->y0) << "\" width=\"" << num(r->x1 - r->x0) << "\" height=\""
         << num(r->y1 - r->y0) << "\" fill=\"" << (r->fill.a > 0 ? svg_color(r->fill) : "none") << "\"";
      if (r->stroke_width > 0) os << " stroke=\"" << svg_color(r->stroke) << "\" stroke-width=\"" << num(r->stroke_width) << "\"";
      os << "/>\n";
    } else if (const auto* h = std::get_if<SceneHeatmap>(&item)) {
      // One exact rectangle per cell, crisp edges so viewers draw no seams between cells.
      const double cw = double(h->x1 - h->x0) / h->n, ch = double(h->y1 - h->y0) / h->n;
      os << "<g class=\"heatmap\" id=\"heatmap-" << h->id << "\" data-n=\"" << h->n << "\" shape-rendering=\"crispEdges\">\n";
      for (int i = 0; i < h->n; ++i)
        for (int j = 0; j < h->n; ++j)
          os << "<rect x=\"" << num(h->x0 + j * cw) << "\" y=\"" << num(h->y0 + i * ch) << "\" width=\"" << num(cw)
             << "\" height=\"" << num(ch) << "\" fill=\"" << svg_color(h->cells[std::size_t(i) * h->n + j]) << "\"/>\n";
      os << "</g>\n";
    } else if (const auto* b = std::get_if<SceneColorbar>(&item)) {
      const std::string id = "colorbar" + std::to_string(gradients++);
      os << "<defs><linearGradient id=\"" << id << "\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">";
      for (std::size_t k = 0; k < b->stops.size(); ++k)
        os << "<stop offset=\"" << num(double(k) / double(b->stops.size() - 1)) << "\" stop-color=\"" << svg_color(b->stops[k])
           << "\"/>";
      os << "</linearGradient></defs>\n<rect class=\"colorbar\" x=\"" << num(b->x0) << "\" y=\"" << num(b->y0) << "\" width=\""
         << num(b->x1 - b->x0) << "\" height=\"" << num(b->y1 - b->y0) << "\" fill=\"url(#" << id << ")\"/>\n";
    } else if (const auto* t = std::get_if<SceneText>(&item)) {
      const char* anchor = t->anchor == Anchor::start ? "start" : t->anchor == Anchor::middle ? "middle" : "end";
      os << "<text x=\"" << num(t->x) << "\" y=\"" << num(t->y) << "\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\""
         << num(t->size) << "\" text-anchor=\"" << anchor << "\" fill=\"" << svg_color(t->color) << "\"";
      if (t->bold) os << " font-weight=\"bold\"";
      if (t->vertical) os << " transform=\"rotate(-90 " << num(t->x) << " " << num(t->y) << ")\"";
      os << ">" << xml_escape(t->text) << "</text>\n";
    } else if (const auto* p = std::get_if<ScenePath>(&item)) {
      os << "<polyline fill=\"none\" stroke=\"" << svg_color(p->color) << "\" stroke-width=\"" << num(p->width) << "\"";
      if (p->dashed) os << " stroke-dasharray=\"4 3\"";
      os << " points=\"";
      for (const auto& pt : p->points) os << num(pt[0]) << "," << num(pt[1]) << " ";
      os << "\"/>\n";
    } else if (const auto* m = std::get_if<SceneMarker>(&item)) {
      os << "<circle cx=\"" << num(m->x) << "\" cy=\"" << num(m->y) << "\" r=\"" << num(m->radius) << "\" fill=\""
         << svg_color(m->fill) << "\"/>\n";
    }
  }
  os << "</svg>\n";
  return os.str();
}

std::string panel_csv(const PanelData& p) {
  std::string out;
  for (int i = 0; i < p.n; ++i) {
    for (int j = 0; j < p.n; ++j) {
      if (j) out += ',';
      out += csv_number(p.value[std::size_t(i) * p.n + j]);
    }
    out += '\n';
  }
  return out;
}

std::string curves_csv(const std::vector<FigureCurve>& curves) {
  std::string out = "j";
  std::size_t len = 0;
  for (const auto& c : curves) {
    std::string label = c.label;
    std::replace(label.begin(), label.end(), ',', ';');
    out += "," + label + " theory," + label + " simulated," + label + " simulated_se";
    len = std::max(len, c.j.size());
  }
  out += '\n';
  for (std::size_t k = 0; k < len; ++k) {
    out += std::to_string(k + 1);
    for (const auto& c : curves) {
      auto at = [&](const std::vector<double>& v) { return k < v.size() ? csv_number(v[k]) : std::string("nan"); };
      out += "," + at(c.theory) + "," + at(c.simulated) + "," + at(c.simulated_se);
    }
    out += '\n';
  }
  return out;
}

ExportResult export_figure(const FigureData& data, const Preset& preset, const std::string& dir,
                           const ExportOptions& options) {
  namespace fs = std::filesystem;
  ExportResult res;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    res.error = "cannot create folder '" + dir + "'" + (ec ? ": " + ec.message() : "");
    return res;
  }
  auto write = [&](const std::string& name, const std::string& content) {
    if (!res.error.empty()) return;
    if (write_file_atomic((fs::path(dir) / name).string(), content, res.error)) res.files.push_back(name);
  };

  const Scene scene = layout_figure(data);
  const double scale = options.width > 0 ? double(options.width) / scene.width : options.scale;
  {
    std::string error;
    if (write_scene_png(scene, scale, (fs::path(dir) / "figure.png").string(), error)) {
      res.files.push_back("figure.png");
      res.png_width = int(std::ceil(scene.width * scale - 1e-6));
      res.png_height = int(std::ceil(scene.height * scale - 1e-6));
    } else {
      res.error = error;
    }
  }
  write("figure.svg", scene_to_svg(scene));

  // Numbers: one CSV per panel (and per curve panel), described in figure.json.
  nlohmann::json panels = nlohmann::json::array();
  const FigureSpec& spec = data.spec;
  if (spec.kind == FigureKind::h_of_j) {
    for (std::size_t g = 0; g < data.curves.size(); ++g) {
      const std::string name = "hofj_col" + std::to_string(g) + ".csv";
      write(name, curves_csv(data.curves[g]));
      panels.push_back({{"file", name}, {"column", g}, {"title", data.group_titles[g]}});
    }
  } else {
    const std::size_t first = spec.difference ? 1 : 0;
    for (std::size_t r = 0; r < data.cells.size(); ++r)
      for (std::size_t c = 0; c < data.cells[r].size(); ++c) {
        const FigureCell& cell = data.cells[r][c];
        const std::size_t g = spec.layers.empty() ? 0 : c / spec.layers.size();
        const std::string stem = "row" + std::to_string(r) + "_col" + std::to_string(c) + "_layer" + std::to_string(cell.panel.layer);
        write(stem + ".csv", panel_csv(cell.panel));
        PanelData se = cell.panel;
        se.value = cell.panel.se;
        write(stem + "_se.csv", panel_csv(se));
        nlohmann::json entry = {{"file", stem + ".csv"},
                                {"se_file", stem + "_se.csv"},
                                {"row", r},
                                {"column", c},
                                {"label", data.row_labels[r]},
                                {"group", data.group_titles[g]},
                                {"layer", cell.panel.layer},
                                {"n", cell.panel.n},
                                {"show", to_string(spec.rows[r + first].quantity)},
                                {"transform", spec.difference ? "difference" : to_string(spec.rows[r + first].transform)},
                                {"range", {cell.panel.lo, cell.panel.hi}},
                                {"settings", settings_to_json(cell_settings(spec, r + first, g))}};
        if (!cell.metric_name.empty()) entry[cell.metric_name] = {{"value", cell.metric}, {"se", cell.metric_se}};
        panels.push_back(std::move(entry));
      }
  }
  const nlohmann::json meta = {{"maskscope", kVersion},
                               {"preset", preset.name},
                               {"complete", data.complete},
                               {"samples_done", data.samples_done},
                               {"samples_target", data.samples_target},
                               {"png", {{"width", res.png_width}, {"height", res.png_height}, {"scale", scale}}},
                               {"panels", panels}};
  write("figure.json", meta.dump(2) + "\n");
  write("preset.json", preset_to_json(preset).dump(2) + "\n");
  res.ok = res.error.empty();
  return res;
}

}  // namespace maskscope::gui
