// Figure specs, presets (JSON), and the figure's numbers built from the runs' snapshots.
#include "figure.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>

#include "core/result_json.hpp"
#include "core/theory.hpp"
#include "core/version.hpp"

namespace maskscope::embedded {
extern const std::string_view preset_behind_rope_fig2, preset_behind_rope_fig4, preset_behind_rope_fig7,
    preset_behind_rope_fig10, preset_ln_recency_fig1, preset_ln_recency_fig2, preset_ln_recency_fig5,
    preset_zuo_adjacency;
}

namespace maskscope::gui {

namespace {

using nlohmann::json;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const char* const kSettingKeys[] = {"n",    "d",          "layers",  "alpha", "norm", "scale",  "gamma",
                                    "rope", "mask",       "unit_input", "samples", "seed", "threads"};

void check_keys(const json& j, const std::string& where, std::initializer_list<const char*> keys) {
  if (!j.is_object()) throw std::runtime_error(where + ": expected a JSON object");
  for (const auto& [key, value] : j.items()) {
    if (std::none_of(keys.begin(), keys.end(), [&](const char* k) { return key == k; })) {
      std::string valid;
      for (const char* k : keys) valid += (valid.empty() ? "" : ", ") + std::string(k);
      throw std::runtime_error(where + ": unknown key '" + key + "'; valid: " + valid);
    }
  }
}

// Applies a settings object (all keys optional) to `s`, naming `where` in every error.
void apply_settings(const json& j, Settings& s, const std::string& where) {
  if (!j.is_object()) throw std::runtime_error(where + ": expected a JSON object of settings");
  for (const auto& [key, value] : j.items())
    if (std::none_of(std::begin(kSettingKeys), std::end(kSettingKeys), [&](const char* k) { return key == k; }))
      throw std::runtime_error(where + ": unknown setting '" + key +
                               "'; valid: n, d, layers, alpha, norm, scale, gamma, rope, mask, unit_input, samples, "
                               "seed, threads");
  try {
    settings_from_json(j, s);
  } catch (const std::exception& e) {
    throw std::runtime_error(where + ": " + e.what());
  }
  // The window width means nothing without the sliding-window mask, and JSON does not carry it then.
  if (s.mask != MaskKind::window) s.window = Settings{}.window;
}

void throw_if_invalid(const Settings& s, const std::string& where) {
  const auto errors = validate(s);
  if (!errors.empty()) throw std::runtime_error(where + "." + errors[0].setting + ": " + errors[0].message);
}

// Keys of `full` whose values differ from `base` (how rows are written relative to the preset).
json settings_diff(const Settings& full, const Settings& base) {
  const json a = settings_to_json(full), b = settings_to_json(base);
  json out = json::object();
  for (const auto& [key, value] : a.items())
    if (b.at(key) != value) out[key] = value;
  return out;
}

std::string get_string(const json& j, const char* key, const std::string& where) {
  const auto& v = j.at(key);
  if (!v.is_string()) throw std::runtime_error(where + "." + key + ": expected a string");
  return v.get<std::string>();
}

bool get_bool(const json& j, const char* key, const std::string& where) {
  const auto& v = j.at(key);
  if (!v.is_boolean()) throw std::runtime_error(where + "." + key + ": expected true or false");
  return v.get<bool>();
}

std::string format_number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

}  // namespace

std::string_view to_string(FigureKind k) { return k == FigureKind::heatmaps ? "heatmaps" : "h_of_j"; }

std::size_t group_count(const FigureSpec& spec) { return std::max<std::size_t>(1, spec.groups.size()); }

std::string row_label(const FigureRow& row) { return row.label.empty() ? short_label(row.settings) : row.label; }

Settings cell_settings(const FigureSpec& spec, std::size_t row, std::size_t group) {
  Settings s = spec.rows.at(row).settings;
  if (group < spec.groups.size()) apply_settings(spec.groups[group].set, s, "figure.columns[" + std::to_string(group) + "].set");
  if (spec.kind == FigureKind::h_of_j) s.layers = 1;  // h(j) needs the norms after layer 1 only
  else if (!spec.layers.empty()) s.layers = *std::max_element(spec.layers.begin(), spec.layers.end());
  if (s.mask == MaskKind::window) s.window = std::clamp(s.window, 1, s.n);
  return s;
}

std::vector<Settings> figure_simulations(const FigureSpec& spec) {
  std::vector<Settings> out;
  for (std::size_t r = 0; r < spec.rows.size(); ++r)
    for (std::size_t g = 0; g < group_count(spec); ++g) {
      const Settings s = cell_settings(spec, r, g);
      if (std::none_of(out.begin(), out.end(), [&](const Settings& o) { return o.same_simulation(s); })) out.push_back(s);
    }
  return out;
}

std::vector<SettingError> validate(const FigureSpec& spec) {
  std::vector<SettingError> errors;
  if (spec.kind == FigureKind::heatmaps) {
    if (spec.layers.empty()) errors.push_back({"figure.layers", "choose at least one layer"});
    for (int l : spec.layers)
      if (l < Limits::layers_min || l > Limits::layers_max)
        errors.push_back({"figure.layers", "layer " + std::to_string(l) + " is outside [1, 16]"});
  }
  if (spec.difference && spec.rows.size() < 2)
    errors.push_back({"figure.difference", "needs at least two rows (B - A)"});
  for (std::size_t r = 0; r < spec.rows.size(); ++r)
    for (std::size_t g = 0; g < group_count(spec); ++g) {
      Settings s;
      try {
        s = cell_settings(spec, r, g);
      } catch (const std::exception& e) {
        errors.push_back({"figure.columns", e.what()});
        continue;
      }
      for (auto& e : validate(s))
        errors.push_back({"figure.rows[" + std::to_string(r) + "]." + e.setting, e.message});
    }
  return errors;
}

json preset_to_json(const Preset& p) {
  json rows = json::array();
  for (const auto& r : p.figure.rows) {
    json row = {{"set", settings_diff(r.settings, p.settings)},
                {"show", to_string(r.quantity)},
                {"transform", to_string(r.transform)}};
    if (!r.label.empty()) row["label"] = r.label;
    rows.push_back(std::move(row));
  }
  json columns = json::array();
  for (const auto& g : p.figure.groups) columns.push_back({{"title", g.title}, {"set", g.set}});
  const FigureSpec& f = p.figure;
  return {{"maskscope", kVersion},
          {"name", p.name},
          {"description", p.description},
          {"settings", settings_to_json(p.settings)},
          {"view", view_to_json(p.view)},
          {"figure",
           {{"title", f.title},
            {"kind", to_string(f.kind)},
            {"layers", f.layers},
            {"columns", columns},
            {"rows", rows},
            {"difference", f.difference},
            {"shared_range", f.shared_range},
            {"hide_diagonal", f.hide_diagonal},
            {"show_metric", f.show_metric},
            {"colormap", colormap(f.sequential).name},
            {"diverging", colormap(f.diverging).name}}},
          {"export", {{"scale", p.export_options.scale}, {"width", p.export_options.width}}}};
}

Preset preset_from_json(const json& j) {
  check_keys(j, "preset", {"maskscope", "name", "description", "settings", "view", "figure", "export"});
  Preset p;
  if (j.contains("maskscope")) get_string(j, "maskscope", "preset");  // the writer's version; any is read
  if (j.contains("name")) p.name = get_string(j, "name", "preset");
  if (j.contains("description")) p.description = get_string(j, "description", "preset");
  if (!j.contains("settings")) throw std::runtime_error("preset: missing 'settings'");
  apply_settings(j.at("settings"), p.settings, "settings");
  throw_if_invalid(p.settings, "settings");
  if (j.contains("view")) view_from_json(j.at("view"), p.view);
  if (j.contains("figure")) {
    const json& f = j.at("figure");
    check_keys(f, "figure",
               {"title", "kind", "layers", "columns", "rows", "difference", "shared_range", "hide_diagonal",
                "show_metric", "colormap", "diverging"});
    FigureSpec& spec = p.figure;
    if (f.contains("title")) spec.title = get_string(f, "title", "figure");
    if (f.contains("kind")) {
      const std::string k = get_string(f, "kind", "figure");
      if (k == "heatmaps") spec.kind = FigureKind::heatmaps;
      else if (k == "h_of_j") spec.kind = FigureKind::h_of_j;
      else throw std::runtime_error("figure.kind: '" + k + "'; valid: heatmaps, h_of_j");
    }
    if (f.contains("layers")) {
      const json& l = f.at("layers");
      if (!l.is_array()) throw std::runtime_error("figure.layers: expected an array of layer numbers, e.g. [1, 2]");
      spec.layers.clear();
      for (const auto& x : l) {
        if (!x.is_number_integer()) throw std::runtime_error("figure.layers: expected integers in [1, 16]");
        spec.layers.push_back(x.get<int>());
      }
    }
    if (f.contains("columns")) {
      const json& cols = f.at("columns");
      if (!cols.is_array()) throw std::runtime_error("figure.columns: expected an array of {title, set}");
      for (std::size_t g = 0; g < cols.size(); ++g) {
        const std::string where = "figure.columns[" + std::to_string(g) + "]";
        check_keys(cols[g], where, {"title", "set"});
        FigureGroup group;
        if (cols[g].contains("title")) group.title = get_string(cols[g], "title", where);
        if (cols[g].contains("set")) {
          Settings probe;
          apply_settings(cols[g].at("set"), probe, where + ".set");  // names a bad key now, not later
          group.set = cols[g].at("set");
        }
        spec.groups.push_back(std::move(group));
      }
    }
    if (f.contains("rows")) {
      const json& rows = f.at("rows");
      if (!rows.is_array()) throw std::runtime_error("figure.rows: expected an array of rows");
      for (std::size_t r = 0; r < rows.size(); ++r) {
        const std::string where = "figure.rows[" + std::to_string(r) + "]";
        check_keys(rows[r], where, {"label", "set", "show", "transform"});
        FigureRow row;
        row.settings = p.settings;
        if (rows[r].contains("label")) row.label = get_string(rows[r], "label", where);
        if (rows[r].contains("set")) apply_settings(rows[r].at("set"), row.settings, where + ".set");
        if (rows[r].contains("show")) row.quantity = parse_quantity(get_string(rows[r], "show", where), where + ".show");
        if (rows[r].contains("transform"))
          row.transform = parse_transform(get_string(rows[r], "transform", where), where + ".transform");
        spec.rows.push_back(std::move(row));
      }
    }
    if (f.contains("difference")) spec.difference = get_bool(f, "difference", "figure");
    if (f.contains("shared_range")) spec.shared_range = get_bool(f, "shared_range", "figure");
    if (f.contains("hide_diagonal")) spec.hide_diagonal = get_bool(f, "hide_diagonal", "figure");
    if (f.contains("show_metric")) spec.show_metric = get_bool(f, "show_metric", "figure");
    auto lower = [](std::string s) {
      std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
      return s;
    };
    if (f.contains("colormap")) {
      spec.sequential = parse_colormap(lower(get_string(f, "colormap", "figure")), "figure.colormap");
      if (colormap(spec.sequential).diverging) throw std::runtime_error("figure.colormap: valid: rocket, viridis, magma");
    }
    if (f.contains("diverging")) {
      spec.diverging = parse_colormap(lower(get_string(f, "diverging", "figure")), "figure.diverging");
      if (!colormap(spec.diverging).diverging) throw std::runtime_error("figure.diverging: valid: rdbu, coolwarm");
    }
    const auto errors = validate(spec);
    if (!errors.empty()) throw std::runtime_error(errors[0].setting + ": " + errors[0].message);
  }
  if (j.contains("export")) {
    const json& e = j.at("export");
    check_keys(e, "export", {"scale", "width"});
    if (e.contains("scale")) {
      if (!e.at("scale").is_number()) throw std::runtime_error("export.scale: expected a number in [0.25, 8]");
      p.export_options.scale = e.at("scale").get<double>();
      if (!(p.export_options.scale >= 0.25 && p.export_options.scale <= 8))
        throw std::runtime_error("export.scale: " + format_number(p.export_options.scale) + " is outside [0.25, 8]");
    }
    if (e.contains("width")) {
      if (!e.at("width").is_number_integer()) throw std::runtime_error("export.width: expected an integer: 0 or [64, 16384] pixels");
      p.export_options.width = e.at("width").get<int>();
      if (p.export_options.width != 0 && (p.export_options.width < 64 || p.export_options.width > 16384))
        throw std::runtime_error("export.width: " + std::to_string(p.export_options.width) +
                                 " is outside [64, 16384] (0 = use the scale)");
    }
  }
  return p;
}

bool load_preset_file(const std::string& path, Preset& out, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open preset '" + path + "'";
    return false;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  try {
    const json j = json::parse(buffer.str());
    Preset p = preset_from_json(j);
    if (p.name.empty()) p.name = std::filesystem::path(path).stem().string();
    out = std::move(p);
    return true;
  } catch (const json::parse_error& e) {
    error = "preset '" + path + "' is not valid JSON (truncated or corrupt?) at byte " + std::to_string(e.byte) + "";
  } catch (const std::exception& e) {
    error = "preset '" + path + "': " + e.what();
  }
  return false;
}

bool write_atomically(const std::string& path, const std::function<std::string(const std::string& tmp)>& write,
                      std::string& error) {
  const std::string tmp = path + ".tmp";
  std::error_code ec;
  if (const std::string failed = write(tmp); !failed.empty()) {
    error = failed;
    std::filesystem::remove(tmp, ec);
    return false;
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    error = "cannot rename '" + tmp + "' to '" + path + "': " + ec.message();
    std::filesystem::remove(tmp, ec);
    return false;
  }
  return true;
}

bool write_file_atomic(const std::string& path, const std::string& content, std::string& error) {
  return write_atomically(
      path,
      [&](const std::string& tmp) {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out.write(content.data(), std::streamsize(content.size()));
        return out.flush() ? std::string() : "cannot write '" + tmp + "'";
      },
      error);
}

bool save_preset_file(const std::string& path, const Preset& p, std::string& error) {
  return write_file_atomic(path, preset_to_json(p).dump(2) + "\n", error);
}

const std::vector<Preset>& shipped_presets() {
  static const std::vector<Preset> presets = [] {
    const std::pair<const char*, std::string_view> sources[] = {
        {"ln-recency-fig1", embedded::preset_ln_recency_fig1},   {"ln-recency-fig2", embedded::preset_ln_recency_fig2},
        {"ln-recency-fig5", embedded::preset_ln_recency_fig5},   {"behind-rope-fig2", embedded::preset_behind_rope_fig2},
        {"behind-rope-fig4", embedded::preset_behind_rope_fig4}, {"behind-rope-fig7", embedded::preset_behind_rope_fig7},
        {"behind-rope-fig10", embedded::preset_behind_rope_fig10}, {"zuo-adjacency", embedded::preset_zuo_adjacency}};
    std::vector<Preset> out;
    for (const auto& [name, text] : sources) {
      // Shipped presets are checked by the tests; a broken one is skipped rather than crash the app.
      try {
        Preset p = preset_from_json(json::parse(text));
        p.name = name;
        out.push_back(std::move(p));
      } catch (const std::exception&) {
      }
    }
    return out;
  }();
  return presets;
}

const Preset* find_shipped_preset(const std::string& name) {
  for (const auto& p : shipped_presets())
    if (p.name == name) return &p;
  return nullptr;
}

FigureData build_figure(const FigureSpec& spec, const SnapshotLookup& lookup) {
  FigureData data;
  data.spec = spec;
  data.complete = true;
  const std::size_t groups = group_count(spec);
  for (std::size_t g = 0; g < groups; ++g) data.group_titles.push_back(g < spec.groups.size() ? spec.groups[g].title : "");
  // Progress over distinct runs.
  for (const Settings& s : figure_simulations(spec)) {
    auto snap = lookup(s);
    data.samples_target += s.samples;
    if (snap) data.samples_done += snap->samples_done;
    if (!snap || !snap->finished) data.complete = false;
  }
  if (spec.rows.empty()) return data;

  if (spec.kind == FigureKind::h_of_j) {
    data.curves.resize(groups);
    for (std::size_t g = 0; g < groups; ++g)
      for (std::size_t r = 0; r < spec.rows.size(); ++r) {
        const Settings s = cell_settings(spec, r, g);
        FigureCurve c;
        c.label = row_label(spec.rows[r]);
        c.theory = theory::ln_recency_h_curve(s.n, s.d, s.alpha, s.gamma, false);
        for (int j = 1; j <= s.n; ++j) c.j.push_back(j);
        auto snap = lookup(s);
        if (snap && snap->samples_done > 0 && !snap->layers.empty()) {
          const LayerStats& l1 = snap->layers[0];
          const double ref = l1.norm_mean[0] * c.theory[0];  // scale: simulated(1) = theory(1)
          for (int j = 0; j < s.n; ++j) {
            const double m = l1.norm_mean[j];
            c.simulated.push_back(m > 0 ? ref / m : kNaN);
            c.simulated_se.push_back(m > 0 ? ref * l1.norm_se[j] / (m * m) : kNaN);
          }
        }
        data.curves[g].push_back(std::move(c));
      }
    for (const auto& r : spec.rows) data.row_labels.push_back(row_label(r));
    return data;
  }

  auto cell = [&](std::size_t r, std::size_t g, int layer) {
    FigureCell c;
    const Settings s = cell_settings(spec, r, g);
    auto snap = lookup(s);
    const FigureRow& row = spec.rows[r];
    if (!snap || snap->samples_done == 0 || std::size_t(layer) > snap->layers.size()) {
      c.panel.layer = layer;
      c.panel.n = s.n;
      c.panel.value.assign(std::size_t(s.n) * s.n, kNaN);
      c.panel.se = c.panel.value;
      return c;
    }
    c.available = true;
    const bool hide = spec.hide_diagonal && !spec.difference;
    c.panel = build_panel(*snap, std::size_t(layer - 1), row.quantity, row.transform, hide);
    const LayerStats& ls = snap->layers[std::size_t(layer - 1)];
    if (spec.show_metric && row.transform == Transform::raw) {
      if (row.quantity == Quantity::cosine) {
        c.metric_name = "adj";
        c.metric = ls.adjacency;
        c.metric_se = ls.adjacency_se;
      } else {
        c.metric_name = "RP";
        c.metric = ls.recency;
        c.metric_se = ls.recency_se;
      }
    }
    return c;
  };

  const std::size_t first = spec.difference ? 1 : 0;
  std::set<std::uint64_t> seeds;
  for (std::size_t r = first; r < spec.rows.size(); ++r) {
    std::vector<FigureCell> line;
    for (std::size_t g = 0; g < groups; ++g)
      for (int layer : spec.layers) {
        FigureCell c = cell(r, g, layer);
        if (spec.difference) {
          const FigureCell a = cell(0, g, layer);
          if (a.panel.n != c.panel.n) {
            c.available = false;
            c.panel.value.assign(c.panel.value.size(), kNaN);
          } else {
            c.available = c.available && a.available;
            double m = 0;
            for (std::size_t e = 0; e < c.panel.value.size(); ++e) {
              c.panel.value[e] -= a.panel.value[e];
              c.panel.se[e] = std::hypot(c.panel.se[e], a.panel.se[e]);  // ignores the (positive) pairing
              if (std::isfinite(c.panel.value[e])) m = std::max(m, std::fabs(c.panel.value[e]));
            }
            c.panel.hi = m > 0 ? float(m) : 1e-6f;
            c.panel.lo = -c.panel.hi;
          }
          c.metric_name.clear();
        }
        line.push_back(std::move(c));
      }
    data.cells.push_back(std::move(line));
    data.row_labels.push_back(spec.difference ? row_label(spec.rows[r]) + "  -  " + row_label(spec.rows[0])
                                              : row_label(spec.rows[r]));
  }
  if (spec.difference) {
    for (const auto& r : spec.rows) seeds.insert(r.settings.seed);
    if (seeds.size() > 1) data.note = "rows have different seeds: the differences include independent sampling noise";
  }
  if (spec.shared_range) {
    // One range per kind of map: raw sequential maps together, centred maps together.
    std::vector<PanelData*> raw, centred;
    for (std::size_t r = 0; r < data.cells.size(); ++r)
      for (auto& c : data.cells[r]) {
        if (!c.available) continue;
        const bool is_centred = spec.difference || spec.rows[r + first].transform == Transform::diagonal_normalized;
        (is_centred ? centred : raw).push_back(&c.panel);
      }
    share_range(raw, false);
    share_range(centred, true);
  }
  return data;
}

}  // namespace maskscope::gui
