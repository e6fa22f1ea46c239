// Zuo et al.'s position probes (Fig. 8) and cosine-difference histograms (Fig. 2) as line charts, a page
// (Scene) and CSV, so the Probes and Histograms tabs export PNG, SVG and CSV through the figure back ends.
#pragma once

#include <string>
#include <vector>

#include "core/stats/position_probe.hpp"
#include "core/stats/snapshot.hpp"
#include "common/figure/chart.hpp"
#include "common/figure/figure.hpp"

namespace maskscope::gui {

// (a) Pearson-R and (b) NRMSE against layer (0 = the embeddings), one line per feature, +-1 SE bars.
std::vector<LineChart> probe_charts(const ProbeTable& t);
// One chart per layer (0 = the embeddings): the shares of sim(a, b) - sim(a, c) and sim(c, b) - sim(c, a)
// at the bin centres over [-1, 1], 0 marked by a vertical line; empty without histograms.
std::vector<LineChart> histogram_charts(const Snapshot& snap);

// The charts in a grid of `columns` under a title, on a white page.
Scene charts_page(const std::string& title, const std::vector<LineChart>& charts, std::size_t columns);

// layer,feature,pearson_r,pearson_r_se,nrmse,nrmse_se (full precision).
std::string probes_csv(const ProbeTable& t);
// layer,difference,bin_from,bin_to,share (both differences), then layer,adjacency_per_sample,... rows.
std::string histograms_csv(const Snapshot& snap);

// Writes `stem`.png, `stem`.svg and `stem`.csv into `dir` (ExportFolder).
ExportResult export_charts(const std::string& dir, const std::string& stem, const Scene& page, const std::string& csv,
                           const ExportOptions& options);

}  // namespace maskscope::gui
