// Sweep shards (.msweep): writing, reading, checking and joining them (sweep_shard.hpp).
#include "core/run/sweep_shard.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "core/model/settings_text.hpp"
#include "core/model/version.hpp"

namespace maskscope {

namespace {

constexpr int kShardFormat = 1;  // "maskscope_sweep_shard": the layout of this file

[[noreturn]] void fail(const std::string& name, const std::string& what) {
  throw std::runtime_error(name + ": " + what);
}

nlohmann::json number_or_null(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }
double number_of(const nlohmann::json& j) { return j.is_null() ? std::nan("") : j.get<double>(); }

// "alpha=0.5, norm=none": a point by its swept values, for messages.
std::string point_text(const SweepShard& s, const SweepShard::Point& p) {
  std::string text = "point " + std::to_string(p.index);
  const nlohmann::json& vary = s.sweep.at("vary");
  for (std::size_t a = 0; a < vary.size() && a < p.table.values.size(); ++a)
    text += (a == 0 ? " (" : ", ") + vary[a].at("name").get<std::string>() + "=" + p.table.values[a];
  return text + (vary.empty() ? "" : ")");
}

// Why `b` (of file `b_name`) is not a part of the sweep of `a` (of `a_name`).
std::string difference(const nlohmann::json& a, const std::string& a_name, const nlohmann::json& b,
                       const std::string& b_name) {
  const std::string head = b_name + ": ";
  if (a.value("maskscope_version", "") != b.value("maskscope_version", ""))
    return head + "computed by maskscope " + b.value("maskscope_version", "?") + ", but " + a_name + " by " +
           a.value("maskscope_version", "?") + "; the parts of one sweep must come from one version";
  if (a.value("kernel", "") != b.value("kernel", ""))
    return head + "computed by the '" + b.value("kernel", "?") + "' kernel, but " + a_name + " by '" +
           a.value("kernel", "?") +
           "' (processors of different kinds round differently); compute the parts of one sweep on processors "
           "of one kind";
  std::string diff;
  auto note = [&](const std::string& key, const nlohmann::json& va, const nlohmann::json& vb) {
    diff += (diff.empty() ? "" : ", ") + key + " " + vb.dump() + " (" + a_name + ": " + va.dump() + ")";
  };
  for (auto it = a.begin(); it != a.end(); ++it) {
    const nlohmann::json vb = b.contains(it.key()) ? b.at(it.key()) : nlohmann::json();
    if (it.key() == "base" && it.value().is_object() && vb.is_object()) {
      for (auto s = it.value().begin(); s != it.value().end(); ++s)
        if (!vb.contains(s.key()) || vb.at(s.key()) != s.value())
          note(s.key(), s.value(), vb.contains(s.key()) ? vb.at(s.key()) : nlohmann::json());
    } else if (vb != it.value()) {
      note(it.key(), it.value(), vb);
    }
  }
  return head + "a different sweep from " + a_name + ": " + (diff.empty() ? "its header differs" : diff);
}

}  // namespace

std::vector<std::size_t> sweep_shard_points(std::size_t points, std::int64_t k, std::int64_t n) {
  std::vector<std::size_t> indices;
  for (std::size_t p = std::size_t(k - 1); p < points; p += std::size_t(n)) indices.push_back(p);
  return indices;
}

std::string sweep_shard_error(std::size_t points, std::int64_t k, std::int64_t n) {
  if (n < 1) return "N = " + std::to_string(n) + " shards: N must be at least 1";
  if (k < 1 || k > n)
    return "K = " + std::to_string(k) + " is out of range; valid: K in [1, N] = [1, " + std::to_string(n) + "]";
  if (std::uint64_t(n) > points)
    return "N = " + std::to_string(n) + " shards is more than this sweep's " + std::to_string(points) +
           " points; valid: N in [1, " + std::to_string(points) + "]";
  return "";
}

nlohmann::json sweep_identity(const std::vector<SweepAxis>& axes, const SweepMetric& metric, double se,
                              const Settings& base, std::size_t points, const std::string& kernel) {
  nlohmann::json settings = settings_to_json(base);
  settings.erase("threads");  // the numbers do not depend on it
  return {{"vary", sweep_vary_json(axes)},
          {"metric", sweep_metric_name(metric)},
          {"se", se},
          {"samples", base.samples},
          {"base", std::move(settings)},
          {"points", points},
          {"maskscope_version", kVersion},
          {"kernel", kernel}};
}

SweepShard make_sweep_shard(nlohmann::json sweep, std::int64_t k, std::int64_t n,
                            const std::vector<std::size_t>& indices, const std::vector<SweepAxis>& axes,
                            const SweepMetric& metric, const SweepState& state) {
  SweepShard s;
  s.sweep = std::move(sweep);
  s.k = k;
  s.n = n;
  s.elapsed_s = state.elapsed_s;
  for (std::size_t q = 0; q < indices.size() && q < state.points.size(); ++q)
    s.points.push_back(
        {indices[q], sweep_point_json(state.points[q]), sweep_table_point(axes, metric, state.points[q])});
  return s;
}

std::string sweep_shard_text(const SweepShard& s) {
  nlohmann::json points = nlohmann::json::array();
  for (const SweepShard::Point& p : s.points) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& [layer, v] : p.table.layers)
      rows.push_back({layer, number_or_null(v.value), number_or_null(v.se), number_or_null(v.ties)});
    points.push_back({{"index", p.index}, {"values", p.table.values}, {"metric", std::move(rows)}, {"point", p.json}});
  }
  const nlohmann::json j = {{"maskscope_sweep_shard", kShardFormat},
                            {"sweep", s.sweep},
                            {"shard", {s.k, s.n}},
                            {"elapsed_s", s.elapsed_s},
                            {"points", std::move(points)}};
  return j.dump() + "\n";
}

