// Command-line parsing for the window (see app_options.hpp).
#include "window/app_options.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

#include "core/formats/atomic_file.hpp"
#include "core/run/partial_sums.hpp"
#include "core/formats/tensor_analysis.hpp"
#include "common/controller.hpp"
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

namespace {

// The window's own options as typed; each is converted after parsing, in an order that does not depend on
// the line's (the preset first; then --set and the setting flags refine it).
struct AppFlags {
  std::string preset, samples, export_figure, open, from_results, export_scale, export_width, tab, show, range, size,
      theme, screenshot, screenshot_at_samples, screenshot_at_se, ui_bench, lesson, step, export_slides, hide_diagonal,
      run, train;
  std::vector<std::string> set;             // --set key=value, in order
  std::map<std::string, std::string> text;  // setting flag -> its text (the settings table's flags)
};

// CLI11 reads the line: every option, the setting flags of the settings table (as maskscope-cli's), --help.
void add_app_flags(CLI::App& app, AppFlags& f) {
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // the last one given counts
  auto opt = [&](const char* name, std::string& into, const std::string& help, const char* type = "TEXT") {
    return app.add_option(name, into, help)->allow_extra_args(false)->type_name(type);
  };
  opt("--preset", f.preset, "a preset file or a shipped preset's name (first, wherever it stands)", "FILE|NAME");
  app.add_option("--set", f.set, "key=value: one setting (as in presets; repeatable)")
      ->allow_extra_args(false)
      ->type_name("KEY=VALUE")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  opt("--samples", f.samples, "Monte Carlo samples (with --lesson: a cap for every step)", "N");
  opt("--tab", f.tab, enum_names_text(kTabNames, " | "), "TAB");
  opt("--show", f.show, enum_names_text(kQuantityNames, " | "), "MAP");
  opt("--range", f.range, enum_names_text(kRangeModeNames, " | "), "MODE");
  opt("--size", f.size, "window size WxH, W in [320, 8192], H in [240, 8192]", "WxH");
  opt("--theme", f.theme, "dark | light", "dark|light");
  opt("--hide-diagonal", f.hide_diagonal, "0 | 1", "0|1");
  opt("--screenshot", f.screenshot, "FILE: a PNG of the window, then exit with --exit-when-done", "FILE");
  opt("--screenshot-at-samples", f.screenshot_at_samples, "take the screenshot once the live run has N samples", "N");
  opt("--screenshot-at-se", f.screenshot_at_se, "... once the largest SE on screen is at most X", "X");
  opt("--export-figure", f.export_figure,
      "DIR: export the preset's figure (or its sweep on --tab sweep); with --run, the checkpoint animation "
      "(step-NNNNNN.png, animation.gif)",
      "DIR");
  opt("--from-results", f.from_results, "RESULTS_DIR: the figure's runs from merged .msum files", "RESULTS_DIR");
  opt("--export-scale", f.export_scale, "the exported PNGs' scale", "S");
  opt("--export-width", f.export_width, "the exported PNGs' width in pixels", "PX");
  app.add_flag("--exit-when-done")->description("quit once the screenshot or export is written");
  opt("--ui-bench", f.ui_bench, "N: restarts to drive for the frame-time benchmark", "N");
  opt("--open", f.open, "TENSOR_DIR: a real model's tensor folder", "TENSOR_DIR");
  opt("--lesson", f.lesson, "NAME|FILE: start a lesson", "NAME|FILE");
  opt("--step", f.step, "K: the lesson's step to start at (1-based)", "K");
  app.add_flag("--present")->description("presentation mode");
  opt("--export-slides", f.export_slides, "DIR: one PNG per lesson step and slides.md", "DIR");
  opt("--run", f.run,
      "DIR: a training run folder: opened in the Training tab (its last checkpoint the live model), a preset's run; "
      "with --export-figure and no preset (or one without figure rows), a PNG of the window per checkpoint and "
      "all of them as animation.gif",
      "DIR");
  opt("--train", f.train, "DIR: start training into DIR (new or empty) with the Training tab's defaults", "DIR");
  app.add_flag("--train-missing")->description("train a preset's missing run folder first (it says how long)");
  // Every setting as a flag, as maskscope-cli's run takes it, unless the window has an option of that name.
  for (const SettingInfo& row : setting_table()) {
    const std::string flag = std::string("--") + row.flag;
    if (app.get_option_no_throw(flag) != nullptr) continue;  // --samples: the window's (a lesson's cap)
    const std::string shown = default_text(row.key);
    opt(flag.c_str(), f.text[row.flag], std::string(row.help) + (shown.empty() ? "" : " (default " + shown + ")"))
        ->group("Settings");
  }
  std::string presets;
  for (const auto& p : shipped_presets()) presets += " " + p.name;
  app.footer("keys of --set: " + setting_keys_text() + "\npresets:" + presets);
}

void load_preset(const std::string& name, AppOptions& o, std::vector<std::string>& errors) {
  Preset p;
  std::string error;
  if (const Preset* shipped = find_shipped_preset(name)) p = *shipped;
  else if (!load_preset_file(name, p, error)) errors.push_back("--preset: " + error);
  if (!error.empty()) return;
  o.preset = p;
  o.settings = p.settings;
  o.samples_given = true;
  const bool light = o.view.light_theme;
  o.view = p.view;
  o.view.light_theme = light;
}

}  // namespace

