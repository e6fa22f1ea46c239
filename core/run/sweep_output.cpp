// The sweep file and its CSV table (sweep_output.hpp).
#include "core/run/sweep_output.hpp"

#include <charconv>
#include <cmath>

#include "core/formats/result_json.hpp"
#include "core/run/kernel_info.hpp"
#include "core/model/strict_number.hpp"
#include "core/model/version.hpp"

namespace maskscope {

namespace {

// A number for the CSV: the shortest text that reads back as it; empty for NaN.
std::string csv_number(double x) {
  if (!std::isfinite(x)) return "";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

// RFC 4180: a field with a comma, quote or line break is quoted, and its quotes doubled.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

// An axis value as JSON: a number for numeric settings, else the name as typed.
nlohmann::json value_json(const std::string& key, const std::string& text) {
  const bool named = key == "norm" || key == "scale" || key == "mask" || key == "model" || key == "weights";
  return named ? nlohmann::json(text) : number_from_text(key, text);
}

}  // namespace

nlohmann::json sweep_vary_json(const std::vector<SweepAxis>& axes) {
  nlohmann::json vary = nlohmann::json::array();
  for (const SweepAxis& a : axes) {
    nlohmann::json values = nlohmann::json::array();
    for (const std::string& v : a.values) values.push_back(value_json(a.key, v));
    vary.push_back({{"name", a.key}, {"values", std::move(values)}});
  }
  return vary;
}

nlohmann::json sweep_point_json(const SweepPoint& p) {
  // The run's own JSON, so that `layers` is what `run` writes for these settings and samples (one code path).
  const nlohmann::json run = snapshot_to_json(*p.snapshot);
  nlohmann::json point = {{"settings", run.at("config")},
                          {"samples", p.samples},
                          {"stopped_early", p.stopped_early},
                          {"kernel", kernel_name(p.settings)},
                          {"layers", run.at("layers")}};
  if (run.contains("embeddings")) point["embeddings"] = run.at("embeddings");
  return point;
}

std::string sweep_file_json(nlohmann::json vary, const std::string& metric, double se, std::int64_t samples,
                            double elapsed_s, nlohmann::json points) {
  nlohmann::json j = {{"vary", std::move(vary)},    {"metric", metric},       {"se", se},
                      {"samples", samples},         {"elapsed_s", elapsed_s}, {"maskscope_version", kVersion},
                      {"points", std::move(points)}};
  return j.dump(1) + "\n";
}

std::string sweep_json(const std::vector<SweepAxis>& axes, const SweepMetric& metric, const SweepState& state,
                       double se, std::int64_t samples) {
  nlohmann::json points = nlohmann::json::array();
  for (const SweepPoint& p : state.points) points.push_back(sweep_point_json(p));
  return sweep_file_json(sweep_vary_json(axes), sweep_metric_name(metric), se, samples, state.elapsed_s,
                         std::move(points));
}

SweepTablePoint sweep_table_point(const std::vector<SweepAxis>& axes, const SweepMetric& metric, const SweepPoint& p) {
  SweepTablePoint t;
  for (const SweepAxis& a : axes) t.values.push_back(axis_value_text(p.settings, a.key));
  t.samples = p.samples;
  if (!p.snapshot) return t;  // a point of a sweep in progress without a picture yet: no rows
  for (const LayerStats& l : p.snapshot->layers) t.layers.emplace_back(l.layer, metric_value(l, metric));
  return t;
}

std::string sweep_csv_table(const std::vector<std::string>& keys, const std::string& metric,
                            const std::vector<SweepTablePoint>& points) {
  std::string out;
  for (const std::string& k : keys) out += k + ",";
  out += "layer,metric,value,se,samples,ties\n";
  const std::string name = csv_field(metric);
  for (const SweepTablePoint& p : points)
    for (const auto& [layer, v] : p.layers) {
      for (const std::string& value : p.values) out += csv_field(value) + ",";
      out += std::to_string(layer) + "," + name + "," + csv_number(v.mean) + "," + csv_number(v.se) + "," +
             std::to_string(p.samples) + "," + csv_number(v.ties) + "\n";
    }
  return out;
}

std::string sweep_csv(const std::vector<SweepAxis>& axes, const SweepMetric& metric, const SweepState& state) {
  std::vector<std::string> keys;
  for (const SweepAxis& a : axes) keys.push_back(a.key);
  std::vector<SweepTablePoint> points;
  for (const SweepPoint& p : state.points) points.push_back(sweep_table_point(axes, metric, p));
  return sweep_csv_table(keys, sweep_metric_name(metric), points);
}

}  // namespace maskscope
