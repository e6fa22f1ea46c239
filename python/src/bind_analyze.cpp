// maskscope.analyze and analyze_folder: a real model's tensors (core/formats/tensor_analysis.hpp), NumPy arrays
// read in place (no copy) or a tensor folder, with the checks and messages of `maskscope-cli analyze`
// (app/cli/cmd_analyze.cpp), non-finite values refused unless allowed.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "bind_snapshot.hpp"
#include "bindings.hpp"
#include "interruptible.hpp"
#include "core/formats/tensor_analysis.hpp"
#include "core/model/version.hpp"
#include "core/run/resources.hpp"

namespace maskscope::py_module {

namespace py = pybind11;

namespace {

// A NumPy array as the core reads it: C order, native (little-endian) float16/32/64, or (bfloat16) the 16-bit
// integer view of bfloat16 values that maskscope/_api.py makes of a torch or ml_dtypes array (no copy).
// maskscope/_api.py makes any other layout or byte order so (copying only then); anything else is a TypeError.
TensorMemory memory_of(const py::array& a, const std::string& name, bool bfloat16) {
  const py::dtype dt = a.dtype();
  const bool bf16 = bfloat16 && (dt.kind() == 'i' || dt.kind() == 'u') && dt.itemsize() == 2;
  if (!bf16 && (dt.kind() != 'f' || (dt.itemsize() != 2 && dt.itemsize() != 4 && dt.itemsize() != 8)))
    throw py::type_error(name + ": dtype " + dt.attr("name").cast<std::string>() +
                         " is not supported; expected float16, bfloat16, float32 or float64");
  if (!(a.flags() & py::array::c_style)) throw py::type_error(name + ": expected a C-contiguous array");
  TensorMemory m;
  m.data = a.data();
  m.type = bf16 ? NpyType::bf16 : dt.itemsize() == 2 ? NpyType::f16 : dt.itemsize() == 4 ? NpyType::f32 : NpyType::f64;
  for (py::ssize_t k = 0; k < a.ndim(); ++k) m.shape.push_back(std::int64_t(a.shape(k)));
  return m;
}

// Layers chosen, memory checked, then the analysis on its own thread (interruptible.hpp). Returns the result
// and, when prompts were left out (allow_nonfinite), what was left out (else None).
py::tuple analyze_set(TensorSet& t, const std::string& layers, bool allow_nonfinite, const py::object& progress) {
  if (!layers.empty())
    if (std::string why = select_layers(t, layers); !why.empty()) throw py::value_error("layers: " + why);
  t.allow_nonfinite = allow_nonfinite;
  const std::uint64_t need = tensor_analysis_bytes(t), available = available_memory_bytes();
  if (available > 0 && need > available * 8 / 10)
    throw py::value_error(std::to_string(t.L) + " layers x " + std::to_string(t.H) +
                          " heads at T = " + std::to_string(t.T) + " need about " + bytes_text(need) + "; " +
                          bytes_text(available) + " available. Analyse fewer layers (layers=...) or shorter prompts.");
  std::atomic<bool> cancel{false};
  AnalysisReport report;
  Snapshot snap;
  const auto t0 = std::chrono::steady_clock::now();
  auto tick = [&] {
    if (!progress.is_none()) progress(report.prompts_done.load(), t.P);
  };
  try {
    run_interruptibly([&] { snap = analyze_tensors(t, &cancel, &report); }, [&] { cancel.store(true); }, tick);
  } catch (const std::runtime_error& e) {  // the tensors refused (non-finite values)
    throw py::value_error(e.what());
  }
  snap.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  auto out = std::make_shared<PySnapshot>();
  out->snap = std::make_shared<const Snapshot>(std::move(snap));
  out->extra = {{"config", tensor_config_json(t, &report.nonfinite)}, {"maskscope_version", kVersion}};
  py::object left_out = py::none();
  if (report.nonfinite.values > 0) {
    py::dict d;
    d["prompts"] = report.nonfinite.prompts;
    d["nonfinite_values"] = report.nonfinite.values;
    d["first"] = report.nonfinite.first;
    d["text"] = "left out " + std::to_string(report.nonfinite.prompts) + " of " + std::to_string(t.P) +
                " prompts: " + nonfinite_text(report.nonfinite, t.P);
    left_out = d;
  }
  return py::make_tuple(out, left_out);
}

py::tuple analyze(const py::array& logits, const std::optional<py::array>& weights,
                  const std::optional<py::array>& hidden, const std::string& mask, const std::string& layers,
                  bool allow_nonfinite, const std::vector<bool>& bfloat16, const py::object& progress) {
  const auto bf16 = [&](std::size_t k) { return k < bfloat16.size() && bfloat16[k]; };
  const TensorMemory l = memory_of(logits, "logits", bf16(0));
  std::optional<TensorMemory> w, h;
  if (weights) w = memory_of(*weights, "weights", bf16(1));
  if (hidden) h = memory_of(*hidden, "hidden", bf16(2));
  TensorSet t;
  try {
    t = tensors_from_memory(l, w ? &*w : nullptr, h ? &*h : nullptr, mask);
  } catch (const std::runtime_error& e) { throw py::value_error(e.what()); }
  // The arrays (held by this call's arguments) stay alive while the analysis reads them.
  return analyze_set(t, layers, allow_nonfinite, progress);
}

py::tuple analyze_folder(const std::string& folder, const std::string& layers, bool allow_nonfinite,
                         const py::object& progress) {
  TensorSet t;
  try {
    t = open_tensors(folder);
  } catch (const std::runtime_error& e) { throw py::value_error(e.what()); }
  return analyze_set(t, layers, allow_nonfinite, progress);
}

}  // namespace

void bind_analyze(py::module_& m) {
  m.def("_analyze", &analyze, py::arg("logits"), py::arg("weights"), py::arg("hidden"), py::arg("mask"),
        py::arg("layers"), py::arg("allow_nonfinite"), py::arg("bfloat16"), py::arg("progress"),
        "The core's analysis of arrays in memory: (result, left_out or None); bfloat16: which of the three "
        "arrays are 16-bit integer views of bfloat16 values");
  m.def("_analyze_folder", &analyze_folder, py::arg("folder"), py::arg("layers"), py::arg("allow_nonfinite"),
        py::arg("progress"), "The core's analysis of a tensor folder: (result, left_out or None)");
}

}  // namespace maskscope::py_module
