// Sweep shards (.msweep): writing, reading, checking and joining them (sweep_shard.hpp).
#include "core/run/sweep_shard.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string_view>

#include "core/model/checksum.hpp"
#include "core/model/input_file.hpp"
#include "core/model/settings_text.hpp"
#include "core/model/strict_number.hpp"
#include "core/model/version.hpp"

namespace maskscope {

namespace {

// "maskscope_sweep_shard": the layout of this file. 1 (maskscope 0.3.0 to 0.6.0): the JSON line alone; 2: the
// JSON line, then the line "fnv1a64 " and the FNV-1a 64 of the JSON line (with its newline) in 16 hex digits.
constexpr int kShardFormat = 2;
constexpr std::string_view kChecksumTag = "fnv1a64 ";
constexpr std::size_t kChecksumLine = kChecksumTag.size() + 16 + 1;

[[noreturn]] void fail(const std::string& name, const std::string& what) {
  throw std::runtime_error(printable(name, 200) + ": " + what);
}

// A JSON integer (not 1e30, not 3.0) in [lo, hi]; throws naming `key`.
std::int64_t integer_of(const nlohmann::json& v, const std::string& key, std::int64_t lo, std::int64_t hi) {
  if (!v.is_number_integer()) throw std::runtime_error(key + ": " + printable(v.dump()) + " is not an integer");
  return whole_number(key, v, lo, hi);
}

// A JSON string without control characters (what a message, the CSV or the JSON may quote).
std::string text_of(const nlohmann::json& v, const std::string& key) {
  if (!v.is_string()) throw std::runtime_error(key + ": " + printable(v.dump()) + " is not a string");
  const std::string t = v.get<std::string>();
  if (printable(t, t.size()) != t) throw std::runtime_error(key + ": '" + printable(t) + "' holds control characters");
  return t;
}

// A swept value's text as typed back from the sweep file's JSON (a name, or a number's shortest text).
std::string vary_value_text(const nlohmann::json& v, const std::string& key) {
  if (v.is_string()) return text_of(v, key);
  if (!v.is_number()) throw std::runtime_error(key + ": " + printable(v.dump()) + " is neither a number nor a name");
  return number_text(v);
}

// The sweep a shard claims, re-derived from its own spec (vary, metric, se, base, gamma_given): its points'
// settings, in the sweep's order. Throws unless the header is exactly what `sweep` would write for them.
struct SweepSpec {
  std::vector<SweepAxis> axes;
  Settings base;
  bool gamma_given = false;
  std::size_t points = 0;
};
SweepSpec derive_sweep(const nlohmann::json& sweep) {
  if (!sweep.is_object()) throw std::runtime_error("sweep: not an object");
  SweepSpec spec;
  const nlohmann::json& vary = sweep.at("vary");
  if (!vary.is_array()) throw std::runtime_error("sweep.vary: not a list");
  for (const nlohmann::json& a : vary) {
    const std::string key = text_of(a.at("name"), "sweep.vary.name");
    std::string list;
    if (!a.at("values").is_array()) throw std::runtime_error("sweep.vary.values: not a list");
    for (const nlohmann::json& v : a.at("values")) {
      if (!list.empty()) list += ',';
      list += vary_value_text(v, key);
    }
    try {
      spec.axes.push_back(parse_sweep_axis(key + "=" + list));
    } catch (const std::exception& e) { throw std::runtime_error(std::string("sweep.vary: ") + e.what()); }
  }
  const SweepMetric metric = parse_sweep_metric(text_of(sweep.at("metric"), "sweep.metric"));
  const double se = real_number("sweep.se", sweep.at("se"), 0, 1e9);
  settings_from_json(sweep.at("base"), spec.base, "sweep.base");
  if (!sweep.at("gamma_given").is_boolean()) throw std::runtime_error("sweep.gamma_given: not true or false");
  spec.gamma_given = sweep.at("gamma_given").get<bool>();
  spec.points = sweep_point_count(spec.axes);
  if (spec.points == 0 || spec.axes.size() > kSweepMaxAxes)
    throw std::runtime_error("sweep.vary: valid: 1 or 2 settings and 1 to " + std::to_string(kSweepMaxPoints) +
                             " points");
  const std::string kernel = text_of(sweep.at("kernel"), "sweep.kernel");
  nlohmann::json expected = sweep_identity(spec.axes, metric, se, spec.base, spec.gamma_given, spec.points, kernel);
  expected["maskscope_version"] = text_of(sweep.at("maskscope_version"), "sweep.maskscope_version");
  if (expected != sweep) {
    std::string diff;
    for (auto it = expected.begin(); it != expected.end(); ++it)
      if (!sweep.contains(it.key()) || sweep.at(it.key()) != it.value()) diff += (diff.empty() ? "" : ", ") + it.key();
    for (auto it = sweep.begin(); it != sweep.end(); ++it)
      if (!expected.contains(it.key())) diff += (diff.empty() ? "" : ", ") + printable(it.key());
    throw std::runtime_error("its sweep header is not what its own spec gives (" + diff + ")");
  }
  return spec;
}

// Checks that point `p` (`point` in the file) is the sweep's point p.index: its settings and values re-derived
// from the spec, its samples within the cap, its rows within its layers.
void check_point(const SweepShard::Point& p, const nlohmann::json& point, const SweepSpec& spec, std::int64_t cap) {
  const Settings s = sweep_point_settings(spec.base, spec.axes, spec.gamma_given, p.index);
  const std::string where = "point " + std::to_string(p.index);
  if (!point.is_object()) throw std::runtime_error(where + ": not an object");
  nlohmann::json settings = settings_to_json(s);
  // A point's settings are `run --samples <its samples>`'s: samples the point's, not the cap.
  settings["samples"] = integer_of(point.at("samples"), where + ".samples", 1, cap);
  settings["threads"] = integer_of(point.at("settings").at("threads"), where + ".settings.threads", Limits::threads_min,
                                   Limits::threads_max);
  if (point.at("settings") != settings) {
    std::string keys;
    for (auto it = settings.begin(); it != settings.end(); ++it)
      if (!point.at("settings").contains(it.key()) || point.at("settings").at(it.key()) != it.value())
        keys += (keys.empty() ? "" : ", ") + it.key();
    throw std::runtime_error(where + ": its settings are not those of point " + std::to_string(p.index) +
                             " of the sweep (another point's, or changed: " + (keys.empty() ? "extra keys" : keys) +
                             ")");
  }
  for (std::size_t a = 0; a < spec.axes.size(); ++a)
    if (p.table.values[a] != axis_value_text(s, spec.axes[a].key))
      throw std::runtime_error(where + ": its value of " + spec.axes[a].key + " '" + printable(p.table.values[a]) +
                               "' is not the sweep's '" + axis_value_text(s, spec.axes[a].key) + "'");
  if (!point.at("stopped_early").is_boolean()) throw std::runtime_error(where + ".stopped_early: not true or false");
  text_of(point.at("kernel"), where + ".kernel");
  if (!point.at("layers").is_array()) throw std::runtime_error(where + ".layers: not a list");
  for (const auto& [layer, v] : p.table.layers)
    if (layer < 0 || layer > s.layers)
      throw std::runtime_error(where + ": a metric row of layer " + std::to_string(layer) + "; valid: [0, " +
                               std::to_string(s.layers) + "]");
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
                              const Settings& base, bool gamma_given, std::size_t points, const std::string& kernel) {
  nlohmann::json settings = settings_to_json(base);
  settings.erase("threads");  // the numbers do not depend on it
  return {{"vary", sweep_vary_json(axes)},
          {"metric", sweep_metric_name(metric)},
          {"se", se},
          {"samples", base.samples},
          {"base", std::move(settings)},
          {"gamma_given", gamma_given},
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
      rows.push_back({layer, number_or_null(v.mean), number_or_null(v.se), number_or_null(v.ties)});
    points.push_back({{"index", p.index}, {"values", p.table.values}, {"metric", std::move(rows)}, {"point", p.json}});
  }
  const nlohmann::json j = {{"maskscope_sweep_shard", kShardFormat},
                            {"sweep", s.sweep},
                            {"shard", {s.k, s.n}},
                            {"elapsed_s", s.elapsed_s},
                            {"points", std::move(points)}};
  const std::string body = j.dump() + "\n";
  char line[kChecksumLine + 1];
  std::snprintf(line, sizeof line, "%s%016" PRIx64 "\n", kChecksumTag.data(), fnv1a64(body));
  return body + line;
}

SweepShard parse_sweep_shard(const std::string& text, const std::string& name) {
  const std::string what = std::string("not a maskscope sweep shard (") + kSweepShardExtension + ")";
  const std::string_view all(text);
  const bool has_checksum = all.size() > kChecksumLine && all.back() == '\n' &&
                            all[all.size() - kChecksumLine - 1] == '\n' &&
                            all.substr(all.size() - kChecksumLine, kChecksumTag.size()) == kChecksumTag;
  if (!has_checksum) {
    // An older layout, a truncated file, or no shard at all: say which.
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) fail(name, what + ", or truncated: it does not end in its checksum line");
    if (!j.is_object() || !j.contains("maskscope_sweep_shard")) fail(name, what);
    const nlohmann::json version = j.contains("sweep") && j.at("sweep").is_object()
                                       ? j.at("sweep").value("maskscope_version", nlohmann::json())
                                       : nlohmann::json();
    const std::string by = version.is_string() ? printable(version.get<std::string>(), 20) : "?";
    if (j.at("maskscope_sweep_shard") == 1)
      fail(name, "a sweep shard of layout 1, written by maskscope " + by +
                     " (layout 1: maskscope 0.3.0 to 0.6.0), which has no checksum; this maskscope (" + kVersion +
                     ") reads layout " + std::to_string(kShardFormat) +
                     " only, which it can check: compute the shard again with this maskscope");
    fail(name, "corrupt sweep shard: it does not end in its checksum line");
  }
  const std::string_view body = all.substr(0, all.size() - kChecksumLine);
  const std::string_view hex = all.substr(all.size() - kChecksumLine + kChecksumTag.size(), 16);
  std::uint64_t stored = 0;
  for (const char c : hex) {
    const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0) fail(name, "corrupt sweep shard: its checksum line is not 16 hex digits");
    stored = stored << 4 | std::uint64_t(digit);
  }
  if (fnv1a64(body) != stored) fail(name, "checksum mismatch: the sweep shard is corrupt (changed since written)");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(body);
  } catch (const std::exception&) { fail(name, "corrupt sweep shard: it does not parse as JSON"); }
  if (!j.is_object() || !j.contains("maskscope_sweep_shard")) fail(name, what);
  if (j.at("maskscope_sweep_shard") != kShardFormat)
    fail(name, "a sweep shard of another layout (" + printable(j.at("maskscope_sweep_shard").dump()) +
                   "; this maskscope reads " + std::to_string(kShardFormat) + ")");
  // Every point must be one of the sweep the header claims: re-derived from the header's own spec.
  SweepShard s;
  try {
    s.sweep = j.at("sweep");
    const SweepSpec spec = derive_sweep(s.sweep);
    const std::int64_t total = std::int64_t(spec.points);
    s.n = integer_of(j.at("shard").at(1), "shard N", 1, total);
    s.k = integer_of(j.at("shard").at(0), "shard K", 1, s.n);
    if (!j.at("elapsed_s").is_number() || !std::isfinite(j.at("elapsed_s").get<double>()) ||
        j.at("elapsed_s").get<double>() < 0)
      throw std::runtime_error("elapsed_s: " + printable(j.at("elapsed_s").dump()) +
                               "; valid: a finite number of seconds >= 0");
    s.elapsed_s = j.at("elapsed_s").get<double>();
    const std::int64_t cap = s.sweep.at("samples").get<std::int64_t>();
    for (const nlohmann::json& p : j.at("points")) {
      SweepShard::Point point;
      point.index = std::size_t(integer_of(p.at("index"), "a point's index", 0, total - 1));
      if (point.index % std::size_t(s.n) != std::size_t(s.k - 1))
        throw std::runtime_error("point " + std::to_string(point.index) + " is not one of shard " +
                                 std::to_string(s.k) + "/" + std::to_string(s.n) + "'s");
      point.json = p.at("point");
      if (!p.at("values").is_array() || p.at("values").size() != spec.axes.size())
        throw std::runtime_error("point " + std::to_string(point.index) + ": not a value of every axis");
      for (const nlohmann::json& v : p.at("values"))
        point.table.values.push_back(text_of(v, "point " + std::to_string(point.index) + " values"));
      point.table.samples = integer_of(point.json.at("samples"), "samples", 1, cap);
      for (const nlohmann::json& r : p.at("metric")) {
        if (!r.is_array() || r.size() != 4) throw std::runtime_error("a metric row is not [layer, value, se, ties]");
        point.table.layers.emplace_back(
            int(integer_of(r.at(0), "a metric row's layer", 0, Limits::layers_max)),
            Estimate{number_of(r.at(1)), number_of(r.at(2)), number_of(r.at(3)), point.table.samples});
      }
      check_point(point, point.json, spec, cap);
      s.points.push_back(std::move(point));
    }
  } catch (const std::exception& e) { fail(name, "corrupt sweep shard: " + printable(e.what(), 400)); }
  return s;
}

SweepShard read_sweep_shard(const std::string& path) {
  return parse_sweep_shard(read_input_file(path, kMaxPartFileBytes, "the sweep shard"), path);
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
