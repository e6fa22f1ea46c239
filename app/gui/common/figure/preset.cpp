// Presets as JSON files (strict reading that names the bad key), and the shipped presets.
#include "common/figure/figure.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>

#include "core/formats/result_json.hpp"
#include "core/model/strict_number.hpp"
#include "core/model/input_file.hpp"
#include "core/model/theory.hpp"
#include "core/model/version.hpp"
#include "common/embedded_asset.hpp"

namespace maskscope::gui {

namespace {

using nlohmann::json;

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
  // A change of model family is read back with the family's default gamma unless gamma is given
  // (apply_family_default_gamma, in apply_settings_json): such a row always carries its own gamma.
  if (out.contains("model")) out["gamma"] = a.at("gamma");
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

json preset_to_json(const Preset& p) {
  json rows = json::array();
  for (const auto& r : p.figure.rows) {
    json row = {{"set", settings_diff(r.settings, p.settings)},
                {"show", r.residual_share ? std::string("r_l") : std::string(to_string(r.quantity))},
                {"transform", to_string(r.transform)}};
    if (!r.label.empty()) row["label"] = r.label;
    if (!r.state.empty()) row["state"] = r.state;
    if (!r.run.empty() && r.run_train.empty()) row["run"] = r.run;
    if (!r.run.empty() && !r.run_train.empty()) row["run"] = {{"folder", r.run}, {"train", r.run_train}};
    rows.push_back(std::move(row));
  }
  json columns = json::array();
  for (const auto& g : p.figure.groups) columns.push_back({{"title", g.title}, {"set", g.set}});
  const FigureSpec& f = p.figure;
  json out = {{"maskscope", kVersion},
              {"name", p.name},
              {"description", p.description},
              {"settings", settings_to_json(p.settings)},
              {"view", view_to_json(p.view)},
              {"figure",
               {{"title", figure_title_holds(f) ? f.title : std::string()},  // stale text left out
                {"kind", to_string(f.kind)},
                {"layers", f.layers},
                {"columns", columns},
                {"rows", rows},
                {"difference", f.difference},
                {"shared_range", f.shared_range},
                {"hide_diagonal", f.hide_diagonal},
                {"range", to_string(f.range)},
                {"grey_noise", f.grey_noise},
                {"show_metric", f.show_metric},
                {"metric", to_string(f.table_metric)},
                {"colormap", colormap(f.sequential).name},
                {"diverging", colormap(f.diverging).name}}},
              {"export", {{"scale", p.export_options.scale}, {"width", p.export_options.width}}}};
  if (p.run) out["run"] = {{"folder", p.run->folder}, {"train", p.run->train}};
  if (p.sweep) {
    SweepView v = *p.sweep;
    if (!sweep_title_holds(v, p.settings)) v.title.clear();  // stale text: the chart makes its title instead
    out["sweep"] = sweep_view_to_json(v);
  }
  return out;
}

Preset preset_from_json(const json& j) {
  check_object_keys(j, "preset",
                    {"maskscope", "name", "description", "settings", "view", "figure", "export", "sweep", "run"});
  Preset p;
  if (j.contains("maskscope")) get_string(j, "maskscope", "preset");  // the writer's version; any is read
  if (j.contains("name")) p.name = get_string(j, "name", "preset");
  if (j.contains("description")) p.description = get_string(j, "description", "preset");
  if (!j.contains("settings")) throw std::runtime_error("preset: missing 'settings'");
  apply_settings_json(j.at("settings"), p.settings, "settings");
  throw_if_invalid(p.settings, "settings");
  if (j.contains("view")) view_from_json(j.at("view"), p.view);
  if (j.contains("run")) {
    const json& r = j.at("run");
    check_object_keys(r, "run", {"folder", "train"});
    PresetRun run;
    run.folder = get_string(r, "folder", "run");
    if (run.folder.empty()) throw std::runtime_error("run.folder: the run folder's name, e.g. maskscope-runs/NAME");
    if (r.contains("train")) {
      if (!r.at("train").is_object()) throw std::runtime_error("run.train: expected an object of training settings");
      run.train = r.at("train");
    }
    p.run = std::move(run);
  }
  if (j.contains("figure")) {
    const json& f = j.at("figure");
    check_object_keys(f, "figure",
                      {"title", "kind", "layers", "columns", "rows", "difference", "shared_range", "hide_diagonal",
                       "range", "grey_noise", "show_metric", "metric", "colormap", "diverging"});
    FigureSpec& spec = p.figure;
    if (f.contains("title")) spec.title = get_string(f, "title", "figure");
    if (f.contains("kind"))
      spec.kind = enum_value_or_throw(kFigureKindNames, get_string(f, "kind", "figure"), "figure.kind");
    if (f.contains("layers")) {
      const json& l = f.at("layers");
      if (!l.is_array()) throw std::runtime_error("figure.layers: expected an array of layer numbers, e.g. [1, 2]");
      spec.layers.clear();
      for (const auto& x : l)
        spec.layers.push_back(int(whole_number("figure.layers", x, 0, Limits::layers_max)));  // 0: embeddings
    }
    if (f.contains("columns")) {
      const json& cols = f.at("columns");
      if (!cols.is_array()) throw std::runtime_error("figure.columns: expected an array of {title, set}");
      for (std::size_t g = 0; g < cols.size(); ++g) {
        const std::string where = "figure.columns[" + std::to_string(g) + "]";
        check_object_keys(cols[g], where, {"title", "set"});
        FigureGroup group;
        if (cols[g].contains("title")) group.title = get_string(cols[g], "title", where);
        if (cols[g].contains("set")) {
          Settings probe;
          apply_settings_json(cols[g].at("set"), probe, where + ".set");  // names a bad key now, not later
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
        check_object_keys(rows[r], where, {"label", "set", "show", "transform", "state", "run"});
        FigureRow row;
        row.settings = p.settings;
        if (rows[r].contains("label")) row.label = get_string(rows[r], "label", where);
        if (rows[r].contains("set")) apply_settings_json(rows[r].at("set"), row.settings, where + ".set");
        if (rows[r].contains("show")) {
          const std::string show = get_string(rows[r], "show", where);
          if (show == "r_l") {  // the residual-stream share against the step: a reading of the run's log only
            if (spec.kind != FigureKind::train_curves)
              throw std::runtime_error(where + ".show: r_l is a reading of a run's log: figure.kind train_curves");
            row.residual_share = true;
            row.quantity = Quantity::weight;
          } else {
            row.quantity = parse_quantity(show, where + ".show");
          }
        }
        if (rows[r].contains("state")) {
          row.state = get_string(rows[r], "state", where);
          if (row.state != "init" && row.state != "trained")
            throw std::runtime_error(where + ".state: '" + row.state +
                                     "'; valid: init (step 0), trained (the last step)");
        }
        if (rows[r].contains("run")) {  // a run folder, or {"folder", "train"} as the preset's own "run"
          const json& run = rows[r].at("run");
          if (run.is_object()) {
            check_object_keys(run, where + ".run", {"folder", "train"});
            if (!run.contains("folder"))
              throw std::runtime_error(where +
                                       ".run.folder: missing (the run folder's name, e.g. maskscope-runs/NAME)");
            row.run = get_string(run, "folder", where + ".run");
            if (run.contains("train")) {
              if (!run.at("train").is_object())
                throw std::runtime_error(where + ".run.train: expected an object of training settings");
              row.run_train = run.at("train");
            }
          } else {
            row.run = get_string(rows[r], "run", where);
          }
          if (row.run.empty())
            throw std::runtime_error(where + ".run: the run folder's name, e.g. maskscope-runs/NAME");
        }
        if (!row.state.empty() && row.run.empty() && !p.run)
          throw std::runtime_error(where + ".state: a trained network's row needs the preset's \"run\" (or its own)");
        if (rows[r].contains("transform"))
          row.transform = parse_transform(get_string(rows[r], "transform", where), where + ".transform");
        spec.rows.push_back(std::move(row));
      }
    }
    if (f.contains("difference")) spec.difference = get_bool(f, "difference", "figure");
    if (f.contains("shared_range")) spec.shared_range = get_bool(f, "shared_range", "figure");
    if (f.contains("hide_diagonal")) spec.hide_diagonal = get_bool(f, "hide_diagonal", "figure");
    if (f.contains("range")) spec.range = parse_range_mode(get_string(f, "range", "figure"), "figure.range");
    if (f.contains("grey_noise")) spec.grey_noise = get_bool(f, "grey_noise", "figure");
    if (f.contains("show_metric")) spec.show_metric = get_bool(f, "show_metric", "figure");
    if (f.contains("metric"))
      spec.table_metric = enum_value_or_throw(kTableMetricNames, get_string(f, "metric", "figure"), "figure.metric");
    auto lower = [](std::string s) {
      std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
      return s;
    };
    if (f.contains("colormap")) {
      spec.sequential = parse_colormap(lower(get_string(f, "colormap", "figure")), "figure.colormap");
      if (colormap(spec.sequential).diverging)
        throw std::runtime_error("figure.colormap: valid: rocket, viridis, magma");
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
    check_object_keys(e, "export", {"scale", "width"});
    if (e.contains("scale")) {
      const std::string range =
          "[" + format_number(ExportLimits::scale_min) + ", " + format_number(ExportLimits::scale_max) + "]";
      if (!e.at("scale").is_number()) throw std::runtime_error("export.scale: expected a number in " + range);
      p.export_options.scale = e.at("scale").get<double>();
      if (!(p.export_options.scale >= ExportLimits::scale_min && p.export_options.scale <= ExportLimits::scale_max))
        throw std::runtime_error("export.scale: " + format_number(p.export_options.scale) + " is outside " + range);
    }
    if (e.contains("width")) {
      const std::string range =
          "[" + std::to_string(ExportLimits::width_min) + ", " + std::to_string(ExportLimits::width_max) + "]";
      p.export_options.width = int(whole_number("export.width", e.at("width"), 0, ExportLimits::width_max));
      if (p.export_options.width != 0 &&
          (p.export_options.width < ExportLimits::width_min || p.export_options.width > ExportLimits::width_max))
        throw std::runtime_error("export.width: " + std::to_string(p.export_options.width) + " is outside " + range +
                                 " (0 = use the scale)");
    }
  }
  // The figure's title describes these rows; it gives way once they change (figure_title_holds).
  if (!p.figure.title.empty()) p.figure.title_scope.cells = title_simulations(p.figure);
  if (j.contains("sweep")) {
    p.sweep = sweep_view_from_json(j.at("sweep"), "sweep");
    // The title describes these settings; it gives way once they change (sweep_title_holds).
    if (!p.sweep->title.empty()) p.sweep->title_settings = p.settings;
    // The sweep's points must exist at the preset's own settings (a cell within n, a layer within L).
    const SweepPlan plan = plan_sweep(*p.sweep, p.settings);
    if (!plan.error.empty()) throw std::runtime_error("sweep: " + plan.error);
  }
  return p;
}

bool load_preset_file(const std::string& path, Preset& out, std::string& error) {
  // A regular file of at most 16 MiB, opened without blocking (a FIFO or /dev/zero is refused at once).
  std::string text;
  if (!read_input_file(path, kMaxTextInputBytes, "the preset", text, error)) return false;
  try {
    const json j = json::parse(text);
    Preset p = preset_from_json(j);
    if (p.name.empty()) p.name = std::filesystem::path(path).stem().string();
    out = std::move(p);
    return true;
  } catch (const json::parse_error& e) {
    error = "preset '" + printable(path, 200) + "' is not valid JSON (truncated or corrupt?) at byte " +
            std::to_string(e.byte) + "";
  } catch (const std::exception& e) { error = "preset '" + printable(path, 200) + "': " + e.what(); }
  return false;
}

bool save_preset_file(const std::string& path, const Preset& p, std::string& error) {
  return write_file_atomic(path, preset_to_json(p).dump(2) + "\n", error);
}

const std::vector<Preset>& shipped_presets() {
  static const std::vector<Preset> presets = read_shipped<Preset>(
      AssetKind::preset, [](const EmbeddedAsset& a) { return preset_from_json(json::parse(a.text)); });
  return presets;
}

const Preset* find_shipped_preset(const std::string& name) {
  for (const auto& p : shipped_presets())
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace maskscope::gui
