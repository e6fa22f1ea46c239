// Figure layout: the heatmap grid and the h(j) plots as a Scene, in pixels at 1x.
#include "common/figure/figure_render.hpp"

#include <algorithm>
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
  const bool group_titles =
      std::any_of(data.group_titles.begin(), data.group_titles.end(), [](const std::string& t) { return !t.empty(); });
  if (group_titles) top += fs_label + 10;
  sc.width = left + float(cols) * col_w + 6;
  sc.height = top + float(rows) * (row_h + 8) + fs_label + 10;
  sc.width = std::max(sc.width, 200.0f);

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
      // Title: the layer, and what the map is when it is not the raw one.
      std::string title = p.layer == 0 ? std::string("Embeddings") : "Layer " + std::to_string(p.layer);
      const Quantity q = spec.rows[row_index].quantity;
      if (q != Quantity::score) title += std::string("  ") + std::string(symbol(q));
      if (spec.difference) title += "  (difference)";
      else if (spec.rows[row_index].transform == Transform::diagonal_normalized) title += "  (diag.-normalized)";
      sc.items.push_back(
          SceneText{(x0 + x1) / 2, ry + fs_label, fs_label, title, Anchor::middle, false, false, kBlack});
      if (!cell.metric_name.empty() && std::isfinite(cell.metric))
        sc.items.push_back(SceneText{(x0 + x1) / 2, ry + fs_label + 4 + fs_metric, fs_metric,
                                     cell.metric_name + " = " + value_with_se(cell.metric, cell.metric_se),
                                     Anchor::middle, false, false, kBlack});
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
    sc.items.push_back(
        SceneText{sc.width / 2, 8 + fs_title, fs_title, data.spec.title, Anchor::middle, false, true, kBlack});
  for (std::size_t g = 0; g < groups; ++g) {
    const auto& curves = data.curves[g];
    const float px0 = 4 + float(g) * (ml + W + mr) + ml, py0 = top + mt, px1 = px0 + W, py1 = py0 + H;
    double xlo = 1, xhi = 1, ylo = INFINITY, yhi = -INFINITY;
    for (const auto& c : curves) {
      if (!c.j.empty()) xhi = std::max(xhi, c.j.back());
      for (std::size_t k = 0; k < c.theory.size(); ++k) {
        for (double v : {c.theory[k], k < c.simulated.size() ? c.simulated[k] : NAN})
          if (std::isfinite(v)) {
            ylo = std::min(ylo, v);
            yhi = std::max(yhi, v);
          }
      }
    }
    if (!std::isfinite(ylo)) {
      ylo = 0;
      yhi = 1;
    }
    const double pad = std::max(1e-9, (yhi - ylo) * 0.06);
    ylo -= pad;
    yhi += pad;
    xlo -= 0.4;
    xhi += 0.4;
    auto X = [&](double x) { return px0 + float((x - xlo) / (xhi - xlo)) * W; };
    auto Y = [&](double y) { return py1 - float((y - ylo) / (yhi - ylo)) * H; };
    if (!data.group_titles[g].empty())
      sc.items.push_back(SceneText{(px0 + px1) / 2, top + fs_label + 4, fs_label, data.group_titles[g], Anchor::middle,
                                   false, true, kBlack});
    sc.items.push_back(SceneRect{px0, py0, px1, py1, {0, 0, 0, 0}, kBlack, 0.8f});
    const auto yt = nice_ticks(ylo, yhi, 5);
    const double ystep = yt.size() > 1 ? yt[1] - yt[0] : 1;
    for (double t : yt) {
      sc.items.push_back(ScenePath{{{px0, Y(t)}, {px1, Y(t)}}, {0.85f, 0.85f, 0.85f, 1}, 0.5f, false});
      sc.items.push_back(
          SceneText{px0 - 4, Y(t) + fs_tick * 0.35f, fs_tick, tick_text(t, ystep), Anchor::end, false, false, kBlack});
    }
    for (double t = 1; t <= xhi; t += (xhi > 24 ? 5 : 1))
      sc.items.push_back(
          SceneText{X(t), py1 + fs_tick + 4, fs_tick, tick_text(t, 1), Anchor::middle, false, false, kBlack});
    sc.items.push_back(SceneText{(px0 + px1) / 2, py1 + fs_tick + 6 + fs_label + 2, fs_label,
                                 "key index j (1-based, as in the paper)", Anchor::middle, false, false, kBlack});
    sc.items.push_back(
        SceneText{px0 - ml + 4 + fs_label, (py0 + py1) / 2, fs_label, "h(j)", Anchor::middle, true, false, kBlack});
    // The legend goes into the corner of the plot that covers the fewest data points.
    const float legend_w = 210, legend_h = float(curves.size() + 1) * (fs_tick + 4) + 8;
    float lx = px0 + 6, ly = py0 + 6;
    std::size_t best = SIZE_MAX;
    for (const auto& [cx, cy] : {std::pair{px0 + 6, py0 + 6}, std::pair{px1 - legend_w - 6, py1 - legend_h - 6},
                                 std::pair{px1 - legend_w - 6, py0 + 6}, std::pair{px0 + 6, py1 - legend_h - 6}}) {
      std::size_t inside = 0;
      for (const auto& c : curves)
        for (std::size_t m = 0; m < c.j.size(); ++m)
          for (double v : {c.theory[m], m < c.simulated.size() ? c.simulated[m] : NAN}) {
            if (!std::isfinite(v)) continue;
            const float x = X(c.j[m]), y = Y(v);
            inside += x >= cx - 4 && x <= cx + legend_w + 4 && y >= cy - 4 && y <= cy + legend_h + 4;
          }
      if (inside < best) best = inside, lx = cx, ly = cy;
    }
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
    sc.items.push_back(SceneText{lx + 2, legend_y + 2, fs_tick * 0.9f,
                                 "lines: Eq. 42;  dots: simulated 1/||x_j||, scaled at j = 1", Anchor::start, false,
                                 false, kGrey});
  }
  return sc;
}

