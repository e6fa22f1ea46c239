// Command-line parsing for the window (see app_options.hpp).
#include "window/app_options.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/formats/atomic_file.hpp"
#include "core/run/partial_sums.hpp"
#include "core/formats/tensor_analysis.hpp"
#include "model/controller.hpp"
#include "core/formats/result_json.hpp"
#include "core/model/settings_text.hpp"
#include "core/model/strict_number.hpp"

namespace maskscope::gui {

namespace {

// "key=value" through the same strict conversion as the command-line tool's flags.
bool apply_set(const std::string& kv, Settings& s, std::string& error) {
  const auto eq = kv.find('=');
  if (eq == std::string::npos) {
    error = "--set expects key=value, got '" + kv + "'";
    return false;
  }
  const std::string key = kv.substr(0, eq), value = kv.substr(eq + 1);
  const auto& keys = setting_keys();
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
    error = "--set: unknown setting '" + key + "'; valid: " + setting_keys_text();
    return false;
  }
  try {
    setting_from_text(key, value, s);
  } catch (const std::exception& e) {
    error = std::string("--set ") + e.what();
    return false;
  }
  return true;
}

// The window's own numeric options through the same strict conversion as every setting
// (strict_number.hpp): nullopt, with the message in `errors`, for anything else.
std::optional<std::int64_t> whole_option(const std::string& flag, const std::string& text, std::int64_t lo,
                                         std::int64_t hi, std::vector<std::string>& errors) {
  try {
    return whole_number(flag, number_from_text(flag, text), lo, hi);
  } catch (const std::exception& e) {
    errors.push_back(e.what());
    return std::nullopt;
  }
}

std::optional<double> real_option(const std::string& flag, const std::string& text, double lo, double hi,
                                  std::vector<std::string>& errors) {
  try {
    return real_number(flag, number_from_text(flag, text), lo, hi);
  } catch (const std::exception& e) {
    errors.push_back(e.what());
    return std::nullopt;
  }
}

}  // namespace

namespace {

// The maskscope-cli command that computes these settings' sums into `path`.
std::string run_command(const Settings& s, const std::string& path) {
  std::string cmd = "maskscope-cli run";
  const nlohmann::json j = settings_to_json(s);
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    if (key == "threads" || it.value().is_null()) continue;
    // Only the flags of this model family (the CLI refuses the other family's).
    if (const auto family = setting_family(key); family && *family != s.model) continue;
    std::string flag = key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    const std::string value = it.value().is_string()    ? it.value().get<std::string>()
                              : it.value().is_boolean() ? (it.value().get<bool>() ? "1" : "0")
                                                        : it.value().dump();
    cmd += " --" + flag + " " + value;
  }
  return cmd + " --out " + path;
}

// --from-results: every simulation of the preset's figure from the folder's .msum files, merged
// (the same numbers as running it here); a missing or incomplete one is an error with the command
// that computes it.
void load_stored_results(AppOptions& o, std::vector<std::string>& errors) {
  std::vector<ResultFiles> groups;
  try {
    groups = scan_results_folder(o.results_dir);
  } catch (const std::exception& e) {
    errors.push_back(std::string("--from-results: ") + e.what());
    return;
  }
  int k = 0;
  for (const Settings& s : figure_simulations(o.preset->figure)) {
    ++k;
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const ResultFiles& g) { return g.settings.same_simulation(s); });
    if (it == groups.end()) {
      errors.push_back("--from-results: " + o.results_dir + " has no results for the figure's simulation " +
                       std::to_string(k) + " (" + short_label(s) + ", n " + std::to_string(s.n) + ", d " +
                       std::to_string(s.d) + ", " + std::to_string(s.samples) + " samples); compute it with: " +
                       run_command(s, o.results_dir + "/run-" + std::to_string(k) + kPartialSumsExtension));
      continue;
    }
    try {
      const PartialSums merged = merge_partial_sums_files(it->files, true);
      o.stored_results.emplace_back(s, std::make_shared<const Snapshot>(snapshot_of(merged)));
    } catch (const std::exception& e) { errors.push_back(std::string("--from-results: ") + e.what()); }
  }
}

}  // namespace