SweepShard parse_sweep_shard(const std::string& text, const std::string& name) {
  const std::string what = std::string("not a maskscope sweep shard (") + kSweepShardExtension + ")";
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception&) { fail(name, what + ", or truncated: it does not parse as JSON"); }
  if (!j.is_object() || !j.contains("maskscope_sweep_shard")) fail(name, what);
  if (j.at("maskscope_sweep_shard") != kShardFormat)
    fail(name, "a sweep shard of another layout (" + j.at("maskscope_sweep_shard").dump() + "; this maskscope reads " +
                   std::to_string(kShardFormat) + ")");
  SweepShard s;
  std::size_t total = 0;
  try {
    s.sweep = j.at("sweep");
    total = s.sweep.at("points").get<std::size_t>();
    s.k = j.at("shard").at(0).get<std::int64_t>();
    s.n = j.at("shard").at(1).get<std::int64_t>();
    s.elapsed_s = j.at("elapsed_s").get<double>();
    const std::size_t axes = s.sweep.at("vary").size();
    for (const nlohmann::json& p : j.at("points")) {
      SweepShard::Point point;
      point.index = p.at("index").get<std::size_t>();
      point.json = p.at("point");
      point.table.values = p.at("values").get<std::vector<std::string>>();
      point.table.samples = point.json.at("samples").get<std::int64_t>();
      for (const nlohmann::json& r : p.at("metric"))
        point.table.layers.emplace_back(r.at(0).get<int>(),
                                        MetricValue{number_of(r.at(1)), number_of(r.at(2)), number_of(r.at(3))});
      if (point.table.values.size() != axes) throw std::runtime_error("a point without a value of every axis");
      s.points.push_back(std::move(point));
    }
  } catch (const std::exception& e) { fail(name, std::string("corrupt sweep shard: ") + e.what()); }
  if (std::string why = sweep_shard_error(total, s.k, s.n); !why.empty())
    fail(name, "corrupt sweep shard: shard " + std::to_string(s.k) + "/" + std::to_string(s.n) + ": " + why);
  for (const SweepShard::Point& p : s.points)
    if (p.index >= total || p.index % std::size_t(s.n) != std::size_t(s.k - 1))
      fail(name, "corrupt sweep shard: point " + std::to_string(p.index) + " is not one of shard " +
                     std::to_string(s.k) + "/" + std::to_string(s.n) + "'s");
  return s;
}

