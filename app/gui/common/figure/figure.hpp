// Figures and presets, with no GL. A figure has rows (one configuration each, as the papers
// compare 2-5 configurations side by side) and columns (the chosen layers, optionally repeated
// for column groups such as d = 16 | d = 64 in LN-recency Fig. 1). A preset is the live window's
// settings and view plus a figure: everything needed to reproduce a paper's figure.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/formats/atomic_file.hpp"
#include "core/model/enum_names.hpp"
#include "core/model/settings.hpp"
#include "core/stats/position_probe.hpp"
#include "core/stats/snapshot.hpp"
#include "common/panels.hpp"
#include "common/sweep/sweep_view.hpp"

namespace maskscope::gui {

// table: rows x layers of the rows' metric with its SE (Zuo et al. Tables 4-6), exported as CSV too.
// The line kinds (figure_lines.hpp): layer_lines, a metric against the layer, one line per row (Zuo et al.
// Fig. 3 and 7); norms, the output norms ||x_i|| against the position i, one line per layer (Zuo et al.
// Fig. 11); leakage_bins, dR^2 against the query-position bin on a log axis (Ruscio et al. Fig. 1).
// sample_histograms: each sample's adjacency score as a histogram over [0, 1], one chart per layer, one line per row
// (Zuo et al. Fig. 13, init against trained; rows need Settings::histograms); train_curves: a run folder's
// log.jsonl readings against the step, one chart per row (its checkpoint's run), one line per layer (issue 50).
// probes: Zuo et al.'s position probes (Figs. 4, 8, 9) per layer, Pearson-R and NRMSE for X, Var_X and Sim_X, one
// line per row (init against trained): each row's first half of samples trains the probes, the second half tests.
enum class FigureKind {
  heatmaps,
  h_of_j,
  table,
  layer_lines,
  norms,
  leakage_bins,
  sample_histograms,
  train_curves,
  probes
};
// What a table figure's cells hold: the row's own metric (RP, adj, norm adj by what it shows), or the
// absolute-position leakage dR^2 of the logits or of the weights (Ruscio et al.; docs/model.md section 8).
enum class TableMetric { automatic, delta_r2, weight_delta_r2 };
// Their names in presets (enum_names.hpp): to_string, the preset reader and its messages read these.
inline constexpr EnumTable<FigureKind, 9> kFigureKindNames{{{FigureKind::heatmaps, "heatmaps"},
                                                            {FigureKind::h_of_j, "h_of_j"},
                                                            {FigureKind::table, "table"},
                                                            {FigureKind::layer_lines, "layer_lines"},
                                                            {FigureKind::norms, "norms"},
                                                            {FigureKind::leakage_bins, "leakage_bins"},
                                                            {FigureKind::sample_histograms, "sample_histograms"},
                                                            {FigureKind::train_curves, "train_curves"},
                                                            {FigureKind::probes, "probes"}}};
inline constexpr EnumTable<TableMetric, 3> kTableMetricNames{{{TableMetric::automatic, "auto"},
                                                              {TableMetric::delta_r2, "delta_r2"},
                                                              {TableMetric::weight_delta_r2, "weight_delta_r2"}}};
std::string_view to_string(TableMetric m);

struct FigureRow {
  std::string label;  // empty: short_label(settings)
  Settings settings;
  Quantity quantity = Quantity::score;
  Transform transform = Transform::raw;
  // A trained network's row (issue 50): "init" (step 0) or "trained" (the last step) of the preset's run folder
  // (or of `run`, another run folder, trained from `run_train` when missing: training_json's keys, as the preset's
  // "run": {"train"}), bound when the preset is applied (common/train/run_preset.hpp); "" otherwise.
  std::string state = {};
  std::string run = {};
  nlohmann::json run_train = nlohmann::json::object();
  // A train_curves row's reading of log.jsonl: the weight on key 0 ("show": "weight") or r_l, the residual-stream
  // share of the leakage ("show": "r_l"; logged with a fixed first token only, docs/model.md section 15).
  bool residual_share = false;
  bool operator==(const FigureRow&) const = default;
};

// A column group: its title and the settings it overrides (JSON object, e.g. {"d": 16}).
struct FigureGroup {
  std::string title;
  nlohmann::json set = nlohmann::json::object();
  bool operator==(const FigureGroup&) const = default;
};

struct FigureSpec {
  std::string title;
  FigureKind kind = FigureKind::heatmaps;
  std::vector<int> layers = {1, 2};  // columns of each group, 1-based; 0 = the embeddings (random_weights)
  std::vector<FigureGroup> groups;   // empty: one group that overrides nothing
  std::vector<FigureRow> rows;
  bool difference = false;              // show rows 2.. minus row 1 (same seed: same random draws)
  bool shared_range = false;            // one colour range for all panels (per transform)
  bool hide_diagonal = true;            // mask the diagonal except row 0 in raw S and A maps (cos: all of it)
  RangeMode range = RangeMode::robust;  // how each panel's colour range is chosen
  bool grey_noise = true;               // centred maps: grey where |value| <= 2 SE
  bool show_metric = true;              // RP (S, A), adjacency (cos) or norm adjacency (||x||) in each panel's title
  TableMetric table_metric = TableMetric::automatic;  // table and layer_lines; leakage_bins: of S or of A
  ColormapId sequential = ColormapId::rocket;
  ColormapId diverging = ColormapId::rdbu;
  // The cells' settings `title` describes (the preset's own, samples and threads left out; not in JSON). A title
  // that no longer holds gives way to one made from the settings (figure_title).
  struct TitleScope {
    std::optional<std::vector<Settings>> cells;  // nullopt: the title holds for any
    // Bookkeeping about the title, not the figure: two specs that draw the same figure are equal (a preset read
    // back from its JSON, a spec whose runs need no restart).
    bool operator==(const TitleScope&) const { return true; }
  } title_scope;
  bool operator==(const FigureSpec&) const = default;
};

// PNG export size: a scale of the layout's natural size, or a width in pixels.
struct ExportLimits {
  static constexpr double scale_min = 0.25, scale_max = 8.0;
  static constexpr int width_min = 64, width_max = 16384;
};

struct ExportOptions {
  double scale = 2.0;  // 1x = the layout's natural size in pixels
  int width = 0;       // > 0: PNG width in pixels (overrides scale)
  bool operator==(const ExportOptions&) const = default;
};

// The training run a preset shows (issue 50): its default folder (relative to the working folder; --run DIR
// overrides it) and the run's training settings (training_json's keys; those left out keep the Training tab's
// defaults), so that a missing folder can be trained when asked.
struct PresetRun {
  std::string folder;
  nlohmann::json train = nlohmann::json::object();
  bool operator==(const PresetRun&) const = default;
};

struct Preset {
  std::string name;         // file stem, e.g. "ln-recency-fig1"
  std::string description;  // paper and figure
  Settings settings;        // the live window's settings
  ViewOptions view;
  FigureSpec figure;
  ExportOptions export_options;
  std::optional<SweepView> sweep;  // the Sweep tab's sweep (issue 32), when the preset is a sweep
  std::optional<PresetRun> run;    // a trained network's preset: rows with a state read this run folder
  bool operator==(const Preset&) const = default;
};

std::string_view to_string(FigureKind k);
// layer_lines, norms and leakage_bins: drawn as line charts (figure_lines.hpp).
inline bool is_line_kind(FigureKind k) {
  return k == FigureKind::layer_lines || k == FigureKind::norms || k == FigureKind::leakage_bins ||
         k == FigureKind::sample_histograms || k == FigureKind::train_curves || k == FigureKind::probes;
}

// The probes a probes figure's row runs (run_position_probes): every feature, the ridge probe, the row's seed, and
// its samples split into training sequences (the first half, samples 0 .. samples/2 - 1) and test sequences (the
// rest): a trained row's 256 evaluation prompts give 128 and 128.
ProbeRequest figure_probe_request(const Settings& s);

// The settings a figure cell simulates: row settings, then the group's overrides, with enough
// layers for every column. Cells with equal settings share one run.
Settings cell_settings(const FigureSpec& spec, std::size_t row, std::size_t group);
std::vector<Settings> figure_simulations(const FigureSpec& spec);
std::size_t group_count(const FigureSpec& spec);
std::string row_label(const FigureRow& row);

// The figure's distinct simulations with their samples and threads cleared: what a title describes.
std::vector<Settings> title_simulations(const FigureSpec& spec);
// Whether spec.title still describes the figure: it has one, and its cells' settings are title_scope's (apart
// from samples and threads). A preset's title is a description of its own rows ("d = 16, LN"); once a row is added,
// removed or changed it is stale text (issue 48 item 2).
bool figure_title_holds(const FigureSpec& spec);
// The title shown and exported: spec.title while it holds, else one made from the settings the cells share
// ("Maps of S; n 10, d 64, 2 layers, LayerNorm, residual, score scale 1/sqrt(d)"); what varies is in the row
// labels and group titles.
std::string figure_title(const FigureSpec& spec);

// Every violation in the figure, each naming where (e.g. "figure.rows[2].alpha").
std::vector<SettingError> validate(const FigureSpec& spec);

nlohmann::json preset_to_json(const Preset& p);
// Throws std::runtime_error naming the key (e.g. "figure.rows[1].set.alpha: ...") on any error:
// malformed JSON values, unknown keys, settings out of range. Never partially updates anything.
Preset preset_from_json(const nlohmann::json& j);
// Reads a preset file; on failure returns nullopt-like empty and sets `error` to a message that
// names the file and, for JSON syntax errors, the byte where parsing stopped.
bool load_preset_file(const std::string& path, Preset& out, std::string& error);
// Writes through a temporary file renamed into place.
bool save_preset_file(const std::string& path, const Preset& p, std::string& error);

// Built-in presets (assets/presets, embedded at build time), in menu order.
const std::vector<Preset>& shipped_presets();
const Preset* find_shipped_preset(const std::string& name);

// ---- What a figure shows, from the runs' snapshots ----

struct FigureCell {
  PanelData panel;
  std::string metric_name;  // "RP", "adj", "norm adj" or empty
  double metric = 0, metric_se = 0;
  bool available = false;                // the run has samples
  std::vector<LeakageBin> bins;          // leakage_bins figures: dR^2 per query-position bin (Ruscio et al. Table 7)
  std::vector<double> sample_adjacency;  // sample_histograms: shares of samples per adjacency bin over [0, 1]
  std::array<std::optional<ProbeScore>, 3> probe;  // probes: by ProbeFeature, this cell's layer
};

struct FigureCurve {  // h(j) figures: one series per row
  std::string label;
  std::vector<double> j, theory, simulated, simulated_se;  // simulated scaled to theory at j = 1
};

struct FigureData {
  FigureSpec spec;
  std::vector<std::string> row_labels;           // displayed rows (difference mode: rows 2.. as "B - A")
  std::vector<std::string> group_titles;         // one per group
  std::vector<std::vector<FigureCell>> cells;    // [displayed row][group * layers + layer column]
  std::vector<std::vector<FigureCurve>> curves;  // h(j): [group][row]
  std::int64_t samples_done = 0, samples_target = 0;
  bool complete = false;  // every run finished
  std::string note;       // e.g. a warning about differing seeds in difference mode
};

using SnapshotLookup = std::function<std::shared_ptr<const Snapshot>(const Settings&)>;
// A probes figure's tables by the cell's settings (nullptr while they are computed).
using ProbeLookup = std::function<std::shared_ptr<const ProbeTable>(const Settings&)>;
FigureData build_figure(const FigureSpec& spec, const SnapshotLookup& lookup, const ProbeLookup& probes = {});

}  // namespace maskscope::gui
