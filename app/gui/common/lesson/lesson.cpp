// Lessons from JSON, step settings, live text (see lesson.hpp).
#include "common/lesson/lesson.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/formats/result_json.hpp"
#include "core/model/input_file.hpp"
#include "core/model/strict_number.hpp"
#include "core/stats/metric_table.hpp"
#include "common/embedded_asset.hpp"
#include "common/format.hpp"

namespace maskscope::gui {

namespace {

using nlohmann::json;

// A placeholder's inside, "KEY[L]": the key and the layer (-1 when it has no [L] of up to 3 digits).
struct LiveValue {
  std::string key;
  int layer = -1;
};
LiveValue live_value(const std::string& inner) {
  const std::size_t bracket = inner.find('[');
  LiveValue v{inner.substr(0, bracket)};
  if (bracket != std::string::npos && inner.back() == ']' && inner.size() > bracket + 2) {
    const std::string digits = inner.substr(bracket + 1, inner.size() - bracket - 2);
    if (digits.size() <= 3 && std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
      v.layer = std::stoi(digits);
  }
  return v;
}

// Throws for a placeholder {NAME[L]} whose NAME is not a metric's key (a live value that would never show),
// naming the valid keys.
void check_live_values(const std::string& text, const std::string& where) {
  for (std::size_t open = text.find('{'); open != std::string::npos; open = text.find('{', open + 1)) {
    const std::size_t close = text.find('}', open);
    if (close == std::string::npos) return;
    const LiveValue v = live_value(text.substr(open + 1, close - open - 1));
    if (v.layer < 0 || find_metric(v.key)) continue;
    std::string keys;
    for (const MetricInfo& m : metric_table()) keys += (keys.empty() ? "" : ", ") + std::string(m.key);
    throw std::runtime_error(where + ": live value '" + text.substr(open, close - open + 1) + "': no metric '" + v.key +
                             "'; valid: {KEY[L]} with KEY one of " + keys + ", or {samples}");
  }
}

std::string text_of(const json& j, const char* key, const std::string& where) {
  const json& v = j.at(key);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {  // a list of sentences, joined
    std::string out;
    for (const auto& s : v) {
      if (!s.is_string()) throw std::runtime_error(where + "." + key + ": expected text or a list of texts");
      out += (out.empty() ? "" : " ") + s.get<std::string>();
    }
    return out;
  }
  throw std::runtime_error(where + "." + key + ": expected text or a list of texts");
}

int index_of(const json& j, const char* key, const std::string& where, int lo, int hi) {
  if (!j.contains(key)) throw std::runtime_error(where + ": missing '" + key + "'");
  return int(whole_number(where + "." + key, j.at(key), lo, hi));
}

}  // namespace

Lesson lesson_from_json(const json& j, const std::string& where) {
  check_object_keys(j, where, {"maskscope", "title", "description", "settings", "view", "steps", "run"});
  Lesson l;
  if (!j.contains("title")) throw std::runtime_error(where + ": missing 'title'");
  l.title = text_of(j, "title", where);
  if (j.contains("description")) l.description = text_of(j, "description", where);
  if (j.contains("settings")) apply_settings_json(j.at("settings"), l.settings, where + ": settings");
  if (j.contains("view")) view_from_json(j.at("view"), l.view);
  if (j.contains("run")) {
    const json& r = j.at("run");
    check_object_keys(r, where + ": run", {"folder", "train"});
    l.run_folder = text_of(r, "folder", where + ": run");
    if (r.contains("train")) {
      if (!r.at("train").is_object()) throw std::runtime_error(where + ": run.train: expected an object");
      l.run_train = r.at("train");
    }
  }
  if (!j.contains("steps") || !j.at("steps").is_array() || j.at("steps").empty())
    throw std::runtime_error(where + ": 'steps' must be a non-empty list");
  const json& steps = j.at("steps");
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const std::string at = where + ": steps[" + std::to_string(k) + "]";
    const json& s = steps[k];
    check_object_keys(s, at, {"title", "text", "equations", "set", "view", "point", "theory", "state"});
    LessonStep step;
    if (!s.contains("title") || !s.contains("text")) throw std::runtime_error(at + ": needs 'title' and 'text'");
    step.title = text_of(s, "title", at);
    step.text = text_of(s, "text", at);
    check_live_values(step.text, at + ".text");
    if (s.contains("equations")) {
      if (!s.at("equations").is_array()) throw std::runtime_error(at + ".equations: expected a list of texts");
      for (const auto& e : s.at("equations")) {
        if (!e.is_string()) throw std::runtime_error(at + ".equations: expected a list of texts");
        step.equations.push_back(e.get<std::string>());
      }
    }
    if (s.contains("set")) step.set = s.at("set");
    if (s.contains("view")) step.view = s.at("view");
    if (s.contains("state")) {
      step.state = text_of(s, "state", at);
      if (step.state != "init" && step.state != "trained")
        throw std::runtime_error(at + ".state: '" + step.state + "'; valid: init (step 0), trained (the last step)");
      if (l.run_folder.empty()) throw std::runtime_error(at + ".state: needs the lesson's \"run\" folder");
    }
    if (s.contains("point")) {
      const json& p = s.at("point");
      check_object_keys(p, at + ".point", {"layer", "rows", "cols", "label"});
      LessonPointer ptr;
      ptr.layer = index_of(p, "layer", at + ".point", 0, Limits::layers_max);
      auto range = [&](const char* key, int& a, int& b) {
        if (!p.contains(key)) return;
        const json& r = p.at(key);
        if (!r.is_array() || r.size() != 2) throw std::runtime_error(at + ".point." + key + ": expected [first, last]");
        a = int(whole_number(at + ".point." + key, r[0], 0, Limits::n_max - 1));
        b = int(whole_number(at + ".point." + key, r[1], a, Limits::n_max - 1));
      };
      range("rows", ptr.row0, ptr.row1);
      range("cols", ptr.col0, ptr.col1);
      if (p.contains("label")) ptr.label = text_of(p, "label", at + ".point");
      step.point = ptr;
    }
    if (s.contains("theory")) {
      const std::string t = text_of(s, "theory", at);
      if (t == "layer1_weights") step.theory = LessonTheory::layer1_weights;
      else if (t != "none") throw std::runtime_error(at + ".theory: '" + t + "'; valid: none, layer1_weights");
    }
    l.steps.push_back(std::move(step));
    // Each step's settings and view must be valid where they apply (names the step and the key).
    Settings step_settings;
    try {
      step_settings = lesson_settings(l, k);  // names "steps[k].set.KEY" on a bad value
    } catch (const std::exception& e) { throw std::runtime_error(where + ": " + e.what()); }
    for (const auto& e : validate(step_settings)) throw std::runtime_error(at + ".set." + e.setting + ": " + e.message);
    try {
      (void)lesson_view(l, k);
    } catch (const std::exception& e) { throw std::runtime_error(at + ": " + e.what()); }
    const LessonStep& added = l.steps.back();
    if (added.point && added.point->layer > step_settings.layers)
      throw std::runtime_error(at + ".point.layer: " + std::to_string(added.point->layer) + " is beyond the step's " +
                               std::to_string(step_settings.layers) + " layers");
  }
  return l;
}

Settings lesson_settings(const Lesson& l, std::size_t k) {
  Settings s = l.settings;
  for (std::size_t i = 0; i <= k && i < l.steps.size(); ++i)
    apply_settings_json(l.steps[i].set, s, "steps[" + std::to_string(i) + "].set");
  return s;
}

ViewOptions lesson_view(const Lesson& l, std::size_t k) {
  ViewOptions v = l.view;
  for (std::size_t i = 0; i <= k && i < l.steps.size(); ++i) view_from_json(l.steps[i].view, v);
  return v;
}

bool load_lesson_file(const std::string& path, Lesson& out, std::string& error) {
  // A regular file of at most 16 MiB, opened without blocking (a FIFO or /dev/urandom is refused at once).
  std::string text;
  if (!read_input_file(path, kMaxTextInputBytes, "the lesson file", text, error)) return false;
  try {
    json j;
    try {
      j = json::parse(text);
    } catch (const json::parse_error& e) {
      error = printable(path, 200) + ": not valid JSON (truncated or corrupt?) at byte " + std::to_string(e.byte);
      return false;
    }
    Lesson l = lesson_from_json(j, path);
    const std::string stem = std::filesystem::path(path).stem().string();
    l.name = stem;
    out = std::move(l);
    return true;
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
}

std::string lesson_text(const std::string& text, const Snapshot* snap) {
  // Placeholders: {samples}, or {KEY[L]} with KEY a metric's key (metric_table.hpp) and L a layer.
  std::string out;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t open = text.find('{', at);
    const std::size_t close = open == std::string::npos ? std::string::npos : text.find('}', open);
    if (close == std::string::npos) break;
    out += text.substr(at, open - at);
    const std::string inner = text.substr(open + 1, close - open - 1);
    const std::string whole = text.substr(open, close - open + 1);
    at = close + 1;
    const LiveValue live = live_value(inner);
    const MetricInfo* metric = live.layer >= 0 ? find_metric(live.key) : nullptr;
    if (inner != "samples" && !metric) {
      out += whole;
      continue;
    }
    if (!snap || snap->samples_done == 0) {
      out += "\u2026";
      continue;
    }
    if (inner == "samples") {
      out += with_thousands(snap->samples_done);
      continue;
    }
    const LayerStats* ls = layer_stats(*snap, live.layer);
    if (!ls) {
      out += whole;
      continue;
    }
    const Estimate& e = metric->of(*ls);
    if (std::isfinite(e.mean) && std::max(std::fabs(e.mean), std::isfinite(e.se) ? e.se : 0.0) < 1e-3) {
      char buf[48];  // near 0 (dR^2 without leakage): two significant digits, not a row of zeros
      std::snprintf(buf, sizeof buf, "%.2g \u00b1 %.2g", e.mean, e.se);
      out += buf;
    } else {
      out += std::isfinite(e.mean) ? value_with_se(e) : std::string("n/a");
    }
  }
  out += text.substr(std::min(at, text.size()));
  return out;
}

bool LessonPlayer::next() {
  if (step_ + 1 >= lesson_.steps.size()) return false;
  ++step_;
  return true;
}

bool LessonPlayer::previous() {
  if (step_ == 0) return false;
  --step_;
  return true;
}

void LessonPlayer::go(std::size_t k) { step_ = std::min(k, lesson_.steps.size() - 1); }

const std::vector<Lesson>& shipped_lessons() {
  static const std::vector<Lesson> lessons = read_shipped<Lesson>(AssetKind::lesson, [](const EmbeddedAsset& a) {
    return lesson_from_json(json::parse(a.text), std::string(a.name) + ".json");
  });
  return lessons;
}

const Lesson* find_shipped_lesson(const std::string& name) {
  for (const Lesson& l : shipped_lessons())
    if (l.name == name) return &l;
  return nullptr;
}

}  // namespace maskscope::gui
