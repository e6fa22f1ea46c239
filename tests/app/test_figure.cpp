// Figures and presets without a window: preset round trip, shipped presets, corrupt files, shared
// runs, difference mode, and the exported numbers, SVG and PNG checked against the core's values.
#include <doctest/doctest.h>
#include <stb_image.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "controller.hpp"
#include "core/run/runner.hpp"
#include "core/formats/result_json.hpp"
#include "core/model/theory.hpp"
#include "figure.hpp"
#include "figure_render.hpp"
#include "figure_runs.hpp"
#include "svg_heatmaps.hpp"

using namespace maskscope;
using namespace maskscope::gui;
namespace fs = std::filesystem;

namespace {

Settings tiny() {
  Settings s;
  s.n = 6;
  s.d = 8;
  s.layers = 2;
  s.alpha = 0.5;
  s.samples = 4000;
  s.seed = 7;
  s.threads = 2;
  return s;
}

FigureSpec two_row_spec() {
  FigureSpec f;
  f.title = "test";
  f.layers = {1, 2};
  FigureRow a{"A", tiny(), Quantity::score, Transform::raw};
  FigureRow b = a;
  b.label = "B";
  b.settings.gamma = 1.0;
  f.rows = {a, b};
  return f;
}

// Snapshots computed once per distinct simulation, outside any figure code.
struct Reference {
  std::vector<std::pair<Settings, std::shared_ptr<const Snapshot>>> runs;
  std::shared_ptr<const Snapshot> operator()(const Settings& s) {
    for (auto& [k, v] : runs)
      if (k.same_simulation(s)) return v;
    runs.emplace_back(s, run_to_completion(s));
    return runs.back().second;
  }
};

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<double> parse_csv(const std::string& text) {
  std::vector<double> v;
  std::stringstream ss(text);
  std::string cell;
  while (std::getline(ss, cell, '\n')) {
    std::stringstream line(cell);
    std::string x;
    while (std::getline(line, x, ',')) v.push_back(x == "nan" ? NAN : std::strtod(x.c_str(), nullptr));
  }
  return v;
}

fs::path scratch(const std::string& name) {
  fs::path p = fs::path(MASKSCOPE_TEST_WORK) / name;
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

}  // namespace

TEST_CASE("a preset survives save and load unchanged, through JSON and through a file") {
  Preset p;
  p.name = "roundtrip";
  p.description = "all fields off their defaults";
  p.settings = tiny();
  p.settings.rope_base = 500;
  p.settings.mask = MaskKind::window;
  p.settings.window = 3;
  p.view.tab = Tab::figure;
  p.view.quantity = Quantity::weight;
  p.view.sequential = ColormapId::magma;
  p.view.diverging = ColormapId::coolwarm;
  p.view.hide_diagonal = false;
  p.view.shared_range = true;
  p.view.light_theme = true;
  p.figure = two_row_spec();
  p.figure.rows[1].quantity = Quantity::cosine;
  p.figure.rows[1].transform = Transform::diagonal_normalized;
  p.figure.rows[1].label.clear();
  p.figure.groups = {{"d = 8", {{"d", 8}}}, {"d = 16", {{"d", 16}}}};
  p.figure.difference = true;
  p.figure.shared_range = true;
  p.figure.sequential = ColormapId::viridis;
  p.export_options = {4.0, 1200};

  const Preset back_json = preset_from_json(preset_to_json(p));
  CHECK(back_json.settings == p.settings);
  CHECK(back_json.view == p.view);
  CHECK(back_json.figure.rows == p.figure.rows);
  CHECK(back_json.figure.groups == p.figure.groups);
  CHECK(back_json.export_options == p.export_options);
  CHECK(back_json == p);
  const fs::path dir = scratch("preset_roundtrip");
  std::string error;
  REQUIRE(save_preset_file((dir / "p.json").string(), p, error));
  CHECK_FALSE(fs::exists(dir / "p.json.tmp"));
  Preset back;
  REQUIRE(load_preset_file((dir / "p.json").string(), back, error));
  CHECK(back == p);
}

TEST_CASE("every shipped preset is on disk, embedded, and valid") {
  const auto& shipped = shipped_presets();
  int on_disk = 0;
  for (const auto& entry : fs::directory_iterator(MASKSCOPE_PRESET_DIR)) {
    if (entry.path().extension() != ".json") continue;
    ++on_disk;
    Preset p;
    std::string error;
    INFO(entry.path().string());
    REQUIRE_MESSAGE(load_preset_file(entry.path().string(), p, error), error);
    CHECK(p.name == entry.path().stem().string());
    CHECK(validate(p.settings).empty());
    CHECK(validate(p.figure).empty());
    CHECK_FALSE(p.figure.rows.empty());
    const Preset* embedded = find_shipped_preset(p.name);
    REQUIRE(embedded != nullptr);
    CHECK(*embedded == p);
  }
  CHECK(on_disk == 14);
  CHECK(shipped.size() == 14);  // none skipped as broken
  // docs/model.md section 6 names.
  for (const char* name : {"behind-rope-fig2", "behind-rope-fig4", "behind-rope-fig7", "behind-rope-fig10",
                           "ln-recency-fig1", "ln-recency-fig2", "ln-recency-fig5", "zuo-fig1", "zuo-table4", "zuo-table5",
                           "zuo-table6", "zuo-embedding-scale", "leakage-behind-rope", "leakage-ln-recency"})
    CHECK_MESSAGE(find_shipped_preset(name) != nullptr, name);
}

TEST_CASE("the shipped presets encode the papers' figures") {
  const Preset& fig1 = *find_shipped_preset("ln-recency-fig1");
  CHECK(fig1.figure.rows.size() == 4);
  CHECK(fig1.figure.layers == std::vector<int>{1, 2});
  CHECK(fig1.figure.hide_diagonal);
  CHECK(fig1.settings.samples == 10'000'000);  // as in LN-recency Sec. 3
  CHECK(figure_simulations(fig1.figure).size() == 8);  // 4 rows x d in {16, 64}
  CHECK(cell_settings(fig1.figure, 0, 0).norm == Norm::none);
  CHECK(cell_settings(fig1.figure, 3, 1).d == 64);
  CHECK(cell_settings(fig1.figure, 3, 1).gamma == 1.0);
  const Preset& fig4 = *find_shipped_preset("behind-rope-fig4");
  CHECK(fig4.figure.rows[1].transform == Transform::diagonal_normalized);
  CHECK(figure_simulations(fig4.figure).size() == 1);  // raw and diagonal-normalized rows share a run
  CHECK(fig4.settings.rope_base == 10000.0);
  CHECK(find_shipped_preset("behind-rope-fig10")->settings.mask == MaskKind::bidirectional);
}

TEST_CASE("a corrupt, truncated or out-of-range preset is refused with a clear error and changes nothing") {
  const fs::path dir = scratch("preset_corrupt");
  const std::string good = preset_to_json(*find_shipped_preset("ln-recency-fig1")).dump(2);
  struct Case {
    std::string text, expect;
  } cases[] = {
      {good.substr(0, good.size() / 2), "not valid JSON"},
      {"", "not valid JSON"},
      {"[1, 2, 3]", "expected a JSON object"},
      {R"({"settings": {"alpha": 1.5}})", "settings.alpha"},
      {R"({"settings": {"n": "ten"}})", "settings.n: 'ten' is not a number"},
      {R"({"settings": {}, "figure": {"rows": [{"set": {"d": 0}}]}})", "figure.rows[0].set.d: 0 is out of range"},
      {R"({"settings": {}, "figure": {"rows": [{"set": {"colour": 1}}]}})", "figure.rows[0].set: unknown setting 'colour'"},
      {R"({"settings": {}, "figure": {"layers": [17]}})", "figure.layers"},
      {R"({"settings": {}, "figure": {"layers": [0, 1], "rows": [{"show": "cosine"}]}})", "figure.layers: layer 0"},
      {R"({"settings": {"model": "random_weights"}, "figure": {"rows": [{"show": "norm"}]}})", "figure.rows[0].show"},
      {R"({"settings": {}, "view": {"tab": "nope"}})", "view.tab"},
      {R"({"settings": {}, "export": {"scale": 100}})", "export.scale"},
      // Issue 9: numbers that used to wrap, truncate or overflow are refused with key, value and range.
      {R"({"settings": {"n": 4294967306}})", "settings.n: 4294967306 is out of range; valid: whole number in [1, 512]"},
      {R"({"settings": {"n": 10.7}})", "settings.n: 10.7 is not a whole number"},
      {R"({"settings": {"n": 1e300}})", "settings.n: 1e+300 is out of range"},
      {R"({"settings": {"seed": -1}})", "settings.seed: -1 is out of range"},
      {R"({"settings": {"threads": 4294967297}})", "settings.threads: 4294967297 is out of range"},
      {R"({"settings": {"unit_input": 2}})", "settings.unit_input"},
      {R"({"settings": {}, "figure": {"layers": [4294967298]}})", "figure.layers: 4294967298 is out of range"},
      {R"({"settings": {}, "export": {"width": 4294967396}})", "export.width: 4294967396 is out of range"},
      {R"({"settings": {"n": 10}, "figure": {"rows": [{"set": {"mask": "window:0"}}]}})", "figure.rows[0].mask"},
  };
  Controller controller(tiny());
  const Settings before = controller.settings();
  for (const auto& c : cases) {
    const fs::path file = dir / "bad.json";
    std::ofstream(file, std::ios::binary | std::ios::trunc) << c.text;
    Preset p;
    p.name = "untouched";
    std::string error;
    INFO(c.text.substr(0, 60));
    CHECK_FALSE(load_preset_file(file.string(), p, error));
    CHECK_MESSAGE(error.find(c.expect) != std::string::npos, error);
    CHECK(error.find("bad.json") != std::string::npos);
    CHECK(p.name == "untouched");
  }
  CHECK(controller.settings() == before);
  std::string error;
  Preset p;
  CHECK_FALSE(load_preset_file((dir / "missing.json").string(), p, error));
  CHECK(error.find("cannot open") != std::string::npos);
  CHECK_FALSE(load_preset_file(dir.string(), p, error));  // a folder is not "invalid JSON at byte 1"
  CHECK(error.find("is a folder") != std::string::npos);
}

TEST_CASE("rows that differ only in what they show share one run; removed rows stop theirs") {
  FigureSpec f = two_row_spec();
  FigureRow cos = f.rows[0];
  cos.quantity = Quantity::cosine;
  FigureRow diag = f.rows[0];
  diag.transform = Transform::diagonal_normalized;
  f.rows.push_back(cos);
  f.rows.push_back(diag);
  f.rows[0].settings.threads = 1;  // threads never change the numbers
  CHECK(figure_simulations(f).size() == 2);
  FigureRuns runs;
  runs.update(f);
  CHECK(runs.run_count() == 2);
  CHECK(runs.started() == 2);
  f.rows.erase(f.rows.begin() + 1);  // drop B
  runs.update(f);
  CHECK(runs.run_count() == 1);
  CHECK(runs.started() == 2);  // nothing restarted
}

TEST_CASE("figure panels equal the core's numbers; difference mode is B - A with the same draws") {
  FigureSpec f = two_row_spec();
  Reference ref;
  const FigureData data = build_figure(f, std::ref(ref));
  REQUIRE(data.cells.size() == 2);
  REQUIRE(data.cells[0].size() == 2);
  CHECK(data.complete);
  for (std::size_t r = 0; r < 2; ++r)
    for (std::size_t c = 0; c < 2; ++c) {
      const auto snap = ref(cell_settings(f, r, 0));
      const LayerStats& l = snap->layers[c];
      const PanelData& p = data.cells[r][c].panel;
      CHECK(data.cells[r][c].metric_name == "RP");
      CHECK(data.cells[r][c].metric == l.recency);
      for (int i = 0; i < p.n; ++i)
        for (int j = 0; j < p.n; ++j) {
          const double v = p.value[std::size_t(i * p.n + j)];
          if (i == j && i > 0) CHECK(std::isnan(v));  // hidden diagonal except row 0
          else if (j > i) CHECK(std::isnan(v));       // causal mask
          else CHECK(v == l.score_mean[std::size_t(i * p.n + j)]);
        }
    }
  f.difference = true;
  const FigureData diff = build_figure(f, std::ref(ref));
  REQUIRE(diff.cells.size() == 1);
  const auto a = ref(cell_settings(f, 0, 0)), b = ref(cell_settings(f, 1, 0));
  const PanelData& p = diff.cells[0][1].panel;
  CHECK(p.lo == -p.hi);
  for (std::size_t e = 0; e < p.value.size(); ++e)
    if (std::isfinite(p.value[e])) CHECK(p.value[e] == b->layers[1].score_mean[e] - a->layers[1].score_mean[e]);
  CHECK(diff.note.empty());
  // A row minus itself is exactly zero: the same seed gives the same random draws.
  f.rows[1] = f.rows[0];
  const FigureData same = build_figure(f, std::ref(ref));
  for (double v : same.cells[0][0].panel.value)
    if (std::isfinite(v)) CHECK(v == 0.0);
  f.rows[1].settings.seed = 99;
  CHECK_FALSE(build_figure(f, std::ref(ref)).note.empty());  // warns: different seeds
}

TEST_CASE("h(j) figures: Eq. 42 beside the simulated 1/||x_j||, scaled to meet at j = 1") {
  Preset p = *find_shipped_preset("ln-recency-fig2");
  for (auto& r : p.figure.rows) r.settings.samples = 3000;
  Reference ref;
  const FigureData data = build_figure(p.figure, std::ref(ref));
  REQUIRE(data.curves.size() == 2);
  REQUIRE(data.curves[0].size() == 5);
  const FigureCurve& c = data.curves[0][2];  // alpha 0.4, gamma 0
  const auto theory = theory::ln_recency_h_curve(10, 64, 0.4, 0.0, false);
  REQUIRE(c.theory.size() == 10);
  for (std::size_t k = 0; k < 10; ++k) CHECK(c.theory[k] == doctest::Approx(theory[k]).epsilon(1e-12));
  CHECK(c.simulated[0] == doctest::Approx(c.theory[0]).epsilon(1e-12));
  for (std::size_t k = 1; k < 10; ++k) CHECK(c.simulated[k] > c.simulated[k - 1]);  // h(j) rises with j
  const std::string csv = curves_csv(data.curves[0]);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 11);
}

