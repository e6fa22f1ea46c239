// Line-kind figures: the figure's cells (build_figure in figure_spec.cpp) turned into line charts, and the
// page that lays them out in a grid through the chart layout (chart.hpp) the Sweep tab uses too.
#include "common/figure/figure_lines.hpp"

#include "common/train/training_session.hpp"
#include "core/model/input_file.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/figure/chart_axis.hpp"
#include "common/figure/scene_parts.hpp"

namespace maskscope::gui {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string layer_name(int layer) { return layer == 0 ? "embeddings" : "layer " + std::to_string(layer); }

// The axis title of a cell's metric name (FigureCell::metric_name).
std::string metric_title(const std::string& name) {
  if (name == "RP") return "recency probability RP";
  if (name == "adj") return "adjacency score";
  if (name == "norm adj") return "adjacency of the norms";
  if (name == "dR2") return "dR^2 of the logits S";
  if (name == "dR2 of A") return "dR^2 of the weights A";
  return name;
}

std::string with_group(const std::string& title, const std::string& group) {
  if (group.empty()) return title;
  return title.empty() ? group : title + "  |  " + group;
}

void add(FigureLines& out, LineChart chart, std::vector<LineSeriesSource> sources) {
  out.charts.push_back(std::move(chart));
  out.sources.push_back(std::move(sources));
}

// A metric against the layer, one line per row (Zuo et al. Fig. 3: adjacency; Fig. 7: norm adjacency).
void layer_lines(const FigureData& data, FigureLines& out) {
  const FigureSpec& spec = data.spec;
  const std::size_t per_group = spec.layers.size(), groups = data.group_titles.size();
  const bool embeddings = std::find(spec.layers.begin(), spec.layers.end(), 0) != spec.layers.end();
  for (std::size_t g = 0; g < groups; ++g) {
    LineChart chart;
    chart.title = data.group_titles[g];
    chart.x.label = embeddings ? "layer (0 = the embeddings)" : "layer";
    std::vector<std::string> names;
    std::vector<LineSeriesSource> sources;
    for (std::size_t r = 0; r < data.cells.size(); ++r) {
      ChartSeries s;
      LineSeriesSource src{r, g, {}, {}};
      // The cells' metric name, known before any cell has samples (panel_metric names it by what the row shows).
      const std::string name = spec.table_metric == TableMetric::automatic
                                   ? panel_metric(LayerStats{}, spec.rows[r].quantity).name
                               : spec.table_metric == TableMetric::weight_delta_r2 ? "dR2 of A"
                                                                                   : "dR2";
      for (std::size_t k = 0; k < per_group; ++k) {
        const FigureCell& c = data.cells[r][g * per_group + k];
        s.x.push_back(spec.layers[k]);
        s.y.push_back(c.available ? c.metric : kNaN);
        s.se.push_back(c.available ? c.metric_se : kNaN);
        src.layers.push_back(spec.layers[k]);
      }
      s.label = data.row_labels[r];
      names.push_back(name);
      chart.series.push_back(std::move(s));
      sources.push_back(std::move(src));
    }
    // One y title when every row has the same metric; otherwise each legend entry names its own.
    const bool same = std::all_of(names.begin(), names.end(), [&](const std::string& n) { return n == names[0]; });
    chart.y.label = names.empty() ? "" : same ? metric_title(names[0]) : "metric (per line)";
    if (!same)
      for (std::size_t r = 0; r < names.size(); ++r) chart.series[r].label += "  [" + names[r] + "]";
    // RP, adjacency and norm adjacency are probabilities with 1/2 for no order at all (ties 1/2).
    if (spec.table_metric == TableMetric::automatic) chart.reference_y = {0.5};
    add(out, std::move(chart), std::move(sources));
  }
  out.columns = std::clamp<std::size_t>(groups, 1, 3);
  out.note = spec.table_metric == TableMetric::automatic
                 ? "mean \u00b1 one standard error over samples; dashed: 1/2, no order (RP: recency probability, "
                   "adj: adjacency score, norm adj: adjacency of the norms; ties 1/2)"
                 : "dR^2 \u00b1 one standard error (Ruscio et al. Eq. 4), pooled over samples";
}

// Output norms ||x_i|| against the position, one line per chosen layer (Zuo et al. Fig. 11).
void norm_lines(const FigureData& data, FigureLines& out) {
  const FigureSpec& spec = data.spec;
  const std::size_t per_group = spec.layers.size(), groups = data.group_titles.size();
  for (std::size_t r = 0; r < data.cells.size(); ++r)
    for (std::size_t g = 0; g < groups; ++g) {
      std::vector<LineSeriesSource> sources;
      LineChart chart;
      chart.title = with_group(data.row_labels[r], data.group_titles[g]);
      chart.x.label = "position i";
      chart.y.label = "output norm ||x_i||";
      for (std::size_t k = 0; k < per_group; ++k) {
        const FigureCell& c = data.cells[r][g * per_group + k];
        ChartSeries s;
        s.label = layer_name(spec.layers[k]);
        const int n = c.panel.n;
        s.markers = n <= 64;  // hundreds of markers hide the line
        LineSeriesSource src{r, g, {}, {}};
        for (int i = 0; i < n; ++i) {
          const std::size_t e = std::size_t(i);
          s.x.push_back(i);
          s.y.push_back(c.available && e < c.panel.value.size() ? c.panel.value[e] : kNaN);
          s.se.push_back(c.available && e < c.panel.se.size() ? c.panel.se[e] : kNaN);
          src.layers.push_back(spec.layers[k]);
        }
        chart.series.push_back(std::move(s));
        sources.push_back(std::move(src));
      }
      add(out, std::move(chart), std::move(sources));
    }
  out.columns = groups > 1 ? std::min<std::size_t>(groups, 4) : std::clamp<std::size_t>(data.cells.size(), 1, 3);
  out.note =
      "mean \u00b1 one standard error over samples of each position's output norm (Chi et al.'s variance "
      "signal; Zuo et al. Sec. 5.4)";
}

// dR^2 per query-position bin on a log axis (Ruscio et al. Fig. 1, Table 7).
void bin_lines(const FigureData& data, FigureLines& out) {
  const FigureSpec& spec = data.spec;
  const std::size_t per_group = spec.layers.size(), groups = data.group_titles.size();
  const std::size_t rows = data.cells.size();
  const bool weights = spec.table_metric == TableMetric::weight_delta_r2;
  auto series = [&](std::size_t r, std::size_t g, std::size_t k, std::string label, LineSeriesSource& src) {
    const FigureCell& c = data.cells[r][g * per_group + k];
    ChartSeries s;
    s.label = std::move(label);
    src = {r, g, {}, {}};
    // Before the first samples: the bins' places, without values (leakage_bins cuts Ruscio's edges at n).
    const std::vector<LeakageBin> bins = c.available ? c.bins : leakage_bins(c.panel.n);
    for (const LeakageBin& b : bins) {
      s.x.push_back(bin_centre(b));
      s.y.push_back(c.available ? b.delta_r2 : kNaN);
      src.layers.push_back(spec.layers[k]);
      src.bins.push_back({b.from, b.to});
    }
    return s;  // no se: the bins' dR^2 has none (core LeakageBin)
  };
  auto chart_for = [&](std::string title) {
    LineChart chart;
    chart.title = std::move(title);
    chart.x.label = "query position i (bin centre)";
    chart.x.scale = AxisScale::log;
    chart.y.label = weights ? "dR^2 of the weights A" : "dR^2 of the logits S";
    return chart;
  };
  for (std::size_t g = 0; g < groups; ++g) {
    if (rows == 1) {  // one configuration: its layers as lines
      std::vector<LineSeriesSource> sources(per_group);
      LineChart chart = chart_for(with_group(data.row_labels[0], data.group_titles[g]));
      for (std::size_t k = 0; k < per_group; ++k)
        chart.series.push_back(series(0, g, k, layer_name(spec.layers[k]), sources[k]));
      add(out, std::move(chart), std::move(sources));
      continue;
    }
    for (std::size_t k = 0; k < per_group; ++k) {  // several: one chart per layer, the rows as lines
      std::vector<LineSeriesSource> sources(rows);
      LineChart chart = chart_for(with_group(layer_name(spec.layers[k]), data.group_titles[g]));
      for (std::size_t r = 0; r < rows; ++r) chart.series.push_back(series(r, g, k, data.row_labels[r], sources[r]));
      add(out, std::move(chart), std::move(sources));
    }
  }
  out.columns = rows == 1 ? std::clamp<std::size_t>(groups, 1, 3) : std::clamp<std::size_t>(per_group, 1, 4);
  out.note =
      "dR^2 within each query bin [from, to) (Ruscio et al. Eq. 4, Table 7) at the geometric centre of its "
      "edges (0 taken as 1); per-bin values carry no standard error";
}

// Each sample's adjacency score as a histogram over [0, 1] (Zuo et al. Fig. 13): one chart per chosen layer, one
// line per row (init against trained), the share of samples per bin at the bin's centre.
void sample_histogram_lines(const FigureData& data, FigureLines& out) {
  const FigureSpec& spec = data.spec;
  const std::size_t per_group = spec.layers.size(), groups = data.group_titles.size();
  for (std::size_t g = 0; g < groups; ++g)
    for (std::size_t k = 0; k < per_group; ++k) {
      LineChart chart;
      chart.title = with_group(layer_name(spec.layers[k]), data.group_titles[g]);
      chart.x.label = "adjacency score of one sample";
      chart.y.label = "share of samples";
      std::vector<LineSeriesSource> sources;
      for (std::size_t r = 0; r < data.cells.size(); ++r) {
        const FigureCell& c = data.cells[r][g * per_group + k];
        ChartSeries s;
        s.label = data.row_labels[r];
        const std::size_t bins = c.sample_adjacency.size();
        LineSeriesSource src{r, g, {}, {}};
        for (std::size_t b = 0; b < bins; ++b) {
          s.x.push_back((double(b) + 0.5) / double(bins));
          s.y.push_back(c.available ? c.sample_adjacency[b] : kNaN);
          s.se.push_back(kNaN);
          src.layers.push_back(spec.layers[k]);
        }
        s.markers = bins <= 40;
        chart.series.push_back(std::move(s));
        sources.push_back(std::move(src));
      }
      chart.reference_y = {};
      add(out, std::move(chart), std::move(sources));
    }
  out.columns = std::clamp<std::size_t>(per_group * groups, 1, 4);
  out.note =
      "share of samples (token draws through the row's network) per bin of their adjacency score over [0, 1] "
      "(Zuo et al. Fig. 13); the rows need the histograms setting";
}

// A run folder's log.jsonl (the row's checkpoint) against the step, one chart per row, one line per chosen layer,
// +-1 SE (issue 50): the weight on key 0 (the sink that training makes with a fixed first token), or with "show":
// "r_l" the residual-stream share r_l of the leakage (logged with a fixed first token; a gap where it is null).
constexpr double kShareAxisTop = 2.0;

void train_curve_lines(const FigureData& data, FigureLines& out) {
  const FigureSpec& spec = data.spec;
  bool any_share = false, share_null = false;
  for (std::size_t r = 0; r < spec.rows.size(); ++r) {
    const std::string& folder = spec.rows[r].settings.checkpoint;
    const bool share = spec.rows[r].residual_share;
    any_share |= share;
    std::vector<TrainEvaluation> ev;
    std::string text, error;
    if (!folder.empty() && read_input_file(folder + "/log.jsonl", 1ull << 30, "the run's log", text, error))
      ev = parse_train_log(text);
    LineChart chart;
    chart.title = data.row_labels.at(r);
    chart.x.label = "training step";
    chart.y.label = share ? "r_l = dR^2 bidirectional / dR^2 causal" : "mean attention weight on key 0";
    std::vector<LineSeriesSource> sources;
    bool logged = false;
    for (int layer : spec.layers) {
      if (layer < 1) continue;  // the embeddings have no attention
      ChartSeries s;
      s.label = layer_name(layer);
      LineSeriesSource src{r, 0, {}, {}};
      for (const TrainEvaluation& e : ev) {
        if (std::size_t(layer) > e.layers.size()) continue;
        const TrainLayerReading& l = e.layers[std::size_t(layer) - 1];
        s.x.push_back(double(e.step));
        s.y.push_back(share ? l.residual_share : l.sink_weight);
        s.se.push_back(share ? l.residual_share_se : l.sink_weight_se);
        logged |= !share || std::isfinite(l.residual_share) || !l.residual_share_note.empty();
        share_null |= share && !l.residual_share_note.empty();
        src.layers.push_back(layer);
      }
      s.markers = s.x.size() <= 64;
      chart.series.push_back(std::move(s));
      sources.push_back(std::move(src));
    }
    if (ev.empty()) chart.note = folder.empty() ? "no run folder" : "no log.jsonl in " + folder;
    else if (!logged) chart.note = "no r_l in the log: it is logged with a fixed first token only";
    // r_l is a share, about 0..1; a causal dR^2 just above 3 SE makes a ratio of tens that would flatten the rest:
    // the axis stops at 2 and says so (lines.csv has every value).
    if (share) {
      double top = 0;
      for (const ChartSeries& s : chart.series)
        for (double y : s.y)
          if (std::isfinite(y)) top = std::max(top, y);
      if (top > kShareAxisTop) {
        chart.y.lo = 0.0;
        chart.y.hi = kShareAxisTop;
        chart.note = "r_l above 2 is off the chart (a causal dR^2 just above 3 SE; lines.csv has it)";
      }
    }
    add(out, std::move(chart), std::move(sources));
  }
  out.columns = std::clamp<std::size_t>(spec.rows.size(), 1, 3);
  out.note =
      "the run's evaluations (log.jsonl) over the evaluation prompts, +-1 SE (docs/model.md, \"Training\"): the mean "
      "attention weight on key 0";
  if (any_share)
    out.note += std::string(
                    "; r_l, the residual-stream share of the leakage (section 10; its SE by the delta method, "
                    "conservative)") +
                (share_null ? ", left out where the causal dR^2 is within 3 SE of 0" : "");
}

// Position probes per layer (Zuo et al. Figs. 4, 8, 9): Pearson-R (first line of charts) and NRMSE (second) for X,
// Var_X and Sim_X, one line per row (init against trained), +-1 bootstrap SE.
void probe_lines(const FigureData& data, FigureLines& out) {
  const FigureSpec& spec = data.spec;
  const std::size_t per_group = spec.layers.size(), groups = data.group_titles.size();
  static const char* const kFeature[3] = {"X", "Var_X", "Sim_X"};
  const bool embeddings = std::find(spec.layers.begin(), spec.layers.end(), 0) != spec.layers.end();
  for (std::size_t g = 0; g < groups; ++g)
    for (bool nrmse : {false, true})
      for (ProbeFeature f : kProbeFeatures) {
        LineChart chart;
        chart.title = with_group(std::string(nrmse ? "NRMSE" : "Pearson-R") + " of the " + kFeature[int(f)] + " probe",
                                 data.group_titles[g]);
        chart.x.label = embeddings ? "layer (0 = the embeddings)" : "layer";
        chart.y.label = nrmse ? "RMSE / n (test)" : "Pearson-R (test)";
        std::vector<LineSeriesSource> sources;
        for (std::size_t r = 0; r < data.cells.size(); ++r) {
          ChartSeries s;
          s.label = data.row_labels[r];
          LineSeriesSource src{r, g, {}, {}};
          for (std::size_t k = 0; k < per_group; ++k) {
            const FigureCell& c = data.cells[r][g * per_group + k];
            const auto& score = c.probe[std::size_t(f)];
            s.x.push_back(spec.layers[k]);
            s.y.push_back(score ? (nrmse ? score->nrmse : score->pearson_r) : kNaN);
            s.se.push_back(score ? (nrmse ? score->nrmse_se : score->pearson_r_se) : kNaN);
            src.layers.push_back(spec.layers[k]);
          }
          chart.series.push_back(std::move(s));
          sources.push_back(std::move(src));
        }
        add(out, std::move(chart), std::move(sources));
      }
  out.columns = 3;
  const ProbeRequest first = figure_probe_request(cell_settings(spec, 0, 0));
  out.note =
      "position probes (ridge; docs/model.md section 9) trained on each row's first half of samples and tested "
      "on the second half (the first row: " +
      std::to_string(first.train) + " and " + std::to_string(first.test) +
      " sequences), +-1 bootstrap SE over test sequences; charts in reading order: Pearson-R of X, Var_X, "
      "Sim_X, then their NRMSE (predicting the mean position: R 0, NRMSE sqrt((n^2 - 1) / 12) / n)";
}

}  // namespace

