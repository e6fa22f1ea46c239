// The line kinds of a figure (layer_lines, norms, leakage_bins) as line charts (chart.hpp), built from the
// figure's cells: the one set of numbers that the window's preview, the PNG / SVG and lines.csv all show.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "common/figure/chart.hpp"
#include "common/figure/figure.hpp"

namespace maskscope::gui {

// Where a series' points come from: the figure row (displayed index), the column group, and per point its
// layer (0 = the embeddings) and, for leakage bins, the bin [from, to) of 0-based query positions.
struct LineSeriesSource {
  std::size_t row = 0, group = 0;
  std::vector<int> layers;               // one per point
  std::vector<std::array<int, 2>> bins;  // leakage_bins: one per point; otherwise empty
};

struct FigureLines {
  std::vector<LineChart> charts;                       // in reading order, `columns` to a line of the page
  std::vector<std::vector<LineSeriesSource>> sources;  // [chart][series]
  std::size_t columns = 1;
  std::string note;  // one line under the charts: what the bars and the x values are
};

// The charts of a line-kind figure (empty for the other kinds):
//   layer_lines: one chart per column group, one line per row: the row's metric (RP for S and A, adjacency for
//     cos, norm adjacency for ||x||, or dR^2 of S / of A by spec.table_metric) at x = layer, +-1 SE bars,
//     and a dashed 0.5 line (no positional order) for the RP-like metrics (Zuo et al. Fig. 3 and 7).
//   norms: one chart per row and group, one line per chosen layer: mean ||x_i|| +-1 SE at x = position i
//     (0-based, as the heatmaps' indices; Zuo et al. Fig. 11).
//   leakage_bins: dR^2 per query-position bin at the bin's geometric centre on a log x axis (Ruscio et al.
//     Fig. 1): with one row, one chart per group and one line per layer; with several rows, one chart per
//     group and layer and one line per row (Fig. 1's causal against bidirectional). Bins carry no SE.
FigureLines figure_lines(const FigureData& data);

// x of a query-position bin [from, to) on the log axis: the geometric centre of its edges, sqrt(from * to),
// with the 0 edge of the first bin taken as 1 (a log axis has no 0): [0,5) -> 2.24, [5,12) -> 7.75.
double bin_centre(const LeakageBin& bin);

// The page: the figure's title, the charts in a grid, the note.
Scene layout_figure_lines(const FigureData& data);

// One line per point of every series: chart,row,label,group,layer[,bin_from,bin_to],x,y,se (full precision,
// "nan" where a run has no samples yet; se empty where the kind has none). Written as lines.csv.
std::string lines_csv(const FigureData& data);

}  // namespace maskscope::gui