int parse_app_options(int argc, char** argv, AppOptions& o) {
  CLI::App app{"maskscope: positional information from the causal mask, live (docs/window.md)", "maskscope"};
  AppFlags f;
  add_app_flags(app, f);
  std::vector<std::string> errors;
  // A flag is never a value: "--preset --set n=3" names the missing value (CLI11 would take "--set" as it).
  for (int k = 1; k + 1 < argc; ++k) {
    const CLI::Option* opt = app.get_option_no_throw(argv[k]);
    if (opt && opt->get_expected_min() > 0 && std::string(argv[k + 1]).rfind("--", 0) == 0)
      errors.push_back(std::string(argv[k]) + " needs a value, got the flag '" + argv[k + 1] + "'");
  }
  try {
    if (!errors.empty()) throw CLI::ParseError("", CLI::ExitCodes::ArgumentMismatch);
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::printf("%s", app.help().c_str());
    return 0;
  } catch (const CLI::ParseError& e) {
    if (errors.empty()) errors.push_back(std::string(e.what()) + " (see --help)");
    o.errors = errors;  // the browser build shows them on the page
    for (const auto& m : errors) std::fprintf(stderr, "maskscope: %s\n", m.c_str());
    return 2;
  }
  auto given = [&](const char* name) { return app.count(name) > 0; };
  // The preset comes first, whatever its place on the line: --set, --tab and --show refine it.
  const bool preset_given = given("--preset");
  if (preset_given) load_preset(f.preset, o, errors);
  std::optional<std::int64_t> samples;
  const bool was_random_weights = o.settings.random_weights();
  bool gamma_given = false;
  if (given("--samples"))
    if (auto v = whole_option("--samples", f.samples, Limits::samples_min, Limits::samples_max, errors)) samples = *v;
  if (given("--export-figure")) o.export_dir = f.export_figure;
  if (given("--run")) o.run_dir = f.run;
  if (given("--run") && o.run_dir.empty()) errors.push_back("--run needs a run folder");
  if (given("--train")) o.train_dir = f.train;
  if (given("--train") && o.train_dir.empty()) errors.push_back("--train needs a folder (new or empty)");
  if (given("--train") && given("--run")) errors.push_back("--train starts a new run; --run opens one: not both");
  if (given("--train-missing")) o.train_missing = true;
  if (given("--export-figure") && o.export_dir.empty()) errors.push_back("--export-figure needs a folder");
  if (given("--open")) o.tensors_dir = f.open;
  if (given("--from-results")) o.results_dir = f.from_results;
  if (given("--export-scale"))
    if (auto v =
            real_option("--export-scale", f.export_scale, ExportLimits::scale_min, ExportLimits::scale_max, errors))
      o.export_scale = *v;
  if (given("--export-width"))
    if (auto v =
            whole_option("--export-width", f.export_width, ExportLimits::width_min, ExportLimits::width_max, errors))
      o.export_width = int(*v);
  std::string err;
  for (const std::string& kv : f.set) {
    if (!apply_set(kv, o.settings, err)) errors.push_back(err);
    if (kv.rfind("samples=", 0) == 0) o.samples_given = true;
    if (kv.rfind("gamma=", 0) == 0) gamma_given = true;
  }
  // The setting flags (maskscope-cli's): the same conversion, and a flag of the other family refused.
  for (const SettingInfo& row : setting_table()) {
    const std::string flag = std::string("--") + row.flag;
    if (!f.text.count(row.flag) || !given(flag.c_str())) continue;
    try {
      setting_from_text(row.key, f.text[row.flag], o.settings);
    } catch (const std::exception& e) {
      const std::string m = e.what(), prefix = std::string(row.key) + ": ";
      errors.push_back(flag + ": " + (m.rfind(prefix, 0) == 0 ? m.substr(prefix.size()) : m));
    }
    o.samples_given = o.samples_given || row.member == SettingMember(&Settings::samples);
    gamma_given = gamma_given || row.member == SettingMember(&Settings::gamma);
  }
  for (const SettingInfo& row : setting_table()) {
    const std::string flag = std::string("--") + row.flag;
    if (row.family && *row.family != o.settings.model && f.text.count(row.flag) && given(flag.c_str()))
      errors.push_back(flag + ": applies to --model " + std::string(to_string(*row.family)) +
                       " only (the window's settings are --model " + std::string(to_string(o.settings.model)) + ")");
  }
  try {  // the parsers name the option and the valid values
    if (given("--tab")) o.view.tab = parse_tab(f.tab, "--tab");
  } catch (const std::exception& e) { errors.push_back(e.what()); }
  try {
    if (given("--show")) o.view.quantity = parse_quantity(f.show, "--show");
  } catch (const std::exception& e) { errors.push_back(e.what()); }
  try {
    if (given("--range")) o.view.range = parse_range_mode(f.range, "--range");
  } catch (const std::exception& e) { errors.push_back(e.what()); }
  const bool size_given = given("--size");
  if (size_given && (std::sscanf(f.size.c_str(), "%dx%d", &o.width, &o.height) != 2 || o.width < 320 ||
                     o.height < 240 || o.width > 8192 || o.height > 8192))
    errors.push_back("--size: '" + f.size + "'; valid: WxH with W in [320, 8192], H in [240, 8192]");
  if (given("--theme")) {
    if (f.theme == "light") o.view.light_theme = true;
    else if (f.theme == "dark") o.view.light_theme = false;
    else errors.push_back("--theme: '" + f.theme + "'; valid: dark, light");
  }
  if (given("--screenshot")) o.screenshot = f.screenshot;
  if (given("--screenshot-at-samples"))
    if (auto v = whole_option("--screenshot-at-samples", f.screenshot_at_samples, 1, Limits::samples_max, errors))
      o.screenshot_at_samples = *v;
  if (given("--screenshot-at-se"))
    if (auto v = real_option("--screenshot-at-se", f.screenshot_at_se, 1e-12, 1e6, errors)) o.screenshot_at_se = *v;
  if (given("--exit-when-done")) o.exit_when_done = true;
  if (given("--ui-bench"))
    if (auto v = whole_option("--ui-bench", f.ui_bench, 1, 10000, errors)) o.ui_bench = int(*v);
  if (given("--lesson")) {
    if (const Lesson* shipped = find_shipped_lesson(f.lesson)) o.lesson = *shipped;
    else if (!f.lesson.empty()) {
      Lesson l;
      std::string error;
      if (load_lesson_file(f.lesson, l, error)) o.lesson = l;
      else errors.push_back("--lesson: " + error);
    }
  }
  if (given("--step"))
    if (auto v = whole_option("--step", f.step, 1, 1000, errors)) o.lesson_step = int(*v);
  if (given("--present")) o.present = true;
  if (given("--export-slides")) o.slides_dir = f.export_slides;
  if (given("--hide-diagonal")) {
    if (f.hide_diagonal == "1" || f.hide_diagonal == "true") o.view.hide_diagonal = true;
    else if (f.hide_diagonal == "0" || f.hide_diagonal == "false") o.view.hide_diagonal = false;
    else errors.push_back("--hide-diagonal: '" + f.hide_diagonal + "'; valid: 0, 1, false, true");
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
  // On the Sweep tab --export-figure exports the preset's sweep; elsewhere its figure. With --run, a preset without
  // figure rows (settings, view, sweep) gives the checkpoint animation in its view instead (exports_animation).
  const bool sweep_export = o.preset && o.preset->sweep && o.view.tab == Tab::sweep;
  if (!o.export_dir.empty() && o.preset && o.preset->figure.rows.empty() && !sweep_export && !o.exports_animation())
    errors.push_back("--export-figure: preset '" + o.preset->name + "' has no figure rows" +
                     (o.preset->sweep ? " (its sweep exports with --tab sweep)" : ""));
  if (!o.export_dir.empty() && !preset_given && o.run_dir.empty())
    errors.push_back("--export-figure needs --preset with a figure (rows) or a sweep (on --tab sweep), or --run DIR");
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
