// Probe and histogram charts, pages and CSV (analysis_charts.hpp).
#include "common/figure/analysis_charts.hpp"

#include <algorithm>
#include <cstdio>

#include "common/figure/scene_parts.hpp"

namespace maskscope::gui {

namespace {

std::string full(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

std::vector<const LayerStats*> layers_of(const Snapshot& snap) {
  std::vector<const LayerStats*> rows;
  for (const auto& e : snap.embeddings) rows.push_back(&e);
  for (const auto& l : snap.layers) rows.push_back(&l);
  return rows;
}

const char* kFeatureNames[3] = {"X", "Var_X", "Sim_X"};

}  // namespace

std::vector<LineChart> probe_charts(const ProbeTable& t) {
  std::vector<LineChart> charts(2);
  charts[0].title = "(a) Pearson-R";
  charts[1].title = "(b) NRMSE";
  for (LineChart& c : charts) c.x.label = "layer (0 = embeddings)";
  charts[0].y.label = "Pearson-R";
  charts[1].y.label = "RMSE / n";
  for (ProbeFeature f : kProbeFeatures) {
    ChartSeries r, e;
    r.label = e.label = kFeatureNames[int(f)];
    for (const ProbeLayer& l : t.layers)
      if (const auto& s = l.score[std::size_t(f)]) {
        r.x.push_back(l.layer);
        r.y.push_back(s->pearson_r);
        r.se.push_back(s->pearson_r_se);
        e.x.push_back(l.layer);
        e.y.push_back(s->nrmse);
        e.se.push_back(s->nrmse_se);
      }
    if (r.x.empty()) continue;
    charts[0].series.push_back(r);
    charts[1].series.push_back(e);
  }
  return charts;
}

std::vector<LineChart> histogram_charts(const Snapshot& snap) {
  std::vector<LineChart> charts;
  for (const LayerStats* l : layers_of(snap)) {
    const LayerHistograms& h = l->histograms;
    if (h.forward_difference.empty()) continue;
    LineChart c;
    char title[96];
    std::snprintf(title, sizeof title, "layer %d: > 0 %.3f (a,b vs a,c), %.3f (c,b vs c,a)", l->layer,
                  h.forward_above.mean, h.backward_above.mean);
    c.title = title;
    c.x.label = "cosine difference";
    c.y.label = "share of triples";
    const std::size_t B = h.forward_difference.size();
    ChartSeries f, b, zero;
    f.label = "sim(a,b) - sim(a,c)";
    b.label = "sim(c,b) - sim(c,a)";
    f.markers = b.markers = false;
    double top = 0;
    for (std::size_t k = 0; k < B; ++k) {
      const double x = -1.0 + 2.0 * (double(k) + 0.5) / double(B);
      f.x.push_back(x);
      f.y.push_back(h.forward_difference[k]);
      b.x.push_back(x);
      b.y.push_back(h.backward_difference[k]);
      top = std::max({top, h.forward_difference[k], h.backward_difference[k]});
    }
    zero.label = "0";
    zero.x = {0.0, 0.0};
    zero.y = {0.0, top};
    zero.markers = false;
    zero.dashed = true;
    zero.color = Rgba{0.8f, 0.15f, 0.15f, 1};
    c.series = {f, b, zero};
    charts.push_back(c);
  }
  return charts;
}

Scene charts_page(const std::string& title, const std::vector<LineChart>& charts, std::size_t columns) {
  const float fs_title = 14, gap = 12, W = 420, H = 300;
  const std::size_t cols = std::max<std::size_t>(1, std::min(columns, charts.size()));
  const std::size_t rows = std::max<std::size_t>(1, (charts.size() + cols - 1) / cols);
  Scene sc;
  sc.width = float(cols) * (W + gap) - gap + 16;
  const float top = 8 + fs_title + 10;
  sc.height = top + float(rows) * (H + gap) + 8;
  sc.items.push_back(SceneText{sc.width / 2, 8 + fs_title, fs_title, title, Anchor::middle, false, true, kBlack});
  for (std::size_t k = 0; k < charts.size(); ++k) {
    const float x0 = 8 + float(k % cols) * (W + gap), y0 = top + float(k / cols) * (H + gap);
    layout_line_chart(charts[k], x0, y0, x0 + W, y0 + H, sc);
  }
  return sc;
}

std::string probes_csv(const ProbeTable& t) {
  std::string out = "layer,feature,pearson_r,pearson_r_se,nrmse,nrmse_se\n";
  for (const ProbeLayer& l : t.layers)
    for (ProbeFeature f : kProbeFeatures)
      if (const auto& s = l.score[std::size_t(f)])
        out += std::to_string(l.layer) + "," + std::string(to_string(f)) + "," + full(s->pearson_r) + "," +
               full(s->pearson_r_se) + "," + full(s->nrmse) + "," + full(s->nrmse_se) + "\n";
  return out;
}

std::string histograms_csv(const Snapshot& snap) {
  std::string out = "layer,histogram,bin_from,bin_to,share\n";
  for (const LayerStats* l : layers_of(snap)) {
    const LayerHistograms& h = l->histograms;
    auto rows = [&](const char* name, const std::vector<double>& v, double lo, double hi) {
      for (std::size_t k = 0; k < v.size(); ++k)
        out += std::to_string(l->layer) + "," + name + "," + full(lo + (hi - lo) * double(k) / double(v.size())) + "," +
               full(lo + (hi - lo) * double(k + 1) / double(v.size())) + "," + full(v[k]) + "\n";
    };
    rows("sim_ab_minus_sim_ac", h.forward_difference, -1, 1);
    rows("sim_cb_minus_sim_ca", h.backward_difference, -1, 1);
    rows("adjacency_per_sample", h.adjacency, 0, 1);
    rows("rp_per_sample", h.rp, 0, 1);
  }
  return out;
}

ExportResult export_charts(const std::string& dir, const std::string& stem, const Scene& page, const std::string& csv,
                           const ExportOptions& options) {
  ExportResult res;
  ExportFolder folder(dir, res);
  folder.png(stem + ".png", page, options);
  folder.text(stem + ".svg", scene_to_svg(page));
  folder.text(stem + ".csv", csv);
  res.ok = res.error.empty();
  return res;
}

}  // namespace maskscope::gui