TEST_CASE("export writes PNG, SVG, per-panel CSV and the preset; cells are exact") {
  Preset p;
  p.name = "export-test";
  p.settings = tiny();
  p.figure = two_row_spec();
  p.figure.groups = {{"d = 8", {{"d", 8}}}, {"d = 4", {{"d", 4}}}};
  Reference ref;
  const FigureData data = build_figure(p.figure, std::ref(ref));
  const fs::path dir = scratch("export");
  const ExportResult res = export_figure(data, p, dir.string(), {2.0, 0});
  REQUIRE_MESSAGE(res.ok, res.error);
  for (const char* f : {"figure.png", "figure.svg", "figure.json", "preset.json"}) CHECK(fs::exists(dir / f));
  for (const auto& e : fs::directory_iterator(dir)) CHECK(e.path().extension() != ".tmp");

  // CSV: every panel equals the snapshot of its run, bit for bit.
  const auto meta = nlohmann::json::parse(read_text(dir / "figure.json"));
  REQUIRE(meta["panels"].size() == 8);  // 2 rows x 2 groups x 2 layers
  for (const auto& panel : meta["panels"]) {
    Settings s = p.settings;
    settings_from_json(panel["settings"], s);
    const auto snap = ref(s);
    const int layer = panel["layer"];
    const auto csv = parse_csv(read_text(dir / panel["file"].get<std::string>()));
    const auto& expect = snap->layers[std::size_t(layer - 1)].score_mean;
    REQUIRE(csv.size() == expect.size());
    for (std::size_t e = 0; e < csv.size(); ++e) {
      const bool hidden = e % 7 == 0 && e > 0;  // n = 6: diagonal entries except (0, 0)
      if (hidden || std::isnan(expect[e])) CHECK(std::isnan(csv[e]));
      else CHECK(csv[e] == expect[e]);
    }
    CHECK(panel["RP"]["value"].get<double>() == snap->layers[std::size_t(layer - 1)].recency);
  }
  CHECK(preset_from_json(nlohmann::json::parse(read_text(dir / "preset.json"))) == p);

  // SVG: one group per panel with exactly n * n rectangles, real text.
  const std::string svg = read_text(dir / "figure.svg");
  const test::SvgSummary parsed = test::read_svg(svg);
  REQUIRE(parsed.well_formed);
  int groups = 0;
  for (const auto& h : parsed.heatmaps) {
    CHECK(h.rects == 36);
    CHECK(h.n == 6);
    ++groups;
  }
  CHECK(groups == 8);
  CHECK(svg.find(">Layer 2</text>") != std::string::npos);
  CHECK(svg.find(">d = 4</text>") != std::string::npos);

  // PNG: the requested size, a white page, and each cell's centre exactly its colour.
  const Scene scene = layout_figure(data);
  int w = 0, h = 0, ch = 0;
  unsigned char* px = stbi_load((dir / "figure.png").string().c_str(), &w, &h, &ch, 3);
  REQUIRE(px != nullptr);
  CHECK(w == res.png_width);
  CHECK(h == res.png_height);
  CHECK(w == int(std::ceil(scene.width * 2 - 1e-6)));
  CHECK(px[0] == 255);
  CHECK(px[1] == 255);
  int checked = 0;
  for (const SceneItem& item : scene.items)
    if (const auto* hm = std::get_if<SceneHeatmap>(&item)) {
      const float cw = (hm->x1 - hm->x0) / float(hm->n), chh = (hm->y1 - hm->y0) / float(hm->n);
      for (int i = 0; i < hm->n; ++i)
        for (int j = 0; j < hm->n; ++j) {
          const int x = int((hm->x0 + (float(j) + 0.5f) * cw) * 2), y = int((hm->y0 + (float(i) + 0.5f) * chh) * 2);
          const unsigned char* q = px + 3 * (std::size_t(y) * std::size_t(w) + std::size_t(x));
          const Rgba& c = hm->cells[std::size_t(i * hm->n + j)];
          CHECK(std::abs(int(q[0]) - int(std::lround(c.r * 255))) <= 1);
          CHECK(std::abs(int(q[2]) - int(std::lround(c.b * 255))) <= 1);
          ++checked;
        }
    }
  CHECK(checked == 8 * 36);
  stbi_image_free(px);

  // A chosen width in pixels.
  const ExportResult wide = export_figure(data, p, (dir / "wide").string(), {1.0, 1500});
  REQUIRE(wide.ok);
  CHECK(wide.png_width == 1500);
}