// Rows x (groups x layers) of numbers with their SE, as the papers' tables (Zuo et al. Tables 4-6).
Scene layout_table(const FigureData& data) {
  Scene sc;
  const FigureSpec& spec = data.spec;
  const float fs_title = 14, fs_label = 11, fs_cell = 10.5f;
  const std::size_t rows = data.cells.size();
  const std::size_t cols = rows ? data.cells[0].size() : spec.layers.size() * data.group_titles.size();
  const std::size_t per_group = std::max<std::size_t>(1, spec.layers.size());
  const std::string corner = "configuration [metric]";
  float label_w = fs_label * 0.62f * float(corner.size()) + 12;
  for (std::size_t r = 0; r < rows; ++r) {
    const std::string metric = data.cells[r].empty() ? "" : data.cells[r][0].metric_name;
    label_w = std::max(label_w, fs_label * 0.58f * float(data.row_labels[r].size() + metric.size() + 4));
  }
  const float col_w = 112, row_h = fs_cell + 9;
  float top = 8;
  if (!spec.title.empty()) top += fs_title + 10;
  const bool group_titles =
      std::any_of(data.group_titles.begin(), data.group_titles.end(), [](const std::string& t) { return !t.empty(); });
  if (group_titles) top += fs_label + 8;
  const float left = 8 + label_w;
  sc.width = std::max(240.0f, left + float(cols) * col_w + 8);
  sc.height = top + row_h * float(rows + 1) + fs_cell + 16;
  if (!spec.title.empty())
    sc.items.push_back(
        SceneText{sc.width / 2, 8 + fs_title, fs_title, spec.title, Anchor::middle, false, true, kBlack});
  if (group_titles)
    for (std::size_t g = 0; g < data.group_titles.size(); ++g) {
      const float x0 = left + float(g * per_group) * col_w, x1 = x0 + float(per_group) * col_w;
      sc.items.push_back(
          SceneText{(x0 + x1) / 2, top - 6, fs_label, data.group_titles[g], Anchor::middle, false, true, kBlack});
    }
  // Header: the layers (0 = the embeddings, as Zuo et al.'s first column).
  const float header_y = top + fs_label;
  sc.items.push_back(SceneText{8, header_y, fs_label, corner, Anchor::start, false, true, kBlack});
  for (std::size_t c = 0; c < cols; ++c) {
    const int layer = spec.layers[c % per_group];
    const std::string head = layer == 0 ? "embeddings" : "layer " + std::to_string(layer);
    sc.items.push_back(
        SceneText{left + (float(c) + 0.5f) * col_w, header_y, fs_label, head, Anchor::middle, false, true, kBlack});
  }
  const float rule_y = top + row_h - 2;
  sc.items.push_back(ScenePath{{{8, rule_y}, {sc.width - 8, rule_y}}, kBlack, 0.8f, false});
  for (std::size_t r = 0; r < rows; ++r) {
    const float y = top + row_h * float(r + 1) + fs_cell;
    const std::string metric = data.cells[r].empty() ? "" : data.cells[r][0].metric_name;
    sc.items.push_back(SceneText{8, y, fs_label, data.row_labels[r] + (metric.empty() ? "" : "  [" + metric + "]"),
                                 Anchor::start, false, false, kBlack});
    for (std::size_t c = 0; c < data.cells[r].size(); ++c) {
      const FigureCell& cell = data.cells[r][c];
      std::string text = !cell.available              ? "..."
                         : std::isfinite(cell.metric) ? value_with_se(cell.metric, cell.metric_se)
                                                      : "n/a";
      if (cell.available && std::isfinite(cell.metric) && std::max(std::fabs(cell.metric), cell.metric_se) < 1e-3) {
        char buf[48];  // tiny values (dR^2 near 0): two significant digits each, not a row of zeros
        std::snprintf(buf, sizeof buf, "%.2g \u00b1 %.2g", cell.metric, cell.metric_se);
        text = buf;
      }
      sc.items.push_back(SceneText{left + (float(c) + 0.5f) * col_w, y, fs_cell, text, Anchor::middle, false, false,
                                   cell.available ? kBlack : kGrey});
    }
  }
  const float bottom = top + row_h * float(rows + 1) + 4;
  sc.items.push_back(ScenePath{{{8, bottom}, {sc.width - 8, bottom}}, kBlack, 0.8f, false});
  sc.items.push_back(
      SceneText{8, bottom + fs_cell + 4, fs_cell * 0.9f,
                spec.table_metric == TableMetric::automatic
                    ? "mean \u00b1 one standard error over samples; RP: recency probability, adj: adjacency "
                      "score, norm adj: adjacency of the norms (ties 1/2)"
                    : "dR^2 \u00b1 one standard error: R^2 of offset means + query position minus R^2 of "
                      "offset means, pooled over samples (Ruscio et al. Eq. 4)",
                Anchor::start, false, false, kGrey});
  return sc;
}

}  // namespace

Scene layout_figure(const FigureData& data) {
  switch (data.spec.kind) {
    case FigureKind::h_of_j: return layout_curves(data);
    case FigureKind::table: return layout_table(data);
    case FigureKind::layer_lines:
    case FigureKind::norms:
    case FigureKind::leakage_bins:
    case FigureKind::sample_histograms:
    case FigureKind::train_curves: return layout_figure_lines(data);  // figure_lines.cpp
    case FigureKind::heatmaps: break;
  }
  return layout_heatmaps(data);
}

}  // namespace maskscope::gui
