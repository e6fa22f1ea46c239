// Serialisation of settings and snapshots; non-finite numbers (masked entries) become null.
#include "core/formats/result_json.hpp"

#include "core/model/settings_text.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace maskscope {

namespace {

nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json matrix(const Map& m, int n) {
  nlohmann::json rows = nlohmann::json::array();
  for (int i = 0; i < n; ++i) {
    nlohmann::json row = nlohmann::json::array();
    for (int j = 0; j < n; ++j) row.push_back(number_or_null(m(i, j)));
    rows.push_back(std::move(row));
  }
  return rows;
}

// docs/model.md section 8's keys of one map's leakage besides its estimate (the metric table's delta_r2).
void add_leakage_details(nlohmann::json& out, const Leakage& k) {
  out["delta_r2_mean_map"] = number_or_null(k.delta_r2_mean_map);
  out["r2_base"] = number_or_null(k.r2_base);
  nlohmann::json bins = nlohmann::json::array();
  for (const LeakageBin& b : k.bins)
    bins.push_back({{"from", b.from}, {"to", b.to}, {"delta_r2", number_or_null(b.delta_r2)}});
  out["delta_r2_bins"] = std::move(bins);
}

nlohmann::json vector_json(const std::vector<double>& v) {
  nlohmann::json out = nlohmann::json::array();
  for (double x : v) out.push_back(number_or_null(x));
  return out;
}

// Zuo et al.'s Fig. 2 and Fig. 13 histograms of one layer (snapshot.hpp's LayerHistograms).
nlohmann::json histograms_json(const LayerHistograms& h) {
  nlohmann::json out = {
      {"difference_range", {-1.0, 1.0}},
      {"sim_ab_minus_sim_ac", vector_json(h.forward_difference)},
      {"sim_cb_minus_sim_ca", vector_json(h.backward_difference)},
      {"adjacency_per_sample", vector_json(h.adjacency)},
  };
  add_estimate(out, "sim_ab_minus_sim_ac_above_zero", h.forward_above, false);
  add_estimate(out, "sim_cb_minus_sim_ca_above_zero", h.backward_above, false);
  if (!h.rp.empty()) out["rp_per_sample"] = vector_json(h.rp);
  return out;
}

// The stage Gram matrices of one layer (docs/model.md section 12), keyed by stage name: the stages its
// family has.
nlohmann::json stage_grams_json(const LayerStats& l, int n) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [stage, name] : kStageNames) {
    const StageGram& g = l.stages[std::size_t(stage)];
    if (g.gram_mean.empty()) continue;
    out[std::string(name)] = {{"gram_mean", matrix(g.gram_mean, n)},
                              {"gram_se", matrix(g.gram_se, n)},
                              {"cosine_mean", matrix(g.cosine_mean, n)},
                              {"cosine_se", matrix(g.cosine_se, n)}};
  }
  return out;
}

}  // namespace

void add_estimate(nlohmann::json& out, std::string_view key, const Estimate& e, bool ties) {
  const std::string k(key);
  out[k] = number_or_null(e.mean);
  out[k + "_se"] = number_or_null(e.se);
  if (ties) out[k + "_ties"] = number_or_null(e.ties);
  // Why it is null or has SE 0 at float resolution (docs/model.md section 4.1); absent otherwise.
  if (e.note != EstimateNote::none) out[k + "_note"] = std::string(note_text(e.note));
}

void add_metrics(nlohmann::json& out, const LayerStats& l, bool random_weights, MetricGroup only) {
  for (const MetricInfo& m : metric_table())
    if ((random_weights || !m.random_weights_only) && (only == MetricGroup::all || m.group == only))
      add_estimate(out, m.key, m.of(l), m.ties);
}

nlohmann::json leakage_layer_json(const LayerStats& l) {
  nlohmann::json out = {{"layer", l.layer}};
  add_leakage_details(out, l.leakage);
  add_metrics(out, l, false, MetricGroup::leakage);
  return out;
}

nlohmann::json ratio_json(const Ratio& r) {
  nlohmann::json out = {{"value", number_or_null(r.value)}, {"se", number_or_null(r.se)}};
  if (r.note != EstimateNote::none) out["note"] = std::string(note_text(r.note));
  return out;
}

