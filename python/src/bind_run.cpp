// maskscope.run: the Monte Carlo simulation (core/run/runner.hpp) with the settings of `maskscope-cli run`,
// its JSON keys (maskscope_version, kernel, threads_used) added as the CLI adds them.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

#include "bind_snapshot.hpp"
#include "bindings.hpp"
#include "interruptible.hpp"
#include "settings_args.hpp"
#include "core/run/kernel_info.hpp"
#include "core/model/version.hpp"
#include "core/run/runner.hpp"

namespace maskscope::py_module {

namespace py = pybind11;

namespace {

std::shared_ptr<PySnapshot> run(const SettingTexts& given, const py::object& progress) {
  Settings s = run_settings(given);
  fit_threads_to_memory(s);
  RunOptions o;
  // As the CLI: snapshots only feed the progress (the numbers do not depend on the interval).
  o.publish_interval = std::chrono::milliseconds(100);
  std::unique_ptr<Run> r;
  {
    py::gil_scoped_release nogil;
    r = std::make_unique<Run>(s, o);
  }
  auto tick = [&] {
    if (!progress.is_none()) progress(r->samples_done(), s.samples);
  };
  auto finish = [&] {  // the workers are joined without the GIL
    py::gil_scoped_release nogil;
    r.reset();
  };
  try {
    run_interruptibly([&] { r->wait(); }, [&] { r->cancel(); }, tick);
  } catch (...) {
    finish();
    throw;
  }
  // A worker's failure (a file that went away, memory) ends the run as done: raise it, as the CLI exits 1,
  // rather than return the samples done so far as a result.
  if (std::string why = r->error(); !why.empty()) {
    finish();
    throw std::runtime_error("run failed: " + why);
  }
  auto out = std::make_shared<PySnapshot>();
  out->snap = r->snapshot();
  finish();
  out->extra = {{"maskscope_version", kVersion}, {"kernel", kernel_name(s)}, {"threads_used", resolved_threads(s)}};
  return out;
}

}  // namespace

void bind_run(py::module_& m) {
  m.def("_run", &run, py::arg("settings"), py::arg("progress"),
        "The core's run: settings as (key, text) pairs, progress(done, total) or None");
}

}  // namespace maskscope::py_module
