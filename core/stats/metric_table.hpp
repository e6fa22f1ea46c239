// The scalar metrics of a layer, described once (issue 46): one row per estimate (key, label, unit, where it
// lives in LayerStats, which layers have it, whether a sweep can use it, what it means). The JSON writer,
// Python's Layer, the sweep engine, the Metrics, Leakage and Sweep tabs and the lessons read this table; a
// new metric is an Estimate field in snapshot.hpp and a row in metric_table.cpp.
#pragma once

#include <limits>
#include <span>
#include <string>
#include <string_view>

#include "core/model/settings.hpp"
#include "core/stats/estimate.hpp"
#include "core/stats/snapshot.hpp"

namespace maskscope {

// What a metric measures, which decides where it is shown: the order metrics (RP, adjacency; the Metrics
// tab), the absolute-position leakage (the Leakage tab) and the attention sink.
enum class MetricGroup { order, leakage, attention_sink, all };  // all: no row's group, for filters that take every row

struct MetricInfo {
  std::string_view key;          // JSON, Python and --metric: "rp"; the JSON adds key_se (and key_ties)
  std::string_view label;        // as a reader knows it, for axes, legends and columns: "RP"
  std::string_view name;         // spelled out, for menus and titles: "recency probability (RP)"
  std::string_view unit;         // what its values are: "probability", "share of variance", ...
  std::string_view description;  // what it is and where it comes from (docs/model.md), for tooltips and docs
  MetricGroup group = MetricGroup::order;
  Estimate& (*field)(LayerStats&) = nullptr;      // the layer's estimate
  Estimate& (*head_field)(HeadStats&) = nullptr;  // each head's (random weights), or nullptr: no per-head value
  bool ties = false;                 // it counts comparisons with ties 1/2 and reports their share (key_ties)
  bool random_weights_only = false;  // the JSON writes it for the random-weight family only
  bool embeddings = false;           // a metric of the hidden states x: layer 0, the embeddings, has it too
  bool unit_interval = false;        // its values lie in [0, 1]
  double chance = std::numeric_limits<double>::quiet_NaN();  // its value without positional order (0.5), or NaN
  // A sweep can use it (--metric KEY): the sweep's stopping rule stops a point once se <= --se in every
  // layer (sweep.hpp), so a sweepable metric needs an SE over samples.
  bool sweepable = false;
  // For a sweepable metric: "" when these settings have the metric, else why not and what is valid.
  std::string (*sweep_error)(const Settings&) = nullptr;

  // A per-sample metric: where the kernel adds its value (and tie share, and each head's) to the run's
  // moments (accumulator.hpp), from which make_snapshot fills the estimate; and whether these keys give it a
  // value (nullptr: always). Leakage has no slot: it is fitted from the maps (leakage.hpp).
  std::size_t (AccumLayout::*slot)(int) const = nullptr;
  std::size_t (AccumLayout::*ties_slot)(int) const = nullptr;
  std::size_t (AccumLayout::*head_slot)(int, int) const = nullptr;
  std::size_t (AccumLayout::*head_ties_slot)(int, int) const = nullptr;
  bool (*exists)(const KeyRanges&) = nullptr;

  const Estimate& of(const LayerStats& l) const;
  Estimate& of(LayerStats& l) const { return field(l); }
  const Estimate& of(const HeadStats& h) const;  // needs head_field
};

// Every row, in the order the tables and menus show them (the first is the sweep's default).
std::span<const MetricInfo> metric_table();
// The row of `key`, or nullptr.
const MetricInfo* find_metric(std::string_view key);

// The estimate of `m` as a caller outside the metric shows it: its ties NaN when the metric has none.
Estimate estimate_of(const LayerStats& l, const MetricInfo& m);

}  // namespace maskscope
