// Figure specs: the cells a figure simulates, their validation, and the figure's numbers built
// from the runs' snapshots.
#include "common/figure/figure.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "common/h_of_j.hpp"
#include "common/sweep/sweep_chart.hpp"
#include "core/run/sweep_spec.hpp"
#include "core/formats/result_json.hpp"
#include "core/model/theory.hpp"

namespace maskscope::gui {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

std::string_view to_string(FigureKind k) { return enum_name(kFigureKindNames, k); }

std::string_view to_string(TableMetric m) { return enum_name(kTableMetricNames, m); }

std::size_t group_count(const FigureSpec& spec) { return std::max<std::size_t>(1, spec.groups.size()); }

std::string row_label(const FigureRow& row) { return row.label.empty() ? short_label(row.settings) : row.label; }

Settings cell_settings(const FigureSpec& spec, std::size_t row, std::size_t group) {
  Settings s = spec.rows.at(row).settings;
  if (group < spec.groups.size())
    apply_settings_json(spec.groups[group].set, s, "figure.columns[" + std::to_string(group) + "].set");
  s = settings_showing(s, spec.rows.at(row).quantity);  // a stage's Gram matrix: stage_grams on
  if (spec.kind == FigureKind::h_of_j) s.layers = 1;    // h(j) needs the norms after layer 1 only
  else if (!spec.layers.empty()) s.layers = std::max(1, *std::max_element(spec.layers.begin(), spec.layers.end()));
  return s;
}

std::vector<Settings> figure_simulations(const FigureSpec& spec) {
  std::vector<Settings> out;
  for (std::size_t r = 0; r < spec.rows.size(); ++r)
    for (std::size_t g = 0; g < group_count(spec); ++g) {
      const Settings s = cell_settings(spec, r, g);
      if (std::none_of(out.begin(), out.end(), [&](const Settings& o) { return o.same_simulation(s); }))
        out.push_back(s);
    }
  return out;
}

std::vector<Settings> title_simulations(const FigureSpec& spec) {
  std::vector<Settings> out;
  try {
    out = figure_simulations(spec);
  } catch (const std::exception&) { return {}; }  // a cell that cannot be made (validate names it)
  for (Settings& s : out) s.samples = 0, s.threads = 0;
  return out;
}

bool figure_title_holds(const FigureSpec& spec) {
  if (spec.title.empty()) return false;
  return !spec.title_scope.cells || *spec.title_scope.cells == title_simulations(spec);
}

std::string figure_title(const FigureSpec& spec) {
  if (figure_title_holds(spec)) return spec.title;
  std::string what;
  switch (spec.kind) {
    case FigureKind::heatmaps: {
      std::vector<std::string> shown;
      for (const FigureRow& r : spec.rows)
        if (const std::string q(symbol(r.quantity)); std::find(shown.begin(), shown.end(), q) == shown.end())
          shown.push_back(q);
      for (const std::string& q : shown) what += (what.empty() ? "Maps of " : ", ") + q;
      if (what.empty()) what = "Maps";
      break;
    }
    case FigureKind::h_of_j: what = "h(j), LN-recency Eq. 42 and simulated"; break;
    case FigureKind::table: what = "Per-layer metrics"; break;
    case FigureKind::layer_lines: what = "Metric per layer"; break;
    case FigureKind::norms: what = "Output norms per position"; break;
    case FigureKind::leakage_bins: what = "dR^2 per query-position bin"; break;
    case FigureKind::sample_histograms: what = "Per-sample adjacency"; break;
    case FigureKind::train_curves: what = "Weight on key 0 against the training step"; break;
    case FigureKind::probes: what = "Position probes per layer"; break;
  }
  const std::vector<Settings> cells = title_simulations(spec);
  if (cells.empty()) return what;
  // The settings that differ between cells are the rows' and groups' business: left out of the title.
  std::vector<SweepAxis> varying;
  for (const char* key : {"n", "d", "layers", "init_std", "alpha", "norm", "gamma", "scale", "mask", "rope"}) {
    const std::string first = axis_value_text(cells[0], key);
    if (std::any_of(cells.begin(), cells.end(), [&](const Settings& c) { return axis_value_text(c, key) != first; }))
      varying.push_back({key, {}});
  }
  const std::string fixed = sweep_settings_text(cells[0], varying);
  return fixed.empty() ? what : what + "; " + fixed;
}

std::vector<SettingError> validate(const FigureSpec& spec) {
  std::vector<SettingError> errors;
  if (spec.kind != FigureKind::h_of_j) {
    if (spec.layers.empty()) errors.push_back({"figure.layers", "choose at least one layer"});
    for (int l : spec.layers)
      if (l < 0 || l > Limits::layers_max)
        errors.push_back({"figure.layers", "layer " + std::to_string(l) + " is outside [0, 16] (0: the embeddings)"});
  }
  if (std::find(spec.layers.begin(), spec.layers.end(), 0) != spec.layers.end() && spec.kind != FigureKind::h_of_j)
    for (std::size_t r = 0; r < spec.rows.size(); ++r)
      if (!spec.rows[r].settings.random_weights()) {
        errors.push_back({"figure.layers", "layer 0 (the embeddings) exists for the random-weight model only; row " +
                                               std::to_string(r) + " is parameter-free"});
        break;
      }
  if (spec.kind == FigureKind::heatmaps)
    for (std::size_t r = 0; r < spec.rows.size(); ++r)
      if (quantity_info(spec.rows[r].quantity).is_vector())
        errors.push_back(
            {"figure.rows[" + std::to_string(r) + "].show",
             "norms are a vector per layer, not a map: show them in a table figure (their norm adjacency)"});
  for (std::size_t r = 0; r < spec.rows.size(); ++r)
    if (!family_has(spec.rows[r].settings, spec.rows[r].quantity))
      errors.push_back({"figure.rows[" + std::to_string(r) + "].show",
                        std::string(to_string(spec.rows[r].quantity)) + " is a stage this row's model lacks (" +
                            "keys, the output projection and the MLP are the random-weight network's; the MLP needs "
                            "mlp 1)"});
  if (spec.difference && spec.rows.size() < 2)
    errors.push_back({"figure.difference", "needs at least two rows (B - A)"});
  if (is_line_kind(spec.kind)) {
    // Lines compare rows side by side; a difference of lines is not drawn (use heatmaps or a table).
    if (spec.difference)
      errors.push_back({"figure.difference", "is for heatmaps: " + std::string(to_string(spec.kind)) +
                                                 " figures draw every row as its own line"});
    if (spec.kind == FigureKind::leakage_bins &&
        std::find(spec.layers.begin(), spec.layers.end(), 0) != spec.layers.end())
      errors.push_back({"figure.layers", "layer 0 (the embeddings) has no attention, so no dR^2 per query bin"});
    if (spec.kind == FigureKind::probes)
      for (std::size_t r = 0; r < spec.rows.size(); ++r) {
        // run_position_probes' own checks (validate_probe) come when the probes start; these name the figure's row.
        const Settings& s = spec.rows[r].settings;
        const std::string where = "figure.rows[" + std::to_string(r) + "]";
        if (!s.random_weights() || s.weights != WeightsMode::fixed)
          errors.push_back({where + ".set.weights",
                            "the probes read one network's hidden states: model random_weights with weights fixed"});
        if (s.samples < 4)
          errors.push_back({where + ".set.samples", "the probes need at least 4 samples (half train, half test)"});
      }
    if (spec.kind == FigureKind::sample_histograms)
      for (std::size_t r = 0; r < spec.rows.size(); ++r)
        if (spec.rows[r].settings.histograms == 0)
          errors.push_back({"figure.rows[" + std::to_string(r) + "].set.histograms",
                            "sample_histograms needs each sample's adjacency: set histograms (e.g. 20 bins)"});
  }
  for (std::size_t r = 0; r < spec.rows.size(); ++r)
    for (std::size_t g = 0; g < group_count(spec); ++g) {
      Settings s;
      try {
        s = cell_settings(spec, r, g);
      } catch (const std::exception& e) {
        errors.push_back({"figure.columns", e.what()});
        continue;
      }
      for (auto& e : validate(s)) errors.push_back({"figure.rows[" + std::to_string(r) + "]." + e.setting, e.message});
    }
  return errors;
}

FigureData build_figure(const FigureSpec& spec, const SnapshotLookup& lookup, const ProbeLookup& probes) {
  FigureData data;
  data.spec = spec;
  data.spec.title = figure_title(spec);  // the preset's text only while it describes these rows
  data.complete = true;
  const std::size_t groups = group_count(spec);
  for (std::size_t g = 0; g < groups; ++g)
    data.group_titles.push_back(g < spec.groups.size() ? spec.groups[g].title : "");
  // Progress over distinct runs (a probes figure: its cells' probes, each all its samples once done).
  const bool probing = spec.kind == FigureKind::probes;
  auto probe_table = [&](const Settings& s) { return probes ? probes(s) : nullptr; };
  for (const Settings& s : figure_simulations(spec)) {
    data.samples_target += s.samples;
    if (probing) {
      const bool done = probe_table(s) != nullptr;
      data.samples_done += done ? s.samples : 0;
      data.complete = data.complete && done;
      continue;
    }
    auto snap = lookup(s);
    if (snap) data.samples_done += snap->samples_done;
    if (!snap || !snap->finished) data.complete = false;
  }
  if (spec.rows.empty()) return data;

  if (spec.kind == FigureKind::h_of_j) {
    data.curves.resize(groups);
    for (std::size_t g = 0; g < groups; ++g)
      for (std::size_t r = 0; r < spec.rows.size(); ++r) {
        const Settings s = cell_settings(spec, r, g);
        FigureCurve c;
        c.label = row_label(spec.rows[r]);
        c.theory = theory::ln_recency_h_curve(s.n, s.d, s.alpha, s.gamma, false);
        for (int j = 1; j <= s.n; ++j) c.j.push_back(j);
        auto snap = lookup(s);
        if (snap && snap->samples_done > 0 && !snap->layers.empty())
          scaled_inverse_norms(snap->layers[0], c.theory[0], c.simulated, c.simulated_se);  // simulated(1) = theory(1)
        data.curves[g].push_back(std::move(c));
      }
    for (const auto& r : spec.rows) data.row_labels.push_back(row_label(r));
    return data;
  }

  auto cell = [&](std::size_t r, std::size_t g, int layer) {
    FigureCell c;
    const Settings s = cell_settings(spec, r, g);
    if (probing) {  // the probes' scores at this layer (0: the embeddings), by feature
      c.panel.layer = layer;
      c.panel.n = s.n;
      if (const auto table = probe_table(s)) {
        c.available = true;
        for (const ProbeLayer& l : table->layers)
          if (l.layer == layer) c.probe = l.score;
      }
      return c;
    }
    auto snap = lookup(s);
    const FigureRow& row = spec.rows[r];
    const LayerStats* stats = snap ? layer_stats(*snap, layer) : nullptr;
    if (!snap || snap->samples_done == 0 || !stats) {
      c.panel.layer = layer;
      c.panel.n = s.n;
      c.panel.value.assign(std::size_t(s.n) * s.n, kNaN);
      c.panel.se = c.panel.value;
      return c;
    }
    c.available = true;
    const PanelStyle style{spec.hide_diagonal && !spec.difference, spec.range, spec.grey_noise};
    // Norm figures show ||x_i|| whatever the row shows; the other line kinds read the row's metric.
    const Quantity q = spec.kind == FigureKind::norms ? Quantity::norm : row.quantity;
    c.panel = build_panel(*stats, s.n, q, spec.kind == FigureKind::norms ? Transform::raw : row.transform, style);
    if (spec.kind == FigureKind::leakage_bins) {
      const bool weights = spec.table_metric == TableMetric::weight_delta_r2;
      const Leakage& k = weights ? stats->weight_leakage : stats->leakage;
      c.metric_name = weights ? "dR2 of A" : "dR2";
      c.metric = k.delta_r2.mean;
      c.metric_se = k.delta_r2.se;
      c.bins = k.bins;  // Ruscio et al.'s query bins, cut at n
    } else if (spec.kind == FigureKind::sample_histograms) {
      c.sample_adjacency = stats->histograms.adjacency;
      c.metric_name = c.panel.metric_name;
      c.metric = c.panel.metric;
      c.metric_se = c.panel.metric_se;
    } else if (spec.kind == FigureKind::norms) {
      c.metric_name = c.panel.metric_name;  // norm adjacency: how well the norms order the positions
      c.metric = c.panel.metric;
      c.metric_se = c.panel.metric_se;
    } else if ((spec.kind == FigureKind::table || spec.kind == FigureKind::layer_lines) &&
               spec.table_metric != TableMetric::automatic) {
      const bool weights = spec.table_metric == TableMetric::weight_delta_r2;
      const Leakage& k = weights ? stats->weight_leakage : stats->leakage;
      c.metric_name = weights ? "dR2 of A" : "dR2";
      c.metric = layer == 0 ? kNaN : k.delta_r2.mean;  // the embeddings have no attention
      c.metric_se = layer == 0 ? kNaN : k.delta_r2.se;
    } else if (spec.kind == FigureKind::table || spec.kind == FigureKind::layer_lines ||
               (spec.show_metric && row.transform == Transform::raw)) {
      c.metric_name = c.panel.metric_name;  // the embeddings' RP is NaN (no S or A): a gap in a line
      c.metric = c.panel.metric;
      c.metric_se = c.panel.metric_se;
    }
    return c;
  };

  const std::size_t first = spec.difference ? 1 : 0;
  std::set<std::uint64_t> seeds;
  for (std::size_t r = first; r < spec.rows.size(); ++r) {
    std::vector<FigureCell> line;
    for (std::size_t g = 0; g < groups; ++g)
      for (int layer : spec.layers) {
        FigureCell c = cell(r, g, layer);
        if (spec.difference) {
          const FigureCell a = cell(0, g, layer);
          if (a.panel.n != c.panel.n) {
            c.available = false;
            c.panel.value.assign(c.panel.value.size(), kNaN);
          } else {
            c.available = c.available && a.available;
            for (std::size_t e = 0; e < c.panel.value.size(); ++e) {
              c.panel.value[e] -= a.panel.value[e];
              c.panel.se[e] = std::hypot(c.panel.se[e], a.panel.se[e]);  // ignores the (positive) pairing
            }
            fit_range(c.panel, RangeMode::all, true, false);
            c.panel.noise.clear();
            if (spec.grey_noise) mark_noise(c.panel);
          }
          c.metric_name.clear();
        }
        line.push_back(std::move(c));
      }
    data.cells.push_back(std::move(line));
    data.row_labels.push_back(spec.difference ? row_label(spec.rows[r]) + "  -  " + row_label(spec.rows[0])
                                              : row_label(spec.rows[r]));
  }
  if (spec.difference) {
    for (const auto& r : spec.rows) seeds.insert(r.settings.seed);
    if (seeds.size() > 1) data.note = "rows have different seeds: the differences include independent sampling noise";
  }
  if (spec.shared_range) {
    // One range per kind of map: raw sequential maps together, centred maps together.
    std::vector<PanelData*> raw, centred;
    for (std::size_t r = 0; r < data.cells.size(); ++r)
      for (auto& c : data.cells[r]) {
        if (!c.available) continue;
        (c.panel.centred ? centred : raw).push_back(&c.panel);  // differences and diagonal-normalized maps
      }
    share_range(raw, false);
    share_range(centred, true);
  }
  return data;
}

}  // namespace maskscope::gui