TEST_CASE("export into a path that cannot be a folder fails with a message and no partial files") {
  const fs::path dir = scratch("export_bad");
  std::ofstream(dir / "file") << "x";
  Reference ref;
  Preset p;
  p.settings = tiny();
  p.figure = two_row_spec();
  const ExportResult res = export_figure(build_figure(p.figure, std::ref(ref)), p, (dir / "file" / "sub").string(), {});
  CHECK_FALSE(res.ok);
  CHECK(res.error.find("cannot create folder") != std::string::npos);
}

TEST_CASE("labels with control characters still give a well-formed SVG (XML 1.0 forbids them)") {
  Scene scene;
  scene.width = scene.height = 100;
  SceneText label;
  label.x = label.y = label.size = 10;
  label.text = std::string("row \x01\x1b[31m & <b> \"q\"\x7f");
  scene.items.emplace_back(std::in_place_type<SceneText>, std::move(label));
  const std::string svg = scene_to_svg(scene);
  const test::SvgSummary parsed = test::read_svg(svg);
  CHECK(parsed.well_formed);
  CHECK(parsed.texts == 1);
  CHECK(svg.find('\x01') == std::string::npos);
}

TEST_CASE("an export removes the temporaries a killed export left, and leaves no temporary of its own") {
  const fs::path dir = scratch("export_stale");
  fs::create_directories(dir);
  std::ofstream(dir / ".figure.png.maskscope-tmp") << "half a PNG";
  std::ofstream(dir / ".row0_col0_layer1.csv.maskscope-tmp") << "1,2";
  std::ofstream(dir / "notes.txt") << "the user's own file";
  Reference ref;
  Preset p;
  p.settings = tiny();
  p.figure = two_row_spec();
  const ExportResult res = export_figure(build_figure(p.figure, std::ref(ref)), p, dir.string(), {});
  REQUIRE(res.ok);
  for (const auto& e : fs::directory_iterator(dir))
    CHECK(e.path().filename().string().find(kTemporarySuffix) == std::string::npos);
  CHECK(fs::exists(dir / "notes.txt"));  // only our own temporaries go
  CHECK(fs::exists(dir / "figure.png"));
}