nlohmann::json snapshot_to_json(const Snapshot& snap, bool maps) {
  const int n = snap.settings.n;
  const bool rw = snap.settings.random_weights();
  nlohmann::json layers = nlohmann::json::array();
  for (const LayerStats& l : snap.layers) {
    nlohmann::json& layer = layers.emplace_back(nlohmann::json{
        {"layer", l.layer},
        {"score_diag_normalized_q01", number_or_null(l.score_diag_q01)},
        {"score_diag_normalized_q99", number_or_null(l.score_diag_q99)},
    });
    if (maps) {
      layer["score_mean"] = matrix(l.score_mean, n);
      layer["score_se"] = matrix(l.score_se, n);
      layer["weight_mean"] = matrix(l.weight_mean, n);
      layer["weight_se"] = matrix(l.weight_se, n);
      layer["cosine_mean"] = matrix(l.cosine_mean, n);
      layer["cosine_se"] = matrix(l.cosine_se, n);
      layer["score_diag_normalized"] = matrix(l.score_diag_normalized, n);
      layer["norm_mean"] = vector_json(l.norm_mean);
      layer["norm_se"] = vector_json(l.norm_se);
    }
    add_leakage_details(layer, l.leakage);
    add_metrics(layer, l, rw);
    if (rw) {  // docs/model.md section 7: each head's estimates (its RP and leakage), numbered 1..H
      nlohmann::json heads = nlohmann::json::array();
      for (std::size_t h = 0; h < l.heads.size(); ++h) {
        nlohmann::json& head = heads.emplace_back(nlohmann::json{{"head", h + 1}});
        for (const MetricInfo& m : metric_table())
          if (m.head_field) add_estimate(head, m.key, m.of(l.heads[h]), m.ties);
      }
      layer["heads"] = std::move(heads);
      if (!l.histograms.forward_difference.empty()) layer["histograms"] = histograms_json(l.histograms);
    }
    if (snap.settings.stage_grams && maps) layer["stage_grams"] = stage_grams_json(l, n);
  }
  nlohmann::json out = {
      {"config", settings_to_json(snap.settings)}, {"samples", snap.samples_done}, {"elapsed_s", snap.elapsed_s},
      {"samples_per_s", snap.samples_per_s},       {"finished", snap.finished},    {"layers", std::move(layers)},
  };
  if (!snap.embeddings.empty()) {  // layer 0 of the random-weight family
    const LayerStats& e = snap.embeddings.front();
    nlohmann::json& emb = out["embeddings"] = nlohmann::json::object();
    if (maps) {
      emb["cosine_mean"] = matrix(e.cosine_mean, n);
      emb["cosine_se"] = matrix(e.cosine_se, n);
      emb["norm_mean"] = vector_json(e.norm_mean);
      emb["norm_se"] = vector_json(e.norm_se);
    }
    for (const MetricInfo& m : metric_table())
      if (m.embeddings) add_estimate(emb, m.key, m.of(e), m.ties);
    if (!e.histograms.forward_difference.empty()) emb["histograms"] = histograms_json(e.histograms);
  }
  return out;
}

nlohmann::json probe_table_to_json(const ProbeTable& t, const ProbeRequest& r) {
  nlohmann::json layers = nlohmann::json::array();
  for (const ProbeLayer& l : t.layers) {
    nlohmann::json layer = {{"layer", l.layer}};
    for (ProbeFeature f : r.features)
      if (const auto& s = l.score[std::size_t(f)])
        layer[std::string(to_string(f))] = {{"pearson_r", s->pearson_r},
                                            {"pearson_r_se", s->pearson_r_se},
                                            {"nrmse", s->nrmse},
                                            {"nrmse_se", s->nrmse_se}};
    layers.push_back(layer);
  }
  nlohmann::json features = nlohmann::json::array();
  for (ProbeFeature f : r.features) features.push_back(std::string(to_string(f)));
  const ProbeOptions& o = r.probe;
  nlohmann::json probe = {
      {"kind", std::string(to_string(o.kind))}, {"features", features},     {"train", r.train}, {"test", r.test},
      {"se", "bootstrap over test sequences"},  {"bootstrap", o.bootstrap}, {"seed", o.seed}};
  if (o.kind == ProbeKind::ridge) probe["ridge"] = o.ridge;
  else
    probe["mlp"] = {{"width", o.mlp_width},
                    {"epochs", o.mlp_epochs},
                    {"batch", o.mlp_batch},
                    {"learning_rate", o.mlp_learning_rate}};
  return {{"probe", probe}, {"layers", layers}, {"collect_s", t.collect_s}, {"fit_s", t.fit_s}};
}

}  // namespace maskscope
