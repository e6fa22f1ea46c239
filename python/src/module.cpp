// The extension module _maskscope: the core's settings table (names, help, kinds, defaults, which the package
// turns into keyword checks and docstrings), the closed forms, and the parts in bind_*.cpp.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "settings_args.hpp"
#include "core/model/settings_text.hpp"
#include "core/model/theory.hpp"
#include "core/model/version.hpp"
#include "core/run/sweep_spec.hpp"

namespace py = pybind11;
using namespace maskscope;

namespace {

const char* kind_name(SettingKind k) {
  switch (k) {
    case SettingKind::real: return "real";
    case SettingKind::whole: return "whole";
    case SettingKind::u64: return "u64";
    case SettingKind::optional_real: return "optional_real";
    case SettingKind::boolean: return "boolean";
    case SettingKind::enumeration: return "enumeration";
    case SettingKind::text: return "text";
    case SettingKind::mask: return "mask";
  }
  return "text";
}

}  // namespace

PYBIND11_MODULE(_maskscope, m) {
  m.doc() = "maskscope's core (maskscope_core) for Python; use the package maskscope, which documents it";
  m.attr("version") = kVersion;
  m.def(
      "setting_table",
      [] {
        py::list out;
        for (const SettingInfo& f : setting_table()) {
          py::list names;
          for (std::size_t i = 0; i < f.names.count; ++i) names.append(std::string(f.names.name_at(i)));
          out.append(py::make_tuple(f.flag, f.key, f.help, kind_name(f.kind), default_text(f.key),
                                    f.family ? py::object(py::str(std::string(to_string(*f.family)))) : py::none(),
                                    f.not_swept == nullptr, names));
        }
        return out;
      },
      "The settings table (core/model/settings.hpp), one tuple per setting in the CLI's order: (flag, key, help, "
      "kind, default as text, family or None for both, sweepable, enum names)");
  m.def("setting_key_of", &setting_key_of, "The setting key of a flag or key name; '' if none");
  m.def("sweep_metric_names", [] { return sweep_metric_names_text(); });
  m.def(
      "h_of_j_theory",
      [](const maskscope::py_module::SettingTexts& given, bool with_inv_sqrt_d) {
        // n, d, alpha and gamma checked as `maskscope-cli theory` checks them: the settings' ranges.
        Settings s;
        maskscope::py_module::Problems problems;
        maskscope::py_module::apply_setting_texts(given, s, problems);
        problems.raise_if_any();
        const std::vector<double> h = theory::ln_recency_h_curve(s.n, s.d, s.alpha, s.gamma, with_inv_sqrt_d);
        py::array_t<double> out(py::ssize_t(h.size()));
        std::copy(h.begin(), h.end(), out.mutable_data());
        return out;
      },
      py::arg("settings"), py::arg("with_inv_sqrt_d") = true,
      "LN-recency Eq. 42: h(j) for j = 1..n (evaluated divided by e^sqrt(d)); n, d, alpha, gamma as (key, text)");
  maskscope::py_module::bind_snapshot(m);
  maskscope::py_module::bind_run(m);
  maskscope::py_module::bind_sweep(m);
  maskscope::py_module::bind_analyze(m);
  maskscope::py_module::bind_train(m);
}
