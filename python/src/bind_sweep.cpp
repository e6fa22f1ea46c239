// maskscope.sweep: a metric against one or two settings (core/run/sweep.hpp), checked as `maskscope-cli sweep`
// checks its flags (app/cli/cmd_sweep.cpp), with the CLI's messages; the result as the CLI's sweep file and
// as arrays over the points (maskscope/_results.py shapes them by the swept settings).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "bind_snapshot.hpp"
#include "bindings.hpp"
#include "interruptible.hpp"
#include "settings_args.hpp"
#include "core/run/kernel_info.hpp"
#include "core/model/settings_text.hpp"
#include "core/model/strict_number.hpp"
#include "core/model/version.hpp"
#include "core/run/resources.hpp"
#include "core/run/sweep.hpp"
#include "core/run/sweep_output.hpp"
#include "core/stats/accumulator.hpp"

namespace maskscope::py_module {

namespace py = pybind11;

namespace {

struct PySweep {
  std::shared_ptr<const SweepState> state;
  std::vector<SweepAxis> axes;
  SweepMetric metric;
  double se = 0;
  std::int64_t cap = 0;  // each point's samples at most
};

// As the CLI (sweep_memory_refusal, sweep_spec.hpp).
void check_memory(const std::vector<Settings>& points, int threads) {
  if (std::string why = sweep_memory_refusal(points, threads); !why.empty()) throw py::value_error("vary: " + why);
}

std::shared_ptr<PySweep> sweep(const std::vector<std::pair<std::string, std::string>>& vary, const SettingTexts& fixed,
                               const std::string& metric_text, const std::string& se_text, const py::object& progress) {
  Problems problems;
  bool gamma_given = false;
  const Settings base = checked_settings(fixed, problems, gamma_given);
  auto out = std::make_shared<PySweep>();
  if (vary.empty() || vary.size() > kSweepMaxAxes)
    problems.add("vary", std::to_string(vary.size()) + " settings; valid: one or two");
  for (const auto& [name, list] : vary) {
    try {
      out->axes.push_back(parse_sweep_axis(name + "=" + list));
    } catch (const std::exception& e) {
      problems.add("vary", e.what());
      continue;
    }
    for (const auto& given : fixed)
      if (setting_key_of(given.first) == out->axes.back().key)
        problems.add("vary", out->axes.back().key + " is swept and also given as a keyword: give it once");
  }
  try {
    out->metric = parse_sweep_metric(metric_text);
  } catch (const std::exception& e) { problems.add("metric", e.what()); }
  if (!se_text.empty()) {
    try {
      out->se = real_number("se", number_from_text("se", se_text), 0, 1e9);
    } catch (const std::exception& e) { problems.lines.push_back(e.what()); }
  }
  std::vector<Settings> points;
  if (problems.empty() && out->axes.size() == vary.size()) {
    try {
      points = sweep_points(base, out->axes, gamma_given);
    } catch (const std::exception& e) { problems.add("vary", e.what()); }
    for (const Settings& p : points)
      if (std::string why = sweep_metric_error(out->metric, p); !why.empty()) {
        problems.add("metric", why);
        break;
      }
    for (const auto& given : fixed) {  // a fixed setting of the other family than a point's would be ignored there
      const std::string key = setting_key_of(given.first);
      const std::optional<Model> family = setting_family(key);
      if (!family) continue;
      for (const Settings& p : points)
        if (*family != p.model) {
          problems.add(key, "applies to --model " + std::string(to_string(*family)) +
                                " only (a point of this sweep is --model " + std::string(to_string(p.model)) + ")");
          break;
        }
    }
  }
  problems.raise_if_any();
  check_memory(points, resolved_threads(base));
  out->cap = base.samples;
  SweepOptions o;
  o.metric = out->metric;
  o.target_se = out->se;
  o.threads = base.threads;
  std::unique_ptr<Sweep> sw;
  {
    py::gil_scoped_release nogil;
    sw = std::make_unique<Sweep>(points, o);
  }
  auto tick = [&] {
    if (progress.is_none()) return;
    const auto state = sw->snapshot();
    std::int64_t samples = 0, done = 0;
    for (const SweepPoint& p : state->points) {
      samples += p.samples;
      done += p.done;
    }
    progress(done, state->points.size(), samples, state->stages);
  };
  auto finish = [&] {
    py::gil_scoped_release nogil;
    sw.reset();
  };
  try {
    run_interruptibly([&] { sw->wait(); }, [&] { sw->cancel(); }, tick);
  } catch (...) {
    finish();
    throw;
  }
  out->state = sw->snapshot();
  finish();
  if (!out->state->error.empty()) throw std::runtime_error(out->state->error);  // e.g. out of memory in a stage
  return out;
}

const SweepPoint& point(const PySweep& s, std::size_t i) {
  if (i >= s.state->points.size()) throw py::index_error("no such point");
  return s.state->points[i];
}

// value, se and ties of the metric per point and layer (NaN past a point's layers), samples and stopped_early.
py::tuple metric_table(const PySweep& s) {
  const std::size_t P = s.state->points.size();
  std::size_t L = 0;
  for (const SweepPoint& p : s.state->points) L = std::max(L, std::size_t(p.settings.layers));
  py::array_t<double> value({P, L}), se({P, L}), ties({P, L});
  py::array_t<std::int64_t> samples(py::ssize_t(P), nullptr);
  py::array_t<bool> early(py::ssize_t(P), nullptr);
  std::fill(value.mutable_data(), value.mutable_data() + P * L, NAN);
  std::fill(se.mutable_data(), se.mutable_data() + P * L, NAN);
  std::fill(ties.mutable_data(), ties.mutable_data() + P * L, NAN);
  for (std::size_t i = 0; i < P; ++i) {
    const SweepPoint& p = s.state->points[i];
    samples.mutable_data()[i] = p.samples;
    early.mutable_data()[i] = p.stopped_early;
    if (!p.snapshot) continue;
    for (std::size_t k = 0; k < p.snapshot->layers.size() && k < L; ++k) {
      const Estimate v = metric_value(p.snapshot->layers[k], s.metric);
      value.mutable_data()[i * L + k] = v.mean;
      se.mutable_data()[i * L + k] = v.se;
      ties.mutable_data()[i * L + k] = v.ties;
    }
  }
  return py::make_tuple(value, se, ties, samples, early);
}

}  // namespace

void bind_sweep(py::module_& m) {
  py::class_<PySweep, std::shared_ptr<PySweep>>(m, "_Sweep", "A finished sweep (maskscope.SweepResult reads it)")
      .def("json", [](const PySweep& s) { return sweep_json(s.axes, s.metric, *s.state, s.se, s.cap); })
      .def("vary_json", [](const PySweep& s) { return sweep_vary_json(s.axes).dump(); })
      .def("point_json", [](const PySweep& s, std::size_t i) { return sweep_point_json(point(s, i)).dump(); })
      .def("point_snapshot",
           [](const PySweep& s, std::size_t i) {
             const SweepPoint& p = point(s, i);
             auto out = std::make_shared<PySnapshot>();
             out->snap = p.snapshot;
             out->extra = {{"maskscope_version", kVersion}, {"kernel", kernel_name(p.settings)}};
             return out;
           })
      .def_property_readonly("point_count", [](const PySweep& s) { return s.state->points.size(); })
      .def_property_readonly("metric", [](const PySweep& s) { return sweep_metric_name(s.metric); })
      .def_property_readonly("se", [](const PySweep& s) { return s.se; })
      .def_property_readonly("elapsed_s", [](const PySweep& s) { return s.state->elapsed_s; })
      .def_property_readonly("stages", [](const PySweep& s) { return s.state->stages; })
      .def("metric_table", &metric_table);
  m.def("_sweep", &sweep, py::arg("vary"), py::arg("fixed"), py::arg("metric"), py::arg("se"), py::arg("progress"),
        "The core's sweep: vary as (name, LIST text) pairs, fixed settings as (key, text) pairs");
}

}  // namespace maskscope::py_module
