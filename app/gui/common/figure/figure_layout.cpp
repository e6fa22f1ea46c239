// Figure layout: the heatmap grid and the h(j) plots as a Scene, in pixels at 1x.
#include "common/figure/figure_render.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "common/figure/scene_parts.hpp"
#include "common/figure/figure_lines.hpp"
#include "common/format.hpp"
#include "common/ticks.hpp"

namespace maskscope::gui {

namespace {

const Rgba kNoise{0.80f, 0.80f, 0.80f, 1};  // |value| <= 2 SE in centred maps

int index_step(int n) {
  if (n <= 12) return 1;
  for (int s : {2, 5, 10, 20, 50, 100})
    if (n / s <= 8) return s;
  return 200;
}

// A heat map panel's title: the layer, and what the map is when it is not the raw one.
std::string panel_title(const FigureSpec& spec, std::size_t displayed_row, int layer) {
  const std::size_t row = spec.difference ? displayed_row + 1 : displayed_row;
  std::string title = layer == 0 ? std::string("Embeddings") : "Layer " + std::to_string(layer);
  if (row >= spec.rows.size()) return title;
  const Quantity q = spec.rows[row].quantity;
  if (q != Quantity::score) title += std::string("  ") + std::string(symbol(q));
  if (spec.difference) title += "  (difference)";
  else if (spec.rows[row].transform == Transform::diagonal_normalized) title += "  (diag.-normalized)";
  return title;
}

// The line under a panel's title: its metric with the SE ("RP = 0.6382 \u00b1 0.0012"), empty without one.
// A map of noise only (noise_only_map) says so there, as the window's badge does.
std::string metric_text(const FigureCell& cell) {
  const std::string noise = cell.available && cell.panel.noise_only ? "noise only" : "";
  if (cell.metric_name.empty() || !std::isfinite(cell.metric)) return noise;
  return cell.metric_name + " = " + value_with_se(cell.metric, cell.metric_se) + (noise.empty() ? "" : ",  " + noise);
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
  const float ytick_w = text_width(std::to_string(n_max - 1), fs_tick) + 5;
  // Each column is as wide as its parts: index ticks, map, colour bar with its widest tick label; and at least as
  // wide as the widest panel title or metric line, so that neighbours' headers never touch.
  float cbtick_w = 0, header_w = 0;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) {
      const FigureCell& cell = data.cells[r][c];
      if (cell.available)
        for (const ColorbarTick& t : colorbar_ticks(cell.panel.lo, cell.panel.hi))
          cbtick_w = std::max(cbtick_w, text_width(t.text, fs_tick));
      header_w = std::max({header_w, text_width(panel_title(spec, r, cell.panel.layer), fs_label),
                           text_width(metric_text(cell), fs_metric)});
    }
  const float cb_w = 5 + 7 + 4 + std::max(cbtick_w, 20.0f);
  const float col_w = std::max(ytick_w + P + cb_w + 6, header_w + 12);
  const float left = 8 + fs_label + 6 + fs_metric + 4 + std::max(0.0f, (header_w - P) / 2 - ytick_w);
  const float header_h = fs_label + 4 + fs_metric + 5;
  const float row_h = header_h + P + fs_tick + 6;
  float top = 8;
  if (!spec.title.empty()) top += fs_title + 10;
  const bool group_titles =
      std::any_of(data.group_titles.begin(), data.group_titles.end(), [](const std::string& t) { return !t.empty(); });
  if (group_titles) top += fs_label + 10;
  const float last_header = left + float(cols ? cols - 1 : 0) * col_w + ytick_w + P / 2 + header_w / 2;
  sc.width =
      std::max({left + float(cols) * col_w + 6, last_header + 8, 200.0f, text_width(spec.title, fs_title, true) + 16});
  const std::vector<std::string> note = wrap_words(data.note, fs_tick, sc.width - 16);
  sc.height = top + float(rows) * (row_h + 8) + fs_label + 10 + float(note.size()) * (fs_tick + 4);