SweepShard read_sweep_shard(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot be opened");
  const std::string text(std::istreambuf_iterator<char>(in), {});
  return parse_sweep_shard(text, path);
}

SweepShard join_sweep_shards(std::vector<std::pair<SweepShard, std::string>> parts, bool whole) {
  if (parts.empty()) throw std::runtime_error("no files to merge");
  const SweepShard& first = parts.front().first;
  const std::string& first_name = parts.front().second;
  for (const auto& [p, name] : parts) {
    if (p.sweep != first.sweep) throw std::runtime_error(difference(first.sweep, first_name, p.sweep, name));
    if (p.n != first.n)
      throw std::runtime_error(name + ": shard " + std::to_string(p.k) + "/" + std::to_string(p.n) + ", but " +
                               first_name + " is shard " + std::to_string(first.k) + "/" + std::to_string(first.n) +
                               "; the shards of one sweep are K/N of one N");
  }
  const std::size_t total = first.sweep.at("points").get<std::size_t>();
  const std::int64_t N = first.n;
  std::vector<const std::string*> owner(total, nullptr);
  SweepShard out;
  out.sweep = first.sweep;
  for (auto& [p, name] : parts) {
    for (SweepShard::Point& point : p.points) {
      if (owner[point.index])
        throw std::runtime_error(name + " and " + *owner[point.index] + " both hold " + point_text(p, point) +
                                 " (a shard given twice?)");
      owner[point.index] = &name;
      out.points.push_back(std::move(point));
    }
    out.elapsed_s += p.elapsed_s;
  }
  std::vector<std::int64_t> covered;
  for (std::int64_t k = 1; k <= N; ++k) {
    const bool given = std::any_of(parts.begin(), parts.end(), [&](const auto& p) { return p.first.k == k; });
    const std::vector<std::size_t> indices = sweep_shard_points(total, k, N);
    const std::string shard = "shard " + std::to_string(k) + "/" + std::to_string(N);
    if (!given && whole)
      throw std::runtime_error("missing " + shard + " (" + std::to_string(indices.size()) + " of the sweep's " +
                               std::to_string(total) + " points; a shard not computed or not given?)");
    if (!given) continue;
    covered.push_back(k);
    for (std::size_t p : indices)
      if (!owner[p])
        throw std::runtime_error("missing point " + std::to_string(p) + " of " + shard +
                                 ": in none of the parts given (a part not computed or not given?)");
  }
  if (std::int64_t(covered.size()) == N) out.k = out.n = 1;
  else if (covered.size() == 1) out.k = covered.front(), out.n = N;
  else throw std::runtime_error("parts of several shards but not of all " + std::to_string(N));
  std::sort(out.points.begin(), out.points.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
  return out;
}

std::string sweep_shard_json(const SweepShard& whole) {
  nlohmann::json points = nlohmann::json::array();
  for (const SweepShard::Point& p : whole.points) points.push_back(p.json);
  const nlohmann::json& s = whole.sweep;
  return sweep_file_json(s.at("vary"), s.at("metric").get<std::string>(), s.at("se").get<double>(),
                         s.at("samples").get<std::int64_t>(), whole.elapsed_s, std::move(points));
}

std::string sweep_shard_csv(const SweepShard& whole) {
  std::vector<std::string> keys;
  for (const nlohmann::json& a : whole.sweep.at("vary")) keys.push_back(a.at("name").get<std::string>());
  std::vector<SweepTablePoint> points;
  for (const SweepShard::Point& p : whole.points) points.push_back(p.table);
  return sweep_csv_table(keys, whole.sweep.at("metric").get<std::string>(), points);
}

}  // namespace maskscope
