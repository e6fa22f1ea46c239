// The figure kind table (Zuo et al. Tables 4-6) as a Scene, in pixels at 1x.
#include <algorithm>
#include <cstdio>

#include "common/figure/figure_render.hpp"
#include "common/figure/scene_parts.hpp"
#include "common/format.hpp"

namespace maskscope::gui {

namespace {

// A table cell's text: the value with its SE, "..." before samples, "n/a" without a value.
std::string table_cell_text(const FigureCell& cell) {
  if (!cell.available) return "...";
  if (!std::isfinite(cell.metric)) return "n/a";
  if (std::max(std::fabs(cell.metric), cell.metric_se) < 1e-3) {
    char buf[48];  // tiny values (dR^2 near 0): two significant digits each, not a row of zeros
    std::snprintf(buf, sizeof buf, "%.2g \u00b1 %.2g", cell.metric, cell.metric_se);
    return buf;
  }
  return value_with_se(cell.metric, cell.metric_se);
}

// Rows x (groups x layers) of numbers with their SE, as the papers' tables (Zuo et al. Tables 4-6). Every column is
// as wide as its widest text (header, cells, its group's title shared out) plus a gap, so that no two numbers run
// together; the page is as wide as the title; the caption wraps to the page.
}  // namespace

Scene layout_table(const FigureData& data) {
  Scene sc;
  const FigureSpec& spec = data.spec;
  const float fs_title = 14, fs_label = 11, fs_cell = 10.5f, fs_caption = fs_cell * 0.9f, gap = 18;
  const std::size_t rows = data.cells.size();
  const std::size_t cols = rows ? data.cells[0].size() : spec.layers.size() * data.group_titles.size();
  const std::size_t per_group = std::max<std::size_t>(1, spec.layers.size());
  const std::string corner = "configuration [metric]";
  auto row_text = [&](std::size_t r) {
    const std::string metric = data.cells[r].empty() ? "" : data.cells[r][0].metric_name;
    return data.row_labels[r] + (metric.empty() ? "" : "  [" + metric + "]");
  };
  auto head_text = [&](std::size_t c) {
    const int layer = spec.layers[c % per_group];
    return layer == 0 ? std::string("embeddings") : "layer " + std::to_string(layer);
  };
  float label_w = text_width(corner, fs_label, true);
  for (std::size_t r = 0; r < rows; ++r) label_w = std::max(label_w, text_width(row_text(r), fs_label));
  std::vector<float> col_w(cols, 0);
  for (std::size_t c = 0; c < cols; ++c) {
    col_w[c] = text_width(head_text(c), fs_label, true);
    for (std::size_t r = 0; r < rows; ++r)
      if (c < data.cells[r].size())
        col_w[c] = std::max(col_w[c], text_width(table_cell_text(data.cells[r][c]), fs_cell));
    col_w[c] += gap;
  }
  // A group title wider than its columns widens them evenly.
  for (std::size_t g = 0; g < data.group_titles.size(); ++g) {
    const std::size_t c0 = g * per_group, c1 = std::min(cols, c0 + per_group);
    float w = 0;
    for (std::size_t c = c0; c < c1; ++c) w += col_w[c];
    const float need = text_width(data.group_titles[g], fs_label, true) + gap;
    if (need > w && c1 > c0)
      for (std::size_t c = c0; c < c1; ++c) col_w[c] += (need - w) / float(c1 - c0);
  }
  std::vector<float> col_x(cols + 1, 0);  // column edges, from the labels' right end
  const float left = 8 + label_w + gap / 2;
  col_x[0] = left;
  for (std::size_t c = 0; c < cols; ++c) col_x[c + 1] = col_x[c] + col_w[c];
  const float row_h = fs_cell + 9;
  float top = 8;
  if (!spec.title.empty()) top += fs_title + 10;
  const bool group_titles =
      std::any_of(data.group_titles.begin(), data.group_titles.end(), [](const std::string& t) { return !t.empty(); });
  if (group_titles) top += fs_label + 8;
  sc.width = std::max({240.0f, col_x[cols] + 8, text_width(spec.title, fs_title, true) + 16});
  const std::string caption =
      spec.table_metric == TableMetric::automatic
          ? "mean \u00b1 one standard error over samples; RP: recency probability, adj: adjacency score, norm adj: "
            "adjacency of the norms (ties 1/2)"
          : "dR^2 \u00b1 one standard error: R^2 of offset means + query position minus R^2 of offset means, pooled "
            "over samples (Ruscio et al. Eq. 4)";
  const std::vector<std::string> caption_lines = wrap_words(caption, fs_caption, sc.width - 16);
  const float bottom = top + row_h * float(rows + 1) + 4;
  sc.height = bottom + float(caption_lines.size()) * (fs_caption + 4) + 8;
  if (!spec.title.empty())
    sc.items.push_back(
        SceneText{sc.width / 2, 8 + fs_title, fs_title, spec.title, Anchor::middle, false, true, kBlack});
  if (group_titles)
    for (std::size_t g = 0; g < data.group_titles.size(); ++g) {
      const float x0 = col_x[std::min(cols, g * per_group)], x1 = col_x[std::min(cols, (g + 1) * per_group)];
      sc.items.push_back(
          SceneText{(x0 + x1) / 2, top - 6, fs_label, data.group_titles[g], Anchor::middle, false, true, kBlack});
    }
  // Header: the layers (0 = the embeddings, as Zuo et al.'s first column).
  const float header_y = top + fs_label;
  sc.items.push_back(SceneText{8, header_y, fs_label, corner, Anchor::start, false, true, kBlack});
  for (std::size_t c = 0; c < cols; ++c)
    sc.items.push_back(SceneText{(col_x[c] + col_x[c + 1]) / 2, header_y, fs_label, head_text(c), Anchor::middle, false,
                                 true, kBlack});
  const float rule_y = top + row_h - 2;
  sc.items.push_back(ScenePath{{{8, rule_y}, {sc.width - 8, rule_y}}, kBlack, 0.8f, false});
  for (std::size_t r = 0; r < rows; ++r) {
    const float y = top + row_h * float(r + 1) + fs_cell;
    sc.items.push_back(SceneText{8, y, fs_label, row_text(r), Anchor::start, false, false, kBlack});
    for (std::size_t c = 0; c < data.cells[r].size() && c < cols; ++c) {
      const FigureCell& cell = data.cells[r][c];
      sc.items.push_back(SceneText{(col_x[c] + col_x[c + 1]) / 2, y, fs_cell, table_cell_text(cell), Anchor::middle,
                                   false, false, cell.available ? kBlack : kGrey});
    }
  }
  sc.items.push_back(ScenePath{{{8, bottom}, {sc.width - 8, bottom}}, kBlack, 0.8f, false});
  float y = bottom + 4;
  for (const std::string& line : caption_lines) {
    y += fs_caption + 4;
    sc.items.push_back(SceneText{8, y, fs_caption, line, Anchor::start, false, false, kGrey});
  }
  return sc;
}

}  // namespace maskscope::gui