TEST_CASE("table figures: each row's metric per layer (layer 0 = embeddings) with its SE, as CSV") {
  Settings s;
  s.model = Model::random_weights;
  s.n = 6;
  s.d = 16;
  s.heads = 2;
  s.layers = 2;
  s.gamma = 1.0;
  s.samples = 300;
  s.threads = 2;
  FigureSpec f;
  f.kind = FigureKind::table;
  f.layers = {0, 1, 2};
  f.rows = {{"cos", s, Quantity::cosine, Transform::raw}, {"norms", s, Quantity::norm, Transform::raw},
            {"scores", s, Quantity::score, Transform::raw}};
  CHECK(validate(f).empty());
  Reference ref;
  const FigureData data = build_figure(f, std::ref(ref));
  const auto snap = ref(s);
  REQUIRE(data.cells.size() == 3);
  CHECK(data.cells[0][0].metric == snap->embeddings[0].adjacency);
  CHECK(data.cells[0][2].metric == snap->layers[1].adjacency);
  CHECK(data.cells[0][2].metric_se == snap->layers[1].adjacency_se);
  CHECK(data.cells[1][1].metric == snap->layers[0].norm_adjacency);
  CHECK(data.cells[2][1].metric == snap->layers[0].recency);
  CHECK(std::isnan(data.cells[2][0].metric));  // the embeddings have no RP
  const std::string csv = table_csv(data);
  std::stringstream lines(csv);
  std::string line;
  std::getline(lines, line);
  CHECK(line == "row,label,group,layer,metric,value,se");
  int count = 0;
  while (std::getline(lines, line)) ++count;
  CHECK(count == 9);
  char expect[64];
  std::snprintf(expect, sizeof expect, "%.17g", snap->layers[1].adjacency);
  CHECK(csv.find(std::string("\"cos\",\"\",2,\"adj\",") + expect) != std::string::npos);
  // A table lays out as text, no heatmaps.
  const Scene scene = layout_figure(data);
  CHECK(std::none_of(scene.items.begin(), scene.items.end(),
                     [](const SceneItem& item) { return std::holds_alternative<SceneHeatmap>(item); }));
  // Norms are not a map: a heatmap figure refuses them, naming the row.
  f.kind = FigureKind::heatmaps;
  const auto errors = validate(f);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].setting == "figure.rows[1].show");
}