double bin_centre(const LeakageBin& bin) { return std::sqrt(double(std::max(bin.from, 1)) * double(bin.to)); }

FigureLines figure_lines(const FigureData& data) {
  FigureLines out;
  if (!is_line_kind(data.spec.kind) || data.cells.empty() || data.spec.layers.empty()) return out;
  switch (data.spec.kind) {
    case FigureKind::layer_lines: layer_lines(data, out); break;
    case FigureKind::norms: norm_lines(data, out); break;
    case FigureKind::leakage_bins: bin_lines(data, out); break;
    case FigureKind::sample_histograms: sample_histogram_lines(data, out); break;
    case FigureKind::train_curves: train_curve_lines(data, out); break;
    case FigureKind::probes: probe_lines(data, out); break;
    case FigureKind::heatmaps:
    case FigureKind::h_of_j:
    case FigureKind::table: break;
  }
  return out;
}

Scene layout_figure_lines(const FigureData& data) {
  const float fs_title = 14, fs_note = 9, gap = 12;
  const FigureLines lines = figure_lines(data);
  const std::size_t cols = std::max<std::size_t>(1, std::min(lines.columns, lines.charts.size()));
  const std::size_t grid_rows = std::max<std::size_t>(1, (lines.charts.size() + cols - 1) / cols);
  // One chart's box (its title, axes and legend included), somewhat wider when the page title needs the room;
  // the grid is centred on a page as wide as the title.
  const float title_w = text_width(data.spec.title, fs_title, true) * 1.05f + 16;
  const float W = std::clamp((title_w - 8) / float(cols) - gap, 380.0f, cols == 1 ? 760.0f : 520.0f), H = 300;
  Scene sc;
  const float grid_w = float(cols) * (W + gap) - gap;
  sc.width = std::max(grid_w + 16, title_w);
  const float left = (sc.width - grid_w) / 2;
  // The note, wrapped to the page's width at word boundaries.
  std::string text = lines.note;
  if (!data.note.empty()) text += (text.empty() ? "" : "; ") + data.note;
  std::vector<std::string> note;
  for (std::size_t k = 0; k < text.size();) {
    const std::size_t next = std::min(text.find(' ', k + 1), text.size());
    const std::string word = text.substr(k, next - k);
    if (note.empty() || text_width(note.back() + word, fs_note) > sc.width - 16)
      note.push_back(note.empty() ? word : word.substr(word[0] == ' ' ? 1 : 0));
    else note.back() += word;
    k = next;
  }
  float top = 8;
  if (!data.spec.title.empty()) top += fs_title + 10;
  sc.height = top + float(grid_rows) * (H + gap) + float(note.size()) * (fs_note + 4) + 8;
  if (!data.spec.title.empty())
    sc.items.push_back(
        SceneText{sc.width / 2, 8 + fs_title, fs_title, data.spec.title, Anchor::middle, false, true, kBlack});
  if (lines.charts.empty())
    sc.items.push_back(
        SceneText{sc.width / 2, top + H / 2, 11, "no rows or layers yet", Anchor::middle, false, false, kGrey});
  for (std::size_t k = 0; k < lines.charts.size(); ++k) {
    const float x0 = left + float(k % cols) * (W + gap), y0 = top + float(k / cols) * (H + gap);
    layout_line_chart(lines.charts[k], x0, y0, x0 + W, y0 + H, sc);
  }
  float y = top + float(grid_rows) * (H + gap) + fs_note;
  for (const std::string& line : note) {
    sc.items.push_back(SceneText{8, y, fs_note, line, Anchor::start, false, false, kGrey});
    y += fs_note + 4;
  }
  return sc;
}

}  // namespace maskscope::gui