  if (!spec.title.empty())
    sc.items.push_back(
        SceneText{sc.width / 2, 8 + fs_title, fs_title, spec.title, Anchor::middle, false, true, kBlack});
  if (group_titles)
    for (std::size_t g = 0; g < groups; ++g) {
      const float x0 = left + float(g * per_group) * col_w, x1 = x0 + float(per_group) * col_w;
      const float y = top - 8;
      sc.items.push_back(
          SceneText{(x0 + x1) / 2, y - 3, fs_label, data.group_titles[g], Anchor::middle, false, true, kBlack});
      sc.items.push_back(ScenePath{{{x0 + ytick_w, y}, {x1 - cb_w, y}}, kGrey, 0.6f, false});
    }

  for (std::size_t r = 0; r < rows; ++r) {
    const float ry = top + float(r) * (row_h + 8);
    const float hy0 = ry + header_h, hy1 = hy0 + P;
    sc.items.push_back(
        SceneText{8 + fs_label, (hy0 + hy1) / 2, fs_label, data.row_labels[r], Anchor::middle, true, true, kBlack});
    for (std::size_t c = 0; c < cols; ++c) {
      const FigureCell& cell = data.cells[r][c];
      const PanelData& p = cell.panel;
      const std::size_t row_index = spec.difference ? r + 1 : r;
      const bool centred =
          spec.difference || diverging_map(spec.rows[row_index].quantity, spec.rows[row_index].transform);
      const Colormap& cm = colormap(centred ? spec.diverging : spec.sequential);
      const float x0 = left + float(c) * col_w + ytick_w, x1 = x0 + P;
      sc.items.push_back(SceneText{(x0 + x1) / 2, ry + fs_label, fs_label, panel_title(spec, r, p.layer),
                                   Anchor::middle, false, false, kBlack});
      if (const std::string metric = metric_text(cell); !metric.empty())
        sc.items.push_back(SceneText{(x0 + x1) / 2, ry + fs_label + 4 + fs_metric, fs_metric, metric, Anchor::middle,
                                     false, false, kBlack});
      SceneHeatmap hm{x0, hy0, x1, hy1, p.n, {}, "r" + std::to_string(r) + "-c" + std::to_string(c)};
      hm.cells.reserve(p.value.size());
      for (std::size_t e = 0; e < p.value.size(); ++e)
        hm.cells.push_back(e < p.noise.size() && p.noise[e] ? kNoise : from_map(cm, p.value[e], p.lo, p.hi));
      sc.items.push_back(std::move(hm));
      sc.items.push_back(SceneRect{x0, hy0, x1, hy1, {0, 0, 0, 0}, kGrey, 0.5f});
      // Index ticks (0-based, as in the papers' heatmaps).
      const int step = index_step(p.n);
      const float cell_size = P / float(p.n);
      for (int t = 0; t < p.n; t += step) {
        const float pos = (float(t) + 0.5f) * cell_size;
        sc.items.push_back(
            SceneText{x0 + pos, hy1 + fs_tick + 2, fs_tick, std::to_string(t), Anchor::middle, false, false, kBlack});
        sc.items.push_back(SceneText{x0 - 3, hy0 + pos + fs_tick * 0.35f, fs_tick, std::to_string(t), Anchor::end,
                                     false, false, kBlack});
      }
      if (c == 0)
        sc.items.push_back(
            SceneText{x0 - ytick_w - 3, (hy0 + hy1) / 2, fs_metric, "query i", Anchor::middle, true, false, kGrey});
      if (r + 1 == rows)
        sc.items.push_back(SceneText{(x0 + x1) / 2, hy1 + fs_tick + 4 + fs_metric + 2, fs_metric, "key j",
                                     Anchor::middle, false, false, kGrey});
      if (cell.available) add_colorbar(sc, x1 + 5, hy0, x1 + 12, hy1, cm, p.lo, p.hi, p.below, p.above, fs_tick);
    }
  }
  float note_y = sc.height - 4 - float(note.size() - (note.empty() ? 0 : 1)) * (fs_tick + 4);
  for (const std::string& line : note) {
    sc.items.push_back(SceneText{8, note_y, fs_tick, line, Anchor::start, false, false, kGrey});
    note_y += fs_tick + 4;
  }
  return sc;
}

// The h(j) plots, one per column group: Eq. 42's lines and the simulated dots with their SE. Each plot's legend
// goes into a corner where it covers no data (points, and the lines every few units), else into a column right of
// the plot that widens the page (issue 48: legends covered data).
Scene layout_curves(const FigureData& data) {
  Scene sc;
  const float fs_title = 14, fs_label = 11, fs_tick = 9, fs_caption = fs_tick * 0.9f;
  const float W = 340, H = 240, ml = 56, mr = 14, mt = 26, mb = 40;
  const std::size_t groups = data.curves.size();
  const std::string caption = "lines: Eq. 42;  dots: simulated 1/||x_j||, scaled at j = 1";
  float top = 8;
  if (!data.spec.title.empty()) top += fs_title + 8;

  struct Plot {
    double xlo = 1, xhi = 1, ylo = INFINITY, yhi = -INFINITY;
    float legend_w = 0, legend_h = 0;
    bool outside = false;
    float lx = 0, ly = 0;  // the legend's top left, relative to the plot's (px0, py0)
  };
  std::vector<Plot> plots(groups);
  for (std::size_t g = 0; g < groups; ++g) {
    Plot& pl = plots[g];
    const auto& curves = data.curves[g];
    for (const auto& c : curves) {
      if (!c.j.empty()) pl.xhi = std::max(pl.xhi, c.j.back());
      for (std::size_t k = 0; k < c.theory.size(); ++k)
        for (double v : {c.theory[k], k < c.simulated.size() ? c.simulated[k] : NAN})
          if (std::isfinite(v)) pl.ylo = std::min(pl.ylo, v), pl.yhi = std::max(pl.yhi, v);
    }
    if (!std::isfinite(pl.ylo)) pl.ylo = 0, pl.yhi = 1;
    const double pad = std::max(1e-9, (pl.yhi - pl.ylo) * 0.06);
    pl.ylo -= pad, pl.yhi += pad, pl.xlo -= 0.4, pl.xhi += 0.4;
    // The legend's size from its texts; then the corner with the least ink, in plot coordinates.
    float label_w = text_width(caption, fs_caption);
    for (const auto& c : curves) label_w = std::max(label_w, 22 + text_width(c.label, fs_tick));
    pl.legend_w = label_w + 8;
    pl.legend_h = float(curves.size() + 1) * (fs_tick + 4) + 8;
    auto X = [&](double x) { return float((x - pl.xlo) / (pl.xhi - pl.xlo)) * W; };
    auto Y = [&](double y) { return H - float((y - pl.ylo) / (pl.yhi - pl.ylo)) * H; };
    std::vector<std::array<float, 2>> ink;
    for (const auto& c : curves)
      for (std::size_t m = 0; m < c.j.size(); ++m) {
        if (m < c.simulated.size() && std::isfinite(c.simulated[m])) ink.push_back({X(c.j[m]), Y(c.simulated[m])});
        if (m >= c.theory.size() || !std::isfinite(c.theory[m])) continue;
        ink.push_back({X(c.j[m]), Y(c.theory[m])});
        if (m + 1 < c.j.size() && m + 1 < c.theory.size() && std::isfinite(c.theory[m + 1]))
          for (int t = 1; t < 12; ++t) {
            const double u = t / 12.0;
            ink.push_back(
                {X(c.j[m] + u * (c.j[m + 1] - c.j[m])), Y(c.theory[m] + u * (c.theory[m + 1] - c.theory[m]))});
          }
      }
    std::size_t best = SIZE_MAX;
    for (const auto& [cx, cy] : {std::pair{6.0f, 6.0f}, std::pair{W - pl.legend_w - 6, H - pl.legend_h - 6},
                                 std::pair{W - pl.legend_w - 6, 6.0f}, std::pair{6.0f, H - pl.legend_h - 6}}) {
      const float x0 = cx, y0 = cy;  // names, not structured bindings: clang 14 (the web build) cannot capture one
      const std::size_t inside = std::size_t(std::count_if(ink.begin(), ink.end(), [&](const auto& q) {
        return q[0] >= x0 - 4 && q[0] <= x0 + pl.legend_w + 4 && q[1] >= y0 - 4 && q[1] <= y0 + pl.legend_h + 4;
      }));
      if (inside < best) best = inside, pl.lx = cx, pl.ly = cy;
    }
    if (best > 0 || pl.legend_w > W - 12) pl.outside = true, pl.lx = W + mr, pl.ly = 0;
  }
  std::vector<float> column_x(groups + 1, 4);
  for (std::size_t g = 0; g < groups; ++g)
    column_x[g + 1] = column_x[g] + ml + W + mr + (plots[g].outside ? plots[g].legend_w + mr : 0);
  sc.width = std::max(column_x[groups] + 4, text_width(data.spec.title, fs_title, true) + 16);
  sc.height = top + mt + H + mb;
  if (!data.spec.title.empty())
    sc.items.push_back(
        SceneText{sc.width / 2, 8 + fs_title, fs_title, data.spec.title, Anchor::middle, false, true, kBlack});
  for (std::size_t g = 0; g < groups; ++g) {
    const Plot& pl = plots[g];
    const auto& curves = data.curves[g];
    const float px0 = column_x[g] + ml, py0 = top + mt, px1 = px0 + W, py1 = py0 + H;
    auto X = [&](double x) { return px0 + float((x - pl.xlo) / (pl.xhi - pl.xlo)) * W; };
    auto Y = [&](double y) { return py1 - float((y - pl.ylo) / (pl.yhi - pl.ylo)) * H; };
    if (!data.group_titles[g].empty())
      sc.items.push_back(SceneText{(px0 + px1) / 2, top + fs_label + 4, fs_label, data.group_titles[g], Anchor::middle,
                                   false, true, kBlack});
    sc.items.push_back(SceneRect{px0, py0, px1, py1, {0, 0, 0, 0}, kBlack, 0.8f});
    const auto yt = nice_ticks(pl.ylo, pl.yhi, 5);
    const double ystep = yt.size() > 1 ? yt[1] - yt[0] : 1;
    for (double t : yt) {
      sc.items.push_back(ScenePath{{{px0, Y(t)}, {px1, Y(t)}}, {0.85f, 0.85f, 0.85f, 1}, 0.5f, false});
      sc.items.push_back(
          SceneText{px0 - 4, Y(t) + fs_tick * 0.35f, fs_tick, tick_text(t, ystep), Anchor::end, false, false, kBlack});
    }
    for (double t = 1; t <= pl.xhi; t += (pl.xhi > 24 ? 5 : 1))
      sc.items.push_back(
          SceneText{X(t), py1 + fs_tick + 4, fs_tick, tick_text(t, 1), Anchor::middle, false, false, kBlack});
    sc.items.push_back(SceneText{(px0 + px1) / 2, py1 + fs_tick + 6 + fs_label + 2, fs_label,
                                 "key index j (1-based, as in the paper)", Anchor::middle, false, false, kBlack});
    sc.items.push_back(
        SceneText{px0 - ml + 4 + fs_label, (py0 + py1) / 2, fs_label, "h(j)", Anchor::middle, true, false, kBlack});
    const float lx = px0 + pl.lx, ly = py0 + pl.ly;
    float legend_y = ly + fs_tick + 4;
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
      sc.items.push_back(ScenePath{{{lx + 2, legend_y - 3}, {lx + 20, legend_y - 3}}, col, 1.8f, false});
      sc.items.push_back(SceneText{lx + 24, legend_y, fs_tick, c.label, Anchor::start, false, false, kBlack});
      legend_y += fs_tick + 4;
    }
    sc.items.push_back(SceneText{lx + 2, legend_y + 2, fs_caption, caption, Anchor::start, false, false, kGrey});
  }
  return sc;
}

}  // namespace

Scene layout_figure(const FigureData& data) {
  switch (data.spec.kind) {
    case FigureKind::h_of_j: return layout_curves(data);
    case FigureKind::table: return layout_table(data);  // figure_table.cpp
    case FigureKind::layer_lines:
    case FigureKind::norms:
    case FigureKind::leakage_bins:
    case FigureKind::sample_histograms:
    case FigureKind::train_curves:
    case FigureKind::probes: return layout_figure_lines(data);  // figure_lines.cpp
    case FigureKind::heatmaps: break;
  }
  return layout_heatmaps(data);
}

}  // namespace maskscope::gui
