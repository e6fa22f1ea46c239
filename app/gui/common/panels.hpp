// The maps the window and the figures show of a snapshot, with no GL: one displayed map per layer
// (raw or diagonal-normalized), its colour range by the quantity's rule (quantity.hpp), clipping and noise.
#pragma once

#include <cstddef>
#include <vector>

#include "core/stats/snapshot.hpp"
#include "common/quantity.hpp"
#include "common/view_options.hpp"

namespace maskscope::gui {

// One displayed map: values as shown (NaN = masked or hidden), their standard errors, range.
struct PanelData {
  int layer = 0;  // 1-based; 0 = the embeddings (random_weights)
  int n = 0;
  bool norms = false;  // value and se hold n norms ||x_i|| (drawn as bars), not an n x n map
  std::vector<double> value, se;
  float lo = 0, hi = 1;
  bool centred = false;               // diverging map, range symmetric about 0
  bool below = false, above = false;  // some shown value lies outside [lo, hi] (clipped)
  std::vector<unsigned char> noise;   // 1 where a centred value is within 2 SE of 0 (greyed)
  double ties = 0;                    // tie fraction of the panel's metric (RP or adjacency)
  const char* metric_name = "";       // the panel's metric (panel_metric): "RP", "adj", "norm adj"
  double metric = 0, metric_se = 0;
  double max_se =
      -1;  // the largest finite SE where the value is finite (set by fit_range); -1: not computed, NaN: none
  // The cells differ by no more than their SEs explain (noise_only_map, docs/window.md): the map is drawn over a
  // fixed range of +-4 typical SEs about its mean instead of being stretched, and badged "noise only".
  bool noise_only = false;
};

// Whether the shown cells of a map (finite values with finite SEs; the diagonal left out when `skip_diagonal`)
// differ by no more than their SEs explain: with m their inverse-variance weighted mean and N cells,
// sum ((v - m) / se)^2 <= (N - 1) + 3 sqrt(2 (N - 1)), three standard deviations above the chi-square mean of pure
// noise, and no cell further than sqrt(2 ln N) + 2 SE from m (the largest of N noise cells rarely passes
// sqrt(2 ln N)): issue 48 item 6, layer 1 of every run, every layer of a random network. A cell with SE 0 that differs
// from m is structure; a map of fewer than 2 such cells, or whose SEs are all 0, is not noise only. `mean` and
// `typical_se` (the root mean square SE) are set when given.
bool noise_only_map(const PanelData& p, bool skip_diagonal, double* mean = nullptr, double* typical_se = nullptr);

// Sets p.lo / p.hi (and below / above) from p.value by `mode`; `skip_diagonal` leaves the
// diagonal out of the range (it is hidden, or it is the cosine's constant 1). A centred panel
// gets a range symmetric about 0; an all-zero one gets +-2 SE (or +-1 without SEs), never +-0.
void fit_range(PanelData& p, RangeMode mode, bool centred, bool skip_diagonal);
// Marks p.noise where |value| <= 2 SE (centred maps only).
void mark_noise(PanelData& p);

// The map of layer index `k` (0-based) of `snap`, its range by range_rule(q, t). Raw maps hide the
// diagonal when asked (a masked map's except row 0); diagonal-normalized maps are centred.
struct PanelStyle {
  bool hide_diagonal = true;
  RangeMode range = RangeMode::robust;
  bool grey_noise = true;
};
PanelData build_panel(const Snapshot& snap, std::size_t k, Quantity q, Transform t, const PanelStyle& style);
// The same for layer statistics `l` (a block, the embeddings, or a head_view) of a run with n tokens.
PanelData build_panel(const LayerStats& l, int n, Quantity q, Transform t, const PanelStyle& style);
// The same into `p`, whose arrays keep their memory (a window rebuilds its panels at every snapshot).
void build_panel(const LayerStats& l, int n, Quantity q, Transform t, const PanelStyle& style, PanelData& p);
// The layers a tab shows: 1..L, and first the embeddings (layer 0) for the quantities they have
// (QuantityInfo::on_embeddings: cosines and norms; Zuo et al. Fig. 1 starts there).
std::vector<int> shown_layers(const Snapshot& snap, Quantity q);
// The metric a panel's badge and a figure's title give (QuantityInfo::metric: RP for S and A,
// adjacency for cos, norm adjacency for ||x||); name, value, SE and tie fraction.
struct PanelMetric {
  const char* name;
  double value, se, ties;
};
PanelMetric panel_metric(const LayerStats& l, Quantity q);
// All layers of the current tab.
std::vector<PanelData> build_panels(const Snapshot& snap, const ViewOptions& view);
// The same into `panels`, reusing its panels' memory.
void build_panels(const Snapshot& snap, const ViewOptions& view, std::vector<PanelData>& panels);
// The largest standard error among the shown (finite) cells of `panels`, NaN when no cell has one yet (the status
// line writes "--", not "0"): the status line shows it and --screenshot-at-se waits for it.
double largest_shown_se(const std::vector<PanelData>& panels);

// Gives every panel the union of their ranges (symmetric about 0 when `symmetric`) and
// recomputes which of them now clip.
void share_range(std::vector<PanelData*>& panels, bool symmetric);

// The map after the transform: raw, or each diagonal minus its mean (one place for both the
// window and the exports; the snapshot's score_diag_normalized is the same function).
std::vector<double> transformed(const LayerStats& l, Quantity q, Transform t, int n);
void transformed(const LayerStats& l, Quantity q, Transform t, int n, std::vector<double>& out);

}  // namespace maskscope::gui
