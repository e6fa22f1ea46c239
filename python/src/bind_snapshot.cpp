// The _Snapshot class (bind_snapshot.hpp): a result's JSON (with or without its maps) and each layer's maps as
// n x n NumPy arrays (NaN where masked) and its vectors, by the names of the CLI's JSON keys.
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

std::string PySnapshot::json_text(bool maps) const {
  nlohmann::json j = snapshot_to_json(*snap, maps);
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

// The keys snapshot_to_json(maps = true) adds to a layer (index >= 0) or to the embeddings (-1), as NumPy
// arrays: the maps, the norm vectors, the stage Gram matrices (with stage_grams) and, beyond the JSON, each
// head's maps (under "heads", one dict a head). tests/python/test_maskscope_data.py checks the key sets.
py::dict layer_arrays(const PySnapshot& p, int index) {
  const LayerStats& l = stats(p, index);
  const int n = p.snap->settings.n;
  py::dict d;
  if (index >= 0) {
    d["score_mean"] = map_array(l.score_mean, n);
    d["score_se"] = map_array(l.score_se, n);
    d["weight_mean"] = map_array(l.weight_mean, n);
    d["weight_se"] = map_array(l.weight_se, n);
    d["score_diag_normalized"] = map_array(l.score_diag_normalized, n);
  }
  d["cosine_mean"] = map_array(l.cosine_mean, n);
  d["cosine_se"] = map_array(l.cosine_se, n);
  d["norm_mean"] = vector_array(l.norm_mean);
  d["norm_se"] = vector_array(l.norm_se);
  if (index < 0) return d;
  if (p.snap->settings.stage_grams) {
    py::dict stages;
    for (const auto& [stage, name] : kStageNames) {
      const StageGram& g = l.stages[std::size_t(stage)];
      if (g.gram_mean.empty()) continue;
      py::dict one;
      one["gram_mean"] = map_array(g.gram_mean, n);
      one["gram_se"] = map_array(g.gram_se, n);
      one["cosine_mean"] = map_array(g.cosine_mean, n);
      one["cosine_se"] = map_array(g.cosine_se, n);
      stages[py::str(std::string(name))] = one;
    }
    d["stage_grams"] = stages;
  }
  py::list heads;
  for (const HeadStats& h : l.heads) {
    py::dict one;
    one["score_mean"] = map_array(h.score_mean, n);
    one["score_se"] = map_array(h.score_se, n);
    one["weight_mean"] = map_array(h.weight_mean, n);
    one["weight_se"] = map_array(h.weight_se, n);
    heads.append(one);
  }
  d["heads"] = heads;
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
      .def("json", &PySnapshot::json_text, py::arg("maps") = true,
           "The CLI's JSON of this result, as text (maps=False: without the maps and vectors)")
      .def("arrays", &layer_arrays, py::arg("index"),
           "A layer's maps and vectors (index 0..L-1; -1 the embeddings) as NumPy arrays, by their JSON keys");
}

}  // namespace maskscope::py_module
