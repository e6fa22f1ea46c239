// A sweep's axes, points and metric (sweep_spec.hpp).
#include "core/run/sweep_spec.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>

#include "core/model/input_file.hpp"
#include "core/model/settings_text.hpp"
#include "core/model/strict_number.hpp"
#include "core/run/resources.hpp"
#include "core/stats/accumulator.hpp"
#include "core/stats/map.hpp"

namespace maskscope {

namespace {

// Settings whose values are names or 0/1: a list only, no range (the settings table says which).
bool categorical(const std::string& key) { return setting_value(*setting_info(key)) == SettingValue::name; }

// The settings table says which settings a sweep may vary, and why not the others (samples is each point's
// cap, threads does not change the numbers).
bool sweepable(const std::string& key) { return setting_info(key)->not_swept == nullptr; }

std::string sweepable_keys_text() {
  std::string text;
  for (const std::string& k : setting_keys())
    if (sweepable(k)) text += (text.empty() ? "" : ", ") + k;
  return text;
}

// Settings that are whole numbers: a range's values are rounded and their duplicates dropped.
bool whole(const std::string& key) { return setting_value(*setting_info(key)) == SettingValue::whole; }

// The shortest text that reads back as x (std::to_chars): 0.1 stays "0.1".
std::string shortest(double x) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

std::string twelve_digits(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.12g", x);
  return buf;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::size_t at = 0;
  for (;;) {
    const std::size_t next = text.find(sep, at);
    parts.push_back(text.substr(at, next == std::string::npos ? std::string::npos : next - at));
    if (next == std::string::npos) return parts;
    at = next + 1;
  }
}

// Whole numbers exactly (seeds reach 2^64 - 1, beyond a double's 2^53): 128 bits hold any difference of two
// 64-bit values times a count.
__extension__ typedef __int128 Int128;

std::string int128_text(Int128 x) {
  if (x == 0) return "0";
  const bool negative = x < 0;
  std::string digits;
  for (; x != 0; x /= 10) digits.insert(digits.begin(), char('0' + int(negative ? -(x % 10) : x % 10)));
  return negative ? "-" + digits : digits;
}

// A range's end as a whole number, exactly, when its JSON is one (an integer, or a float without a fraction
// below 2^63 in size); nullopt otherwise.
std::optional<Int128> exact_whole(const nlohmann::json& v) {
  if (v.is_number_unsigned()) return Int128(v.get<std::uint64_t>());
  if (v.is_number_integer()) return Int128(v.get<std::int64_t>());
  const double x = v.get<double>();
  if (x == std::floor(x) && std::abs(x) < 9.2e18) return Int128(x);
  return std::nullopt;
}

// START:STOP:COUNT[log] -> the values as text.
std::vector<std::string> range_values(const std::string& key, const std::string& list) {
  const std::vector<std::string> parts = split(list, ':');
  const std::string form =
      "a range is START:STOP:COUNT or START:STOP:COUNTlog (COUNT in [2, " + std::to_string(kSweepMaxValues) + "])";
  if (categorical(key))
    throw std::runtime_error(key + " is a setting of names or 0/1: give its values as a list (a,b,c), not '" +
                             printable(list) + "'");
  std::string count_text = parts[2];
  const bool log = count_text.size() > 3 && count_text.compare(count_text.size() - 3, 3, "log") == 0;
  if (log) count_text.resize(count_text.size() - 3);
  nlohmann::json start_json, stop_json;
  double start = 0, stop = 0;
  std::int64_t count = 0;
  try {
    start_json = number_from_text("START", parts[0]);
    stop_json = number_from_text("STOP", parts[1]);
    start = real_number("START", start_json, -1e300, 1e300);
    stop = real_number("STOP", stop_json, -1e300, 1e300);
    count = whole_number("COUNT", number_from_text("COUNT", count_text), 2, std::int64_t(kSweepMaxValues));
  } catch (const std::exception& e) {
    throw std::runtime_error("'" + printable(list) + "': " + e.what() + "; " + form);
  }
  if (log && !(start > 0 && stop > 0))
    throw std::runtime_error("'" + printable(list) + "': a log range needs START > 0 and STOP > 0");
  // A whole-number setting between whole ends: every value exactly, in integers (seed=0:9007199254740993:2
  // holds 9007199254740993, which no double does); a log range's inner values are rounded from doubles, then
  // kept between the ends.
  const std::optional<Int128> first = exact_whole(start_json), last = exact_whole(stop_json);
  const bool exact = whole(key) && first && last;
  std::vector<std::string> values;
  for (std::int64_t k = 0; k < count; ++k) {
    const double t = double(k) / double(count - 1);
    double x = log ? std::exp(std::log(start) + t * (std::log(stop) - std::log(start))) : start + t * (stop - start);
    if (k == count - 1) x = stop;  // the end as typed, not as rounded
    if (k == 0) x = start;
    std::string text;
    if (exact) {
      Int128 v = 0;
      if (k == 0) v = *first;
      else if (k == count - 1) v = *last;
      else if (!log) {  // first + round(k (last - first) / (count - 1)), halves away from zero
        const Int128 num = Int128(k) * (*last - *first), den = count - 1;
        v = *first + (num >= 0 ? (2 * num + den) / (2 * den) : -((-2 * num + den) / (2 * den)));
      } else {
        v = std::abs(x) < 1.8e19 ? Int128(std::round(x)) : *last;
        v = std::clamp(v, std::min(*first, *last), std::max(*first, *last));
      }
      text = int128_text(v);
    } else {
      // 12 significant digits: start + t (stop - start) leaves rounding noise (0.049999999999999996 for 0.05)
      // that no one typed; a range's values are what its decimal steps say.
      text = whole(key) ? shortest(std::round(x)) : shortest(std::stod(twelve_digits(x)));
    }
    if (std::find(values.begin(), values.end(), text) == values.end()) values.push_back(std::move(text));
  }
  return values;
}

// A value's setting as JSON once applied (0.5 and 0.50 give the same), to find a value given twice.
nlohmann::json parsed_value(const std::string& key, const std::string& text) {
  Settings s;
  if (key == "mask") s.n = Limits::n_max;  // window:W is checked against n per point
  setting_from_text(key, text, s);         // throws "key: ...; valid: ..."
  return settings_to_json(s).at(key);
}

}  // namespace

SweepAxis parse_sweep_axis(const std::string& spec) {
  const std::size_t eq = spec.find('=');
  if (eq == std::string::npos)
    throw std::runtime_error("'" + printable(spec) +
                             "' is not NAME=LIST (e.g. alpha=0:1:11, d=4:1024:9log, norm=none,layernorm)");
  SweepAxis axis;
  const std::string name = spec.substr(0, eq), list = spec.substr(eq + 1);
  axis.key = setting_key_of(name);
  if (axis.key.empty())
    throw std::runtime_error("unknown setting '" + printable(name) + "'; valid: " + sweepable_keys_text());
  // A value goes into the CSV, the JSON and messages: no control characters (a path of tokens could hold one).
  if (printable(list, list.size()) != list)
    throw std::runtime_error(axis.key + ": '" + printable(list) +
                             "' holds a control character or invalid UTF-8; valid: printable text");
  if (!sweepable(axis.key))
    throw std::runtime_error(axis.key + " cannot be swept (" + setting_info(axis.key)->not_swept + ")");
  if (list.empty()) throw std::runtime_error(axis.key + ": the list of values is empty");
  const bool range = list.find(',') == std::string::npos && std::count(list.begin(), list.end(), ':') == 2;
  if (!range && setting_info(axis.key)->kind != SettingKind::mask && list.find(':') != std::string::npos)
    throw std::runtime_error("'" + list +
                             "' is neither a list a,b,c nor a range START:STOP:COUNT or START:STOP:COUNTlog");
  if (range) {
    axis.values = range_values(axis.key, list);
  } else {
    for (std::string& v : split(list, ',')) {
      if (v.empty()) throw std::runtime_error(axis.key + ": an empty value in '" + list + "'");
      axis.values.push_back(std::move(v));
    }
  }
  if (axis.values.size() > kSweepMaxValues)
    throw std::runtime_error(axis.key + ": " + std::to_string(axis.values.size()) + " values; valid: at most " +
                             std::to_string(kSweepMaxValues));
  // Each value checked alone; two that are one value once read (0.5 and 0.50) would compute one point twice.
  std::vector<nlohmann::json> parsed;
  for (const std::string& v : axis.values) {
    parsed.push_back(parsed_value(axis.key, v));
    for (std::size_t q = 0; q + 1 < parsed.size(); ++q)
      if (parsed[q] == parsed.back())
        throw std::runtime_error(axis.key + ": the values '" + axis.values[q] + "' and '" + v + "' are the same " +
                                 axis.key + " (" + number_text(parsed.back()) + "); give each value once");
  }
  return axis;
}

namespace {

// Point p's value index on each axis (the first axis outermost), and its values as "alpha=0.5, d=16".
std::vector<std::size_t> point_index(const std::vector<SweepAxis>& axes, std::size_t p) {
  std::vector<std::size_t> index(axes.size());
  for (std::size_t a = axes.size(); a-- > 0;) {
    index[a] = p % axes[a].values.size();
    p /= axes[a].values.size();
  }
  return index;
}
std::string point_where(const std::vector<SweepAxis>& axes, std::size_t p) {
  const std::vector<std::size_t> index = point_index(axes, p);
  std::string where;
  for (std::size_t a = 0; a < axes.size(); ++a)
    where += (where.empty() ? "" : ", ") + axes[a].key + "=" + axes[a].values[index[a]];
  return where;
}

}  // namespace

std::size_t sweep_point_count(const std::vector<SweepAxis>& axes) {
  std::size_t total = 1;
  for (const SweepAxis& a : axes) total = a.values.empty() || total > kSweepMaxPoints ? 0 : total * a.values.size();
  return axes.empty() ? 0 : total;
}

Settings sweep_point_settings(const Settings& base, const std::vector<SweepAxis>& axes, bool gamma_given,
                              std::size_t p) {
  const bool gamma_swept = std::any_of(axes.begin(), axes.end(), [](const SweepAxis& a) { return a.key == "gamma"; });
  Settings s = base;
  const std::vector<std::size_t> index = point_index(axes, p);
  try {
    for (std::size_t a = 0; a < axes.size(); ++a) setting_from_text(axes[a].key, axes[a].values[index[a]], s);
  } catch (const std::exception& e) { throw std::runtime_error("the point " + point_where(axes, p) + ": " + e.what()); }
  apply_family_default_gamma(s, base.random_weights(), gamma_given || gamma_swept);
  return s;
}

std::vector<Settings> sweep_points(const Settings& base, const std::vector<SweepAxis>& axes, bool gamma_given) {
  if (axes.empty() || axes.size() > kSweepMaxAxes)
    throw std::runtime_error("a sweep has 1 or 2 swept settings, not " + std::to_string(axes.size()));
  if (axes.size() == 2 && axes[0].key == axes[1].key) throw std::runtime_error(axes[0].key + " is swept twice");
  std::size_t total = 1;
  for (const SweepAxis& a : axes) {
    if (a.values.empty()) throw std::runtime_error(a.key + ": the list of values is empty");
    total *= a.values.size();
  }
  if (total > kSweepMaxPoints)
    throw std::runtime_error(std::to_string(total) + " points; valid: at most " + std::to_string(kSweepMaxPoints));
  std::vector<Settings> points;
  points.reserve(total);
  for (std::size_t p = 0; p < total; ++p) {
    const Settings s = sweep_point_settings(base, axes, gamma_given, p);
    const std::string where = point_where(axes, p);
    // A setting of the other model family would be silently ignored: refuse it, as `run` does.
    for (const SweepAxis& a : axes)
      if (const std::optional<Model> family = setting_family(a.key); family && *family != s.model)
        throw std::runtime_error("the point " + where + ": " + a.key + " applies to --model " +
                                 std::string(to_string(*family)) + " only (this point is --model " +
                                 std::string(to_string(s.model)) + ")");
    if (const auto errors = validate(s); !errors.empty()) {
      std::string text = "the point " + where + " is invalid:";
      for (const SettingError& e : errors) text += " " + e.setting + ": " + e.message + ";";
      text.pop_back();
      throw std::runtime_error(text);
    }
    points.push_back(s);
  }
  return points;
}

std::string axis_value_text(const Settings& s, const std::string& key) {
  const nlohmann::json j = settings_to_json(s);
  if (!j.contains(key)) return "";
  const nlohmann::json& v = j.at(key);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "1" : "0";
  if (v.is_number_float()) return shortest(v.get<double>());
  return v.dump();
}

SweepMetric parse_sweep_metric(const std::string& text) {
  SweepMetric m;
  using K = SweepMetric::Kind;
  if (const MetricInfo* row = find_metric(text); row && row->sweepable) {
    m.row = row;
  } else if (text == "first_key") {  // its name up to 0.6 (issue 46): one name per quantity
    throw std::runtime_error(
        "the metric 'first_key' is now called 'sink_weight' (the weight on key 0, as in "
        "run's JSON); use sink_weight");
  } else if (text.rfind("score:", 0) == 0 || text.rfind("weight:", 0) == 0) {
    m.kind = text[0] == 's' ? K::score : K::weight;
    const std::vector<std::string> ij = split(text.substr(text.find(':') + 1), ',');
    try {
      if (ij.size() != 2) throw std::runtime_error("needs two positions I,J");
      m.i = int(whole_number("I", number_from_text("I", ij[0]), 0, Limits::n_max - 1));
      m.j = int(whole_number("J", number_from_text("J", ij[1]), 0, Limits::n_max - 1));
    } catch (const std::exception& e) {
      throw std::runtime_error("'" + text + "': " + e.what() + " (query I, key J, 0-based, e.g. weight:9,0)");
    }
  } else {
    throw std::runtime_error("unknown metric '" + text + "'; valid: " + sweep_metric_names_text());
  }
  return m;
}

std::string sweep_metric_name(const SweepMetric& m) {
  using K = SweepMetric::Kind;
  switch (m.kind) {
    case K::table: return std::string(m.row->key);
    case K::score: return "score:" + std::to_string(m.i) + "," + std::to_string(m.j);
    case K::weight: return "weight:" + std::to_string(m.i) + "," + std::to_string(m.j);
  }
  return "";
}

std::string sweep_metric_names_text() {
  std::string names;
  for (const MetricInfo& row : metric_table())
    if (row.sweepable) names += std::string(row.key) + ", ";
  return names + "score:I,J, weight:I,J";
}

std::string sweep_metric_error(const SweepMetric& m, const Settings& s) {
  using K = SweepMetric::Kind;
  if (m.kind == K::table) return m.row->sweep_error ? m.row->sweep_error(s) : "";
  const std::string cell = sweep_metric_name(m);
  if (m.i >= s.n || m.j >= s.n)
    return cell + " is outside the n x n map at n = " + std::to_string(s.n) + "; valid: I, J in [0, n - 1]";
  const bool seen =
      s.mask == MaskKind::bidirectional || (m.j <= m.i && (s.mask != MaskKind::window || m.i - s.window < m.j));
  if (!seen)
    return cell + ": key " + std::to_string(m.j) + " is masked for query " + std::to_string(m.i) + " (--mask " +
           mask_to_string(s) + ")";
  return "";
}

Estimate metric_value(const LayerStats& l, const SweepMetric& m) {
  using K = SweepMetric::Kind;
  if (m.kind == K::table) return estimate_of(l, *m.row);
  const double none = std::nan("");
  const Map& mean = m.kind == K::score ? l.score_mean : l.weight_mean;
  const Map& se = m.kind == K::score ? l.score_se : l.weight_se;
  if (mean.empty()) return {none, none, none, l.rp.samples};
  return {mean(m.i, m.j), se(m.i, m.j), none, l.rp.samples};
}

std::string sweep_memory_refusal(const std::vector<Settings>& points, int threads) {
  std::uint64_t bytes = 0, largest_run = 0, largest_network = 0;
  for (const Settings& p : points) {
    bytes += 64 * accum_layout(p).total();
    largest_run = std::max(largest_run, estimate_cost(p, 1).memory_bytes);
    largest_network = std::max(largest_network, network_bytes(p));
  }
  bytes += std::uint64_t(std::max(threads, 1)) * largest_run;
  const std::string why = memory_shortfall(bytes);
  if (why.empty()) return "";
  return std::to_string(points.size()) + " points need " + why + ". Fewer points, or lower n, layers" +
         (largest_network > 0 ? ", d or vocab." : ".");
}

}  // namespace maskscope
