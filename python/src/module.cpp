// The extension module _maskscope: the core's settings table (names, help, kinds, defaults, which the package
// turns into keyword checks and docstrings), the closed forms, and the parts in bind_*.cpp.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "core/model/settings_text.hpp"
#include "core/model/theory.hpp"
#include "core/model/version.hpp"
#include "core/run/sweep_spec.hpp"

namespace py = pybind11;
using namespace maskscope;

namespace {

const char* kind_name(SettingValue v) {
  switch (v) {
    case SettingValue::real: return "real";
    case SettingValue::whole: return "whole";
    case SettingValue::name: return "name";
  }
  return "name";
}

}  // namespace

PYBIND11_MODULE(_maskscope, m) {
  m.doc() = "maskscope's core (maskscope_core) for Python; use the package maskscope, which documents it";
  m.attr("version") = kVersion;
  m.def(
      "setting_flags",
      [] {
        py::list out;
        for (const SettingFlag& f : setting_flags())
          out.append(py::make_tuple(f.flag, f.key, f.help, kind_name(f.value), default_text(f.key)));
        return out;
      },
      "Every setting of `maskscope-cli run`: (flag, key, help, kind, default as text)");
  m.def("setting_key_of", &setting_key_of, "The setting key of a flag or key name; '' if none");
  m.def("sweep_metric_names", [] { return sweep_metric_names_text(); });
  m.def(
      "h_of_j_theory",
      [](int n, int d, double alpha, double gamma, bool with_inv_sqrt_d) {
        const std::vector<double> h = theory::ln_recency_h_curve(n, d, alpha, gamma, with_inv_sqrt_d);
        py::array_t<double> out(py::ssize_t(h.size()));
        std::copy(h.begin(), h.end(), out.mutable_data());
        return out;
      },
      py::arg("n"), py::arg("d"), py::arg("alpha"), py::arg("gamma"), py::arg("with_inv_sqrt_d") = true,
      "LN-recency Eq. 42: h(j) for j = 1..n (evaluated divided by e^sqrt(d))");
  maskscope::py_module::bind_snapshot(m);
  maskscope::py_module::bind_run(m);
  maskscope::py_module::bind_sweep(m);
  maskscope::py_module::bind_analyze(m);
}
