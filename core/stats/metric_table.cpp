// The metric table (metric_table.hpp): one row per scalar estimate of a layer.
#include "core/stats/metric_table.hpp"

#include <array>
#include <cmath>

namespace maskscope {

namespace {

std::string sink_weight_sweep_error(const Settings& s) {
  // Key 0 is seen by queries 1.. (causal, bidirectional) or 1..W-1 (window:W).
  if (s.n < 2) return "sink_weight averages over queries i >= 1: valid: n >= 2 (n = " + std::to_string(s.n) + ")";
  if (s.mask == MaskKind::window && s.window < 2)
    return "sink_weight: no query i >= 1 sees key 0 under --mask " + mask_to_string(s) + "; valid: window:W, W >= 2";
  return "";
}

bool has_triples(const KeyRanges& k) { return k.recency_triples > 0; }
bool has_adjacency_rows(const KeyRanges& k) { return k.adjacency_rows > 0; }
// Some query i >= 1 sees key 0.
bool key0_seen(const KeyRanges& k) {
  for (std::size_t i = 1; i < k.lo.size(); ++i)
    if (k.lo[i] == 0) return true;
  return false;
}

const std::array kMetrics = {
    MetricInfo{
        .key = "rp",
        .label = "RP",
        .name = "recency probability (RP)",
        .unit = "probability",
        .description = "recency probability RP of the logits: P(S_ik > S_ij) over i > k > j, ties 1/2 (LN-recency "
                       "Sec. 3, docs/model.md section 4); 0.5 = no bias toward recent keys",
        .group = MetricGroup::order,
        .field = [](LayerStats& l) -> Estimate& { return l.rp; },
        .head_field = [](HeadStats& h) -> Estimate& { return h.rp; },
        .ties = true,
        .unit_interval = true,
        .chance = 0.5,
        .sweepable = true,
        .slot = &AccumLayout::rp,
        .ties_slot = &AccumLayout::rp_ties,
        .head_slot = &AccumLayout::head_rp,
        .head_ties_slot = &AccumLayout::head_rp_ties,
        .exists = has_triples,
    },
    MetricInfo{
        .key = "adjacency",
        .label = "adjacency",
        .name = "adjacency score",
        .unit = "probability",
        .description = "adjacency score of the output cosines (Zuo et al. Sec. 4.1, docs/model.md section 4): over "
                       "rows k and pairs i < j < k the share with C_ki < C_kj, ties 1/2, diagonal left out; 0.5 = no "
                       "order",
        .group = MetricGroup::order,
        .field = [](LayerStats& l) -> Estimate& { return l.adjacency; },
        .ties = true,
        .embeddings = true,
        .unit_interval = true,
        .chance = 0.5,
        .sweepable = true,
        .slot = &AccumLayout::adjacency,
        .ties_slot = &AccumLayout::adjacency_ties,
        .exists = has_adjacency_rows,
    },
    MetricInfo{
        .key = "norm_adjacency",
        .label = "norm adjacency",
        .name = "norm adjacency",
        .unit = "probability",
        .description = "adjacency of the output norms (Zuo et al. Sec. 5.4, Table 6; docs/model.md section 7): over "
                       "rows k and pairs i < j < k the share with ||x_i|| < ||x_j||, ties 1/2; 0.5 = no order",
        .group = MetricGroup::order,
        .field = [](LayerStats& l) -> Estimate& { return l.norm_adjacency; },
        .ties = true,
        .random_weights_only = true,
        .embeddings = true,
        .unit_interval = true,
        .chance = 0.5,
        .sweepable = true,
        .slot = &AccumLayout::norm_adjacency,
        .ties_slot = &AccumLayout::norm_adjacency_ties,
        .exists = has_adjacency_rows,
    },
    MetricInfo{
        .key = "delta_r2",
        .label = "dR^2 of S",
        .name = "leakage dR^2 of the logits S",
        .unit = "share of variance",
        .description = "absolute-position leakage dR^2 of the logits (Ruscio et al. Eq. 4, docs/model.md section 8): "
                       "the share of the scores' variance the query position explains beyond the relative baseline",
        .group = MetricGroup::leakage,
        .field = [](LayerStats& l) -> Estimate& { return l.leakage.delta_r2; },
        .head_field = [](HeadStats& h) -> Estimate& { return h.leakage.delta_r2; },
        .sweepable = true,
    },
    MetricInfo{
        .key = "weight_delta_r2",
        .label = "dR^2 of A",
        .name = "leakage dR^2 of the weights A",
        .unit = "share of variance",
        .description = "leakage dR^2 of the attention weights A (Ruscio et al. Eq. 3: the softmax denominator; "
                       "docs/model.md section 8)",
        .group = MetricGroup::leakage,
        .field = [](LayerStats& l) -> Estimate& { return l.weight_leakage.delta_r2; },
        .sweepable = true,
    },
    MetricInfo{
        .key = "sink_weight",
        .label = "weight on key 0",
        .name = "weight on key 0 (attention sink)",
        .unit = "attention weight",
        .description = "the weight on key 0, the attention sink (docs/model.md section 10): per sample the mean of "
                       "A_i0 over the query rows i >= 1 whose keys include 0 (head-mean map), averaged over samples",
        .group = MetricGroup::attention_sink,
        .field = [](LayerStats& l) -> Estimate& { return l.sink_weight; },
        .unit_interval = true,
        .sweepable = true,
        .sweep_error = sink_weight_sweep_error,
        .slot = &AccumLayout::sink_weight,
        .exists = key0_seen,
    },
};

}  // namespace

const Estimate& MetricInfo::of(const LayerStats& l) const {
  // The getter is written once for both: it reads, and a const layer hands back a const reference.
  return field(const_cast<LayerStats&>(l));
}

const Estimate& MetricInfo::of(const HeadStats& h) const { return head_field(const_cast<HeadStats&>(h)); }

std::span<const MetricInfo> metric_table() { return kMetrics; }

const MetricInfo* find_metric(std::string_view key) {
  for (const MetricInfo& m : kMetrics)
    if (m.key == key) return &m;
  return nullptr;
}

Estimate estimate_of(const LayerStats& l, const MetricInfo& m) {
  Estimate e = m.of(l);
  if (!m.ties) e.ties = std::nan("");
  return e;
}

}  // namespace maskscope