int parse_app_options(int argc, char** argv, AppOptions& o) {
  std::vector<std::string> errors;
  // The preset comes first, whatever its place on the line: --set, --tab and --show refine it.
  bool preset_given = false;
  for (int k = 1; k + 1 < argc; ++k)
    if (std::string(argv[k]) == "--preset") {
      preset_given = true;
      const std::string name = argv[k + 1];
      if (name.rfind("--", 0) == 0) {
        errors.push_back("--preset needs a preset file or a shipped preset's name, got the flag '" + name + "'");
        continue;
      }
      Preset p;
      std::string error;
      if (const Preset* shipped = find_shipped_preset(name)) p = *shipped;
      else if (!load_preset_file(name, p, error)) errors.push_back("--preset: " + error);
      if (error.empty()) {
        o.preset = p;
        o.settings = p.settings;
        o.samples_given = true;
        const bool light = o.view.light_theme;
        o.view = p.view;
        o.view.light_theme = light;
      }
    }
  std::optional<std::int64_t> samples;
  const bool was_random_weights = o.settings.random_weights();
  bool gamma_given = false, size_given = false;
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    auto next = [&]() -> std::string {
      if (k + 1 >= argc || std::string(argv[k + 1]).rfind("--", 0) == 0) {  // a flag is never a value
        errors.push_back(a + " needs a value");
        return "";
      }
      return argv[++k];
    };
    std::string err;
    if (a == "--preset") {
      if (k + 1 < argc && std::string(argv[k + 1]).rfind("--", 0) != 0) ++k;  // read (or refused) above
    } else if (a == "--samples") {
      if (auto v = whole_option(a, next(), Limits::samples_min, Limits::samples_max, errors)) samples = *v;
    } else if (a == "--export-figure") {
      o.export_dir = next();
      if (o.export_dir.empty()) errors.push_back("--export-figure needs a folder");
    } else if (a == "--open") {
      o.tensors_dir = next();
    } else if (a == "--from-results") {
      o.results_dir = next();
    } else if (a == "--export-scale") {
      if (auto v = real_option(a, next(), ExportLimits::scale_min, ExportLimits::scale_max, errors))
        o.export_scale = *v;
    } else if (a == "--export-width") {
      if (auto v = whole_option(a, next(), ExportLimits::width_min, ExportLimits::width_max, errors))
        o.export_width = int(*v);
    } else if (a == "--set") {
      const std::string kv = next();
      if (!apply_set(kv, o.settings, err)) errors.push_back(err);
      if (kv.rfind("samples=", 0) == 0) o.samples_given = true;
      if (kv.rfind("gamma=", 0) == 0) gamma_given = true;
    } else if (a == "--tab" || a == "--show" || a == "--range") {
      const std::string t = next();
      try {  // the parsers name the option and the valid values
        if (a == "--tab") o.view.tab = parse_tab(t, a);
        else if (a == "--show") o.view.quantity = parse_quantity(t, a);
        else o.view.range = parse_range_mode(t, a);
      } catch (const std::exception& e) { errors.push_back(e.what()); }
    } else if (a == "--size") {
      size_given = true;
      const std::string t = next();
      if (std::sscanf(t.c_str(), "%dx%d", &o.width, &o.height) != 2 || o.width < 320 || o.height < 240 ||
          o.width > 8192 || o.height > 8192)
        errors.push_back("--size: '" + t + "'; valid: WxH with W in [320, 8192], H in [240, 8192]");
    } else if (a == "--theme") {
      const std::string t = next();
      if (t == "light") o.view.light_theme = true;
      else if (t == "dark") o.view.light_theme = false;
      else errors.push_back("--theme: '" + t + "'; valid: dark, light");
    } else if (a == "--screenshot") {
      o.screenshot = next();
    } else if (a == "--screenshot-at-samples") {
      if (auto v = whole_option(a, next(), 1, Limits::samples_max, errors)) o.screenshot_at_samples = *v;
    } else if (a == "--screenshot-at-se") {
      if (auto v = real_option(a, next(), 1e-12, 1e6, errors)) o.screenshot_at_se = *v;
    } else if (a == "--exit-when-done") {
      o.exit_when_done = true;
    } else if (a == "--ui-bench") {
      if (auto v = whole_option(a, next(), 1, 10000, errors)) o.ui_bench = int(*v);
    } else if (a == "--lesson") {
      const std::string name = next();
      if (const Lesson* shipped = find_shipped_lesson(name)) o.lesson = *shipped;
      else if (!name.empty()) {
        Lesson l;
        std::string error;
        if (load_lesson_file(name, l, error)) o.lesson = l;
        else errors.push_back("--lesson: " + error);
      }
    } else if (a == "--step") {
      if (auto v = whole_option(a, next(), 1, 1000, errors)) o.lesson_step = int(*v);
    } else if (a == "--present") {
      o.present = true;
    } else if (a == "--export-slides") {
      o.slides_dir = next();
    } else if (a == "--hide-diagonal") {
      const std::string t = next();
      if (t == "1" || t == "true") o.view.hide_diagonal = true;
      else if (t == "0" || t == "false") o.view.hide_diagonal = false;
      else errors.push_back("--hide-diagonal: '" + t + "'; valid: 0, 1, false, true");
    } else if (a == "--help" || a == "-h") {
      std::printf(
          "maskscope [--preset FILE|NAME] [--set key=value ...] [--samples N]\n"
          "          [--tab %s] [--show %s]\n"
          "          [--range %s] [--size WxH] [--theme dark|light] [--hide-diagonal 0|1]\n"
          "          [--screenshot FILE [--screenshot-at-samples N | --screenshot-at-se X]]\n"
          "          [--export-figure DIR [--from-results RESULTS_DIR]] [--export-scale S] [--export-width PX]\n"
          "          [--exit-when-done] [--ui-bench N] [--open TENSOR_DIR]\n"
          "          [--lesson NAME|FILE [--step K] [--present] [--export-slides DIR]]\n"
          "keys: %s\npresets:",
          enum_names_text(kTabNames, "|").c_str(), enum_names_text(kQuantityNames, "|").c_str(),
          enum_names_text(kRangeModeNames, "|").c_str(), setting_keys_text().c_str());
      for (const auto& p : shipped_presets()) std::printf(" %s", p.name.c_str());
      std::printf("\n");
      return 0;
    } else {
      errors.push_back("unknown option '" + a + "' (see --help)");
    }
  }
  // --set model=random_weights without --set gamma gives the family's residual strength 1, as the CLI's --model.
  apply_family_default_gamma(o.settings, was_random_weights, gamma_given);
  if (samples && o.lesson) o.samples_cap = *samples;
  if (!o.slides_dir.empty() && !size_given) o.width = 1920, o.height = 1080;  // slides: full HD unless --size
  if (!o.slides_dir.empty() && !o.lesson) errors.push_back("--export-slides needs --lesson NAME|FILE");
  if (o.lesson && o.lesson_step > int(o.lesson->steps.size()))
    errors.push_back("--step " + std::to_string(o.lesson_step) + ": the lesson has " +
                     std::to_string(o.lesson->steps.size()) + " steps");
  if (samples) {
    o.settings.samples = *samples;
    o.samples_given = true;
    if (o.preset)
      for (auto& r : o.preset->figure.rows) r.settings.samples = *samples;
  }
  // On the Sweep tab --export-figure exports the preset's sweep; elsewhere its figure.
  const bool sweep_export = o.preset && o.preset->sweep && o.view.tab == Tab::sweep;
  if (!o.export_dir.empty() && o.preset && o.preset->figure.rows.empty() && !sweep_export)
    errors.push_back("--export-figure: preset '" + o.preset->name + "' has no figure rows" +
                     (o.preset->sweep ? " (its sweep exports with --tab sweep)" : ""));
  if (!o.export_dir.empty() && !preset_given)
    errors.push_back("--export-figure needs --preset with a figure (rows) or a sweep (on --tab sweep)");
  if (!o.tensors_dir.empty()) {  // checked here (headers only), so a bad folder never opens a window
    try {
      open_tensors(o.tensors_dir);
    } catch (const std::exception& e) { errors.push_back(std::string("--open: ") + e.what()); }
  }
  if (!o.results_dir.empty()) {
    if (!o.preset || o.preset->figure.rows.empty())
      errors.push_back("--from-results needs --preset with a figure (rows)");
    else load_stored_results(o, errors);
  }
  if (!o.screenshot.empty())
    if (std::string why = check_output_path(o.screenshot); !why.empty()) errors.push_back("--screenshot: " + why);
  for (const auto& e : validate(o.settings)) errors.push_back("--set " + e.setting + ": " + e.message);
  if (validate(o.settings).empty())
    if (std::string refusal = memory_refusal(o.settings, kWindowMemoryBudget); !refusal.empty())
      errors.push_back("--set: " + refusal);
  if (!errors.empty()) {
    o.errors = errors;  // the browser build shows them on the page
    for (const auto& e : errors) std::fprintf(stderr, "maskscope: %s\n", e.c_str());
    return 2;
  }
  return -1;
}

}  // namespace maskscope::gui
