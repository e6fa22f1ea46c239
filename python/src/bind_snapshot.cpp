// The _Snapshot class (bind_snapshot.hpp): a layer's numbers, its maps as n x n NumPy arrays (NaN where masked)
// and its vectors, by the names of the CLI's JSON keys.
#include "bind_snapshot.hpp"
#include "bindings.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/formats/result_json.hpp"
#include "core/model/settings_text.hpp"

namespace maskscope::py_module {

namespace py = pybind11;

std::string PySnapshot::json_text() const {
  nlohmann::json j = snapshot_to_json(*snap);
  for (auto it = extra.begin(); it != extra.end(); ++it) j[it.key()] = it.value();
  return j.dump(1) + "\n";
}

namespace {

// Layer `index` (0-based over snap.layers), or the embeddings for -1; IndexError otherwise.
const LayerStats& stats(const PySnapshot& p, int index) {
  if (index == -1 && !p.snap->embeddings.empty()) return p.snap->embeddings.front();
  if (index < 0 || std::size_t(index) >= p.snap->layers.size()) throw py::index_error("no such layer");
  return p.snap->layers[std::size_t(index)];
}

const HeadStats& head_stats(const LayerStats& l, int head) {
  if (head < 0 || std::size_t(head) >= l.heads.size()) throw py::index_error("no such head");
  return l.heads[std::size_t(head)];
}

py::array_t<double> map_array(const Map& m, int n) {
  py::array_t<double> out({py::ssize_t(n), py::ssize_t(n)});
  double* data = out.mutable_data();
  if (m.empty()) {
    for (std::size_t e = 0; e < std::size_t(n) * std::size_t(n); ++e) data[e] = NAN;  // the embeddings' scores
    return out;
  }
  std::vector<double> full;
  m.unpack(full);
  std::copy(full.begin(), full.end(), data);
  return out;
}

py::array_t<double> vector_array(const std::vector<double>& v) {
  py::array_t<double> out(py::ssize_t(v.size()));
  std::copy(v.begin(), v.end(), out.mutable_data());
  return out;
}

// One map of a layer (or of one of its heads) by its JSON key.
const Map& layer_map(const LayerStats& l, const std::string& name, int head) {
  if (head >= 0) {
    const HeadStats& h = head_stats(l, head);
    if (name == "score_mean") return h.score_mean;
    if (name == "score_se") return h.score_se;
    if (name == "weight_mean") return h.weight_mean;
    if (name == "weight_se") return h.weight_se;
    throw py::key_error("a head has score_mean, score_se, weight_mean, weight_se; not '" + name + "'");
  }
  if (name == "score_mean") return l.score_mean;
  if (name == "score_se") return l.score_se;
  if (name == "weight_mean") return l.weight_mean;
  if (name == "weight_se") return l.weight_se;
  if (name == "cosine_mean") return l.cosine_mean;
  if (name == "cosine_se") return l.cosine_se;
  if (name == "score_diag_normalized") return l.score_diag_normalized;
  if (name.rfind("stage.", 0) == 0) {  // "stage.<name>.<gram_mean | gram_se | cosine_mean | cosine_se>"
    const std::size_t dot = name.find('.', 6);
    const auto stage = enum_value(kStageNames, name.substr(6, dot == std::string::npos ? dot : dot - 6));
    if (stage && dot != std::string::npos && !l.stages[std::size_t(*stage)].gram_mean.empty()) {
      const StageGram& g = l.stages[std::size_t(*stage)];
      const std::string what = name.substr(dot + 1);
      if (what == "gram_mean") return g.gram_mean;
      if (what == "gram_se") return g.gram_se;
      if (what == "cosine_mean") return g.cosine_mean;
      if (what == "cosine_se") return g.cosine_se;
    }
    throw py::key_error("no stage map '" + name + "' (a stage the result has, with stage_grams on)");
  }
  throw py::key_error("no map '" + name + "'");
}

void add_estimate(py::dict& d, std::string_view key, const Estimate& e, bool ties) {
  const std::string k(key);
  d[py::str(k)] = e.mean;
  d[py::str(k + "_se")] = e.se;
  if (ties) d[py::str(k + "_ties")] = e.ties;
  // Why it is null (NaN) or has SE 0 at float resolution (docs/model.md section 4.1); absent otherwise.
  if (e.note != EstimateNote::none) d[py::str(k + "_note")] = std::string(note_text(e.note));
}

py::dict layer_scalars(const LayerStats& l) {
  py::dict d;
  d["layer"] = l.layer;
  for (const MetricInfo& m : metric_table()) add_estimate(d, m.key, m.of(l), m.ties);  // metric_table.hpp
  d["delta_r2_mean_map"] = l.leakage.delta_r2_mean_map;
  d["r2_base"] = l.leakage.r2_base;
  d["score_diag_normalized_q01"] = l.score_diag_q01;
  d["score_diag_normalized_q99"] = l.score_diag_q99;
  py::list bins;
  for (const LeakageBin& b : l.leakage.bins) {
    py::dict bin;
    bin["from"] = b.from;
    bin["to"] = b.to;
    bin["delta_r2"] = b.delta_r2;
    bins.append(bin);
  }
  d["delta_r2_bins"] = bins;
  d["heads"] = l.heads.size();
  return d;
}

py::dict head_scalars(const HeadStats& h) {
  py::dict d;
  for (const MetricInfo& m : metric_table())
    if (m.head_field) add_estimate(d, m.key, m.of(h), m.ties);
  return d;
}

// The metric table's rows for Python's Layer and Head (their attributes and docstrings).
py::list metric_rows() {
  py::list rows;
  for (const MetricInfo& m : metric_table()) {
    py::dict row;
    row["key"] = std::string(m.key);
    row["label"] = std::string(m.label);
    row["name"] = std::string(m.name);
    row["unit"] = std::string(m.unit);
    row["description"] = std::string(m.description);
    row["ties"] = m.ties;
    row["head"] = m.head_field != nullptr;
    row["sweepable"] = m.sweepable;
    row["unit_interval"] = m.unit_interval;
    row["chance"] = m.chance;
    rows.append(row);
  }
  return rows;
}

}  // namespace

void bind_snapshot(py::module_& m) {
  m.def("metric_table", &metric_rows,
        "The layer metrics (key, label, name, unit, description, ties, head, sweepable, unit_interval, chance)");
  py::class_<PySnapshot, std::shared_ptr<PySnapshot>>(m, "_Snapshot",
                                                      "A result of the core (maskscope.Result reads it)")
      .def("json", &PySnapshot::json_text, "The CLI's JSON of this result, as text")
      .def_property_readonly("layer_count", [](const PySnapshot& p) { return p.snap->layers.size(); })
      .def_property_readonly("has_embeddings", [](const PySnapshot& p) { return !p.snap->embeddings.empty(); })
      .def_property_readonly("n", [](const PySnapshot& p) { return p.snap->settings.n; })
      .def_property_readonly("samples", [](const PySnapshot& p) { return p.snap->samples_done; })
      .def_property_readonly("elapsed_s", [](const PySnapshot& p) { return p.snap->elapsed_s; })
      .def_property_readonly("samples_per_s", [](const PySnapshot& p) { return p.snap->samples_per_s; })
      .def_property_readonly("finished", [](const PySnapshot& p) { return p.snap->finished; })
      .def_property_readonly("settings_json",
                             [](const PySnapshot& p) { return settings_to_json(p.snap->settings).dump(); })
      .def("scalars", [](const PySnapshot& p, int index) { return layer_scalars(stats(p, index)); })
      .def("head_scalars",
           [](const PySnapshot& p, int index, int head) { return head_scalars(head_stats(stats(p, index), head)); })
      .def(
          "map",
          [](const PySnapshot& p, int index, const std::string& name, int head) {
            return map_array(layer_map(stats(p, index), name, head), p.snap->settings.n);
          },
          py::arg("index"), py::arg("name"), py::arg("head") = -1)
      .def("vector", [](const PySnapshot& p, int index, const std::string& name) {
        const LayerStats& l = stats(p, index);
        if (name == "norm_mean") return vector_array(l.norm_mean);
        if (name == "norm_se") return vector_array(l.norm_se);
        throw py::key_error("no vector '" + name + "'");
      });
}

}  // namespace maskscope::py_module
