// The figure's files: SVG (exact cell rectangles, real text), CSV per panel, figure.json and
// preset.json, each written through a temporary name (core/formats/atomic_file.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "core/formats/result_json.hpp"
#include "core/model/version.hpp"
#include "common/figure/figure_lines.hpp"
#include "common/figure/figure_render.hpp"

namespace maskscope::gui {

namespace {

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\t':
      case '\n':
      case '\r': out += c; break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) out += c;  // XML 1.0 forbids other controls
        else out += "\xEF\xBF\xBD";                                        // U+FFFD in their place
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

// A CSV text field: quoted, inner quotes doubled.
std::string csv_quoted(const std::string& t) {
  std::string q = "\"";
  for (char c : t) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

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
      os << "<rect x=\"" << num(r->x0) << "\" y=\"" << num(r->y0) << "\" width=\"" << num(r->x1 - r->x0)
         << "\" height=\"" << num(r->y1 - r->y0) << "\" fill=\"" << (r->fill.a > 0 ? svg_color(r->fill) : "none")
         << "\"";
      if (r->stroke_width > 0)
        os << " stroke=\"" << svg_color(r->stroke) << "\" stroke-width=\"" << num(r->stroke_width) << "\"";
      os << "/>\n";
    } else if (const auto* h = std::get_if<SceneHeatmap>(&item)) {
      // One exact rectangle per cell, crisp edges so viewers draw no seams between cells.
      const double cw = double(h->x1 - h->x0) / h->n, ch = double(h->y1 - h->y0) / h->n;
      os << "<g class=\"heatmap\" id=\"heatmap-" << h->id << "\" data-n=\"" << h->n
         << "\" shape-rendering=\"crispEdges\">\n";
      for (int i = 0; i < h->n; ++i)
        for (int j = 0; j < h->n; ++j)
          os << "<rect x=\"" << num(h->x0 + j * cw) << "\" y=\"" << num(h->y0 + i * ch) << "\" width=\"" << num(cw)
             << "\" height=\"" << num(ch) << "\" fill=\"" << svg_color(h->cells[std::size_t(i) * h->n + j]) << "\"/>\n";
      os << "</g>\n";
    } else if (const auto* b = std::get_if<SceneColorbar>(&item)) {
      const std::string id = "colorbar" + std::to_string(gradients++);
      os << "<defs><linearGradient id=\"" << id << "\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">";
      for (std::size_t k = 0; k < b->stops.size(); ++k)
        os << "<stop offset=\"" << num(double(k) / double(b->stops.size() - 1)) << "\" stop-color=\""
           << svg_color(b->stops[k]) << "\"/>";
      os << "</linearGradient></defs>\n<rect class=\"colorbar\" x=\"" << num(b->x0) << "\" y=\"" << num(b->y0)
         << "\" width=\"" << num(b->x1 - b->x0) << "\" height=\"" << num(b->y1 - b->y0) << "\" fill=\"url(#" << id
         << ")\"/>\n";
    } else if (const auto* t = std::get_if<SceneText>(&item)) {
      const char* anchor = t->anchor == Anchor::start ? "start" : t->anchor == Anchor::middle ? "middle" : "end";
      os << "<text x=\"" << num(t->x) << "\" y=\"" << num(t->y)
         << "\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"" << num(t->size) << "\" text-anchor=\""
         << anchor << "\" fill=\"" << svg_color(t->color) << "\"";
      if (t->bold) os << " font-weight=\"bold\"";
      if (t->vertical) os << " transform=\"rotate(-90 " << num(t->x) << " " << num(t->y) << ")\"";
      os << ">" << xml_escape(t->text) << "</text>\n";
    } else if (const auto* p = std::get_if<ScenePath>(&item)) {
      if (p->filled) {
        os << "<polygon fill=\"" << svg_color(p->color) << "\" points=\"";
        for (const auto& pt : p->points) os << num(pt[0]) << "," << num(pt[1]) << " ";
        os << "\"/>\n";
        continue;
      }
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

std::string table_csv(const FigureData& data) {
  const FigureSpec& spec = data.spec;
  const std::size_t per_group = std::max<std::size_t>(1, spec.layers.size());
  std::string out = "row,label,group,layer,metric,value,se\n";
  for (std::size_t r = 0; r < data.cells.size(); ++r)
    for (std::size_t c = 0; c < data.cells[r].size(); ++c) {
      const FigureCell& cell = data.cells[r][c];
      const std::size_t g = c / per_group;
      out += std::to_string(r) + "," + csv_quoted(data.row_labels[r]) + "," +
             csv_quoted(g < data.group_titles.size() ? data.group_titles[g] : "") + "," +
             std::to_string(cell.panel.layer) + "," + csv_quoted(cell.metric_name) + "," +
             csv_number(cell.available ? cell.metric : NAN) + "," + csv_number(cell.available ? cell.metric_se : NAN) +
             "\n";
    }
  return out;
}

std::string lines_csv(const FigureData& data) {
  const FigureLines lines = figure_lines(data);
  const bool bins = data.spec.kind == FigureKind::leakage_bins;
  std::string out =
      bins ? "chart,row,label,group,layer,bin_from,bin_to,x,y,se\n" : "chart,row,label,group,layer,x,y,se\n";
  for (std::size_t c = 0; c < lines.charts.size(); ++c)
    for (std::size_t s = 0; s < lines.charts[c].series.size(); ++s) {
      const ChartSeries& series = lines.charts[c].series[s];
      const LineSeriesSource& src = lines.sources[c][s];
      const std::string head =
          std::to_string(c) + "," + std::to_string(src.row) + "," + csv_quoted(data.row_labels[src.row]) + "," +
          csv_quoted(src.group < data.group_titles.size() ? data.group_titles[src.group] : "") + ",";
      for (std::size_t k = 0; k < series.x.size(); ++k) {
        out += head + std::to_string(src.layers[k]) + ",";
        if (bins) out += std::to_string(src.bins[k][0]) + "," + std::to_string(src.bins[k][1]) + ",";
        out += csv_number(series.x[k]) + "," + csv_number(series.y[k]) + "," +
               (k < series.se.size() ? csv_number(series.se[k]) : std::string()) + "\n";
      }
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

ExportFolder::ExportFolder(std::string dir, ExportResult& res) : dir_(std::move(dir)), res_(res) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec || !fs::is_directory(dir_)) {
    res_.error = "cannot create folder '" + dir_ + "'" + (ec ? ": " + ec.message() : "");
    return;
  }
  remove_stale_temporaries(dir_);  // what a killed export left here
}

void ExportFolder::text(const std::string& name, const std::string& content) {
  if (!ok()) return;
  if (write_file_atomic((std::filesystem::path(dir_) / name).string(), content, res_.error)) res_.files.push_back(name);
}

double ExportFolder::png(const std::string& name, const Scene& scene, const ExportOptions& options) {
  const double scale = options.width > 0 ? double(options.width) / scene.width : options.scale;
  if (!ok()) return scale;
  std::string error;
  if (write_scene_png(scene, scale, (std::filesystem::path(dir_) / name).string(), error)) {
    res_.files.push_back(name);
    res_.png_width = int(std::ceil(scene.width * scale - 1e-6));
    res_.png_height = int(std::ceil(scene.height * scale - 1e-6));
  } else {
    res_.error = error;
  }
  return scale;
}

ExportResult export_figure(const FigureData& data, const Preset& preset, const std::string& dir,
                           const ExportOptions& options) {
  ExportResult res;
  ExportFolder folder(dir, res);
  if (!folder.ok()) return res;
  auto write = [&](const std::string& name, const std::string& content) { folder.text(name, content); };
  const Scene scene = layout_figure(data);
  const double scale = folder.png("figure.png", scene, options);
  write("figure.svg", scene_to_svg(scene));

  // Numbers: one CSV per panel (and per curve panel), described in figure.json.
  nlohmann::json panels = nlohmann::json::array();
  const FigureSpec& spec = data.spec;
  if (spec.kind == FigureKind::table) {
    write("table.csv", table_csv(data));
    panels.push_back({{"file", "table.csv"}, {"kind", "table"}});
  } else if (is_line_kind(spec.kind)) {
    write("lines.csv", lines_csv(data));
    panels.push_back({{"file", "lines.csv"}, {"kind", to_string(spec.kind)}});
  } else if (spec.kind == FigureKind::h_of_j) {
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
        const std::string stem =
            "row" + std::to_string(r) + "_col" + std::to_string(c) + "_layer" + std::to_string(cell.panel.layer);
        write(stem + ".csv", panel_csv(cell.panel));
        PanelData se = cell.panel;
        se.value = cell.panel.se;
        write(stem + "_se.csv", panel_csv(se));
        nlohmann::json entry = {
            {"file", stem + ".csv"},
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
