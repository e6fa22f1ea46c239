// Presets without a window: the round trip through JSON and files, the shipped presets and the
// papers' figures they encode, and corrupt files refused with a clear error.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <sys/stat.h>

#include "core/formats/result_json.hpp"
#include "figure_helpers.hpp"
#include "common/controller.hpp"
#include "common/figure/figure.hpp"

using namespace maskscope;
using namespace maskscope::gui;
using namespace maskscope::test;

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
    if (p.sweep) CHECK(plan_sweep(*p.sweep, p.settings).error.empty());  // a sweep preset: the Sweep tab
    else CHECK_FALSE(p.figure.rows.empty());
    const Preset* embedded = find_shipped_preset(p.name);
    REQUIRE(embedded != nullptr);
    CHECK(*embedded == p);
  }
  CHECK(on_disk == 36);
  CHECK(shipped.size() == 36);  // none skipped as broken
  // docs/model.md section 6 names.
  for (const char* name : {"behind-rope-fig2",
                           "behind-rope-fig4",
                           "behind-rope-fig7",
                           "behind-rope-fig10",
                           "ln-recency-fig1",
                           "ln-recency-fig2",
                           "ln-recency-fig5",
                           "zuo-fig1",
                           "zuo-table4",
                           "zuo-table5",
                           "zuo-table6",
                           "zuo-embedding-scale",
                           "leakage-behind-rope",
                           "leakage-ln-recency",
                           "zuo-fig3-layer-lines",
                           "zuo-fig11-norms",
                           "zuo-fig2-histograms",
                           "zuo-fig5-learned-positions",
                           "zuo-fig8-probes",
                           "ruscio-fig1-bins",
                           "ruscio-first-token",
                           "zuo-table1-tasks",
                           "zuo-table6-tasks",
                           "sweep-ln-recency-sec3",
                           "sweep-ln-recency-fig5",
                           "sweep-ln-recency-fig6",
                           "sweep-ln-recency-phase",
                           "sweep-zuo-table5",
                           "sweep-behind-rope-fig7",
                           "sweep-ruscio-causal-bidirectional"})
    CHECK_MESSAGE(find_shipped_preset(name) != nullptr, name);
}

TEST_CASE("the shipped presets encode the papers' figures") {
  const Preset& fig1 = *find_shipped_preset("ln-recency-fig1");
  CHECK(fig1.figure.rows.size() == 4);
  CHECK(fig1.figure.layers == std::vector<int>{1, 2});
  CHECK(fig1.figure.hide_diagonal);
  CHECK(fig1.settings.samples == 10'000'000);          // as in LN-recency Sec. 3
  CHECK(figure_simulations(fig1.figure).size() == 8);  // 4 rows x d in {16, 64}
  CHECK(cell_settings(fig1.figure, 0, 0).norm == Norm::none);
  CHECK(cell_settings(fig1.figure, 3, 1).d == 64);
  CHECK(cell_settings(fig1.figure, 3, 1).gamma == 1.0);
  const Preset& fig4 = *find_shipped_preset("behind-rope-fig4");
  CHECK(fig4.figure.rows[1].transform == Transform::diagonal_normalized);
  CHECK(figure_simulations(fig4.figure).size() == 1);  // raw and diagonal-normalized rows share a run
  CHECK(fig4.settings.rope_base == 10000.0);
  CHECK(find_shipped_preset("behind-rope-fig10")->settings.mask == MaskKind::bidirectional);
  // Zuo et al.'s Fig. 8 probes: 6 layers, d 384, 6 heads, n 32, one fixed network; Fig. 5: learned absolute
  // positions with normal attention beside causal NoPE; Fig. 2: the histograms on.
  const Settings& fig8 = find_shipped_preset("zuo-fig8-probes")->settings;
  CHECK((fig8.layers == 6 && fig8.d == 384 && fig8.heads == 6 && fig8.n == 32));
  CHECK(fig8.weights == WeightsMode::fixed);
  const Preset& fig5 = *find_shipped_preset("zuo-fig5-learned-positions");
  CHECK(fig5.settings.pos_embedding == PosEmbedding::learned);
  CHECK(fig5.settings.mask == MaskKind::bidirectional);
  CHECK(cell_settings(fig5.figure, 1, 0).pos_embedding == PosEmbedding::none);
  CHECK(cell_settings(fig5.figure, 1, 0).mask == MaskKind::causal);
  CHECK(find_shipped_preset("zuo-fig2-histograms")->settings.histograms == 100);
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
      {R"({"settings": {}, "figure": {"rows": [{"set": {"colour": 1}}]}})",
       "figure.rows[0].set: unknown setting 'colour'"},
      {R"({"settings": {}, "figure": {"layers": [49]}})", "figure.layers"},
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
  CHECK(error.find("does not exist") != std::string::npos);
  CHECK_FALSE(load_preset_file(dir.string(), p, error));  // a folder is not "invalid JSON at byte 1"
  CHECK(error.find("is a folder") != std::string::npos);
  // Refused at once, before a byte is read: a FIFO (whose open would wait for a writer), an endless
  // device, and a file over the 16 MiB cap.
  const fs::path fifo = dir / "fifo.json";
  fs::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_FALSE(load_preset_file(fifo.string(), p, error));
  CHECK(error.find("not a regular file") != std::string::npos);
  CHECK_FALSE(load_preset_file("/dev/zero", p, error));
  CHECK(error.find("not a regular file") != std::string::npos);
  fs::resize_file(dir / "bad.json", (16u << 20) + 1);
  CHECK_FALSE(load_preset_file((dir / "bad.json").string(), p, error));
  CHECK(error.find("over the limit of 16 MiB") != std::string::npos);
  fs::remove(fifo);
}
