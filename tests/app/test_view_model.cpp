// The window's shared helpers without a window: number formatting, colour ranges (all / visible /
// robust, clipping, noise), the auto sample count, the h(j) theory choice, the settings reader and
// random weights in the views (the panels built in place and in the background: test_panel_builder.cpp).
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <set>
#include <thread>

#include "core/formats/result_json.hpp"
#include "common/controller.hpp"
#include "common/figure/figure_workbench.hpp"
#include "common/format.hpp"
#include "common/h_of_j.hpp"
#include "common/panels.hpp"

using namespace maskscope;
using namespace maskscope::gui;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// An n x n lower-triangular panel: value v(i, j), NaN above the diagonal, SE `se` everywhere.
template <class F>
PanelData triangle(int n, F v, double se = 0.01) {
  PanelData p;
  p.n = n;
  p.value.assign(std::size_t(n) * n, kNaN);
  p.se.assign(std::size_t(n) * n, se);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) p.value[std::size_t(i) * n + j] = v(i, j);
  return p;
}
}  // namespace

TEST_CASE("value_with_se: the papers' 4 decimals, more when the SE needs them, the ± sign") {
  CHECK(value_with_se(0.638241, 0.0031) == "0.6382 \u00b1 0.0031");
  CHECK(value_with_se(0.638241, 0.00031) == "0.63824 \u00b1 0.00031");
  CHECK(value_with_se(0.638241, 0.000031) == "0.638241 \u00b1 0.000031");  // 10^7 samples: SE not printed as 0.0000
  CHECK(value_with_se(0.5, 2.4e-7) == "0.50000000 \u00b1 0.00000024");     // capped at 8 decimals
  CHECK(value_with_se(0.5, kNaN) == "0.5000 \u00b1 --");                   // an SE not known is not 0
  CHECK(value_with_se(kNaN, 0.1) == "n/a");
}

TEST_CASE("an SE from fewer than 2 samples is not known: '--', never 0 (issue 48 item 6)") {
  // The core reports SE 0 after one sample (RunMoments::standard_error); the display says it is unknown.
  CHECK(value_with_se(0.4909, 0.0, 1) == "0.4909 \u00b1 --");
  CHECK(value_with_se(0.4909, 0.0, 0) == "0.4909 \u00b1 --");
  CHECK(value_with_se(0.638241, 0.00031, 2) == "0.63824 \u00b1 0.00031");
  CHECK(value_with_se(Estimate{0.4909, 0.0, 0.0, 1}) == "0.4909 \u00b1 --");
  CHECK(value_with_se(Estimate{0.5, 0.0, 0.0, 1000}) == "0.5000 \u00b1 0.0000");  // exactly 0 from 1000 samples
  CHECK(se_text(0.0, 0) == "--");  // "largest SE on screen" before any sample
  CHECK(se_text(0.0, 1) == "--");
  CHECK(se_text(kNaN, 100) == "--");
  CHECK(se_text(0.00031, 100) == "0.00031");
}

TEST_CASE("tick_text: enough decimals for the step, never -0") {
  CHECK(tick_text(120, 20) == "120");
  CHECK(tick_text(0.25, 0.05) == "0.25");
  CHECK(tick_text(-1e-18, 0.1) == "0.0");
  CHECK(tick_text(0.002, 0.001) == "0.002");
}

TEST_CASE("colorbar_ticks: both ends and the middle, distinct, each within 1% of the range") {
  for (auto [lo, hi] : {std::pair{3.9735, 3.9813}, std::pair{-0.0021, 0.0021}, std::pair{4.3, 6.1},
                        std::pair{-1e-9, 1e-9}, std::pair{0.0187, 0.0223}, std::pair{1e5, 1.0001e5}}) {
    const auto ticks = colorbar_ticks(lo, hi);
    REQUIRE(ticks.size() == 3);
    CHECK(ticks[0].value == lo);
    CHECK(ticks[2].value == hi);
    CHECK(ticks[1].value == doctest::Approx((lo + hi) / 2));
    std::set<std::string> texts;
    for (const auto& t : ticks) {
      texts.insert(t.text);
      INFO(lo << " .. " << hi << ": '" << t.text << "'");
      CHECK(std::fabs(std::strtod(t.text.c_str(), nullptr) - t.value) <= 0.01 * (hi - lo) + 1e-300);
    }
    CHECK(texts.size() == 3);
  }
  CHECK(colorbar_ticks(-0.5, 0.5)[1].text == "0");  // a symmetric range's middle is 0, not -0 or 1e-17
}

TEST_CASE("compact_number, with_thousands and the series palette") {
  CHECK(compact_number(0.0038123, 2) == "0.0038");
  CHECK(compact_number(0, 2) == "0");
  CHECK(compact_number(kNaN, 2) == "n/a");
  CHECK(with_thousands(1234567) == "1,234,567");
  CHECK(with_thousands(100) == "100");
  CHECK(with_thousands(-1000) == "-1,000");
  CHECK(series_color(0) == series_color(8));  // 8 colours, cycled: series k keeps its colour
  CHECK(series_color(0) != series_color(1));
}

TEST_CASE("range modes: one large cell swamps 'all' but not 'visible' or 'robust'") {
  // Scores like LN layer 1: the (0,0) cell is sqrt(d) = 8, the rest near 4 with structure.
  PanelData base = triangle(10, [](int i, int j) { return i == 0 && j == 0 ? 8.0 : 4.0 + 0.01 * (i - j); });
  for (int i = 1; i < 10; ++i) base.value[std::size_t(i) * 10 + i] = kNaN;  // hidden diagonal (except row 0)

  PanelData all = base;
  fit_range(all, RangeMode::all, false, true);
  CHECK(all.hi == doctest::Approx(8.0));
  CHECK_FALSE(all.above);

  PanelData visible = base;
  fit_range(visible, RangeMode::visible, false, true);
  CHECK(visible.lo == doctest::Approx(4.01));  // offset 1
  CHECK(visible.hi == doctest::Approx(4.09));  // offset 9
  CHECK(visible.above);                        // the (0,0) cell is clipped, and the colorbar says so
  CHECK_FALSE(visible.below);

  PanelData robust = base;
  fit_range(robust, RangeMode::robust, false, true);
  CHECK(robust.lo >= visible.lo);
  CHECK(robust.hi <= visible.hi);
  CHECK(robust.hi > robust.lo);
}

TEST_CASE("centred ranges are symmetric; an all-zero panel gets the noise scale, not +-0") {
  // SEs far below the spread: structure, stretched to its largest |value| (with SE 0.01 it would be noise only).
  PanelData p = triangle(
      6, [](int i, int j) { return 0.001 * (i - 2 * j); }, 1e-5);
  fit_range(p, RangeMode::all, true, false);
  CHECK(p.lo == -p.hi);
  CHECK(p.hi == doctest::Approx(0.005));  // the largest |value|: 0.001 * (5 - 0) and 0.001 * (5 - 10)
  PanelData zero = triangle(
      6, [](int, int) { return 0.0; }, 0.002);
  fit_range(zero, RangeMode::robust, true, false);
  CHECK(zero.noise_only);
  CHECK(zero.hi == doctest::Approx(0.008));  // noise only: 4 SE (noise_only_map)
  CHECK(zero.lo == -zero.hi);
  PanelData exact = triangle(
      6, [](int, int) { return 0.0; }, 0.0);
  fit_range(exact, RangeMode::robust, true, false);
  CHECK(exact.hi == 1.0f);
  const auto ticks = colorbar_ticks(exact.lo, exact.hi);
  CHECK(ticks[0].text == "-1");
  CHECK(ticks[2].text == "1");
}

TEST_CASE("noise: cells within 2 SE of 0 are marked, others not") {
  PanelData p = triangle(
      4, [](int i, int j) { return i == j ? 0.0 : 0.05 * (i - j); }, 0.03);
  mark_noise(p);
  CHECK(p.noise[0] == 1);          // 0 <= 2 SE
  CHECK(p.noise[1 * 4 + 0] == 1);  // 0.05 <= 0.06
  CHECK(p.noise[2 * 4 + 0] == 0);  // 0.10 > 0.06
  CHECK(p.noise[0 * 4 + 1] == 0);  // masked (NaN) cells are not noise
}

TEST_CASE("build_panel: cosines hide their whole diagonal; the range ignores it") {
  Settings s;
  s.n = 5;
  s.d = 16;
  s.layers = 1;
  s.samples = 2000;
  s.threads = 2;
  const auto snap = run_to_completion(s);
  const PanelData cos = build_panel(*snap, 0, Quantity::cosine, Transform::raw, {true, RangeMode::all, true});
  for (int i = 0; i < 5; ++i) CHECK(std::isnan(cos.value[std::size_t(i) * 5 + i]));
  CHECK(cos.hi < 0.999f);  // not the diagonal's 1
  const PanelData shown = build_panel(*snap, 0, Quantity::cosine, Transform::raw, {false, RangeMode::all, true});
  CHECK(shown.value[0] == doctest::Approx(1.0));
  CHECK(shown.hi == doctest::Approx(1.0));  // 'all' with the diagonal shown: it sets the top
  const PanelData diag =
      build_panel(*snap, 0, Quantity::score, Transform::diagonal_normalized, {true, RangeMode::robust, true});
  CHECK(diag.centred);
  CHECK(diag.noise.size() == diag.value.size());
}

TEST_CASE("auto sample count: 100,000 at the defaults, fewer as n grows, within [500, 100000]") {
  Settings s;
  CHECK(auto_sample_count(s) == 100000);
  std::int64_t previous = auto_sample_count(s);
  for (int n : {20, 50, 100, 200, 512}) {
    s.n = n;
    const std::int64_t c = auto_sample_count(s);
    CHECK(c <= previous);
    CHECK(c >= 500);
    previous = c;
  }
  s.n = 200;
  CHECK(auto_sample_count(s) < 2000);  // seconds, not the 25 minutes of 100,000 samples at n 200
}

TEST_CASE("a paused controller restarts paused: the new run does not take a single sample") {
  Settings s;
  s.samples = 200000;
  s.threads = 2;
  Controller c(s);
  c.set_paused(true, "test");
  CHECK(c.pause_reason() == "test");
  s.seed = 5;
  c.edit(s);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  CHECK(c.snapshot()->samples_done == 0);
}

TEST_CASE("h(j): the closed form that applies, and the scaled inverse norms") {
  Settings s;
  s.norm = Norm::layernorm;
  CHECK(h_theory(s) == HTheory::ln_recency_eq42);
  s.norm = Norm::l2;
  CHECK(h_theory(s) == HTheory::behind_rope);
  s.norm = Norm::rmsnorm;
  CHECK(h_theory(s) == HTheory::none);
  CHECK(h_theory_note(s).find("No closed form") != std::string::npos);
  s.norm = Norm::layernorm;
  s.gamma = 0;
  CHECK(h_theory_note(s).find("residual") == std::string::npos);  // says nothing about a residual that is off
  s.gamma = 1;
  CHECK(h_theory_note(s).find("residual") != std::string::npos);

  LayerStats l;
  l.norm_mean = {2.0, 1.0, 0.0};
  l.norm_se = {0.1, 0.1, 0.1};
  std::vector<double> v, se;
  scaled_inverse_norms(l, 3.0, v, se);
  CHECK(v[0] == doctest::Approx(3.0));
  CHECK(v[1] == doctest::Approx(6.0));   // (2 * 3) / 1
  CHECK(se[1] == doctest::Approx(0.6));  // delta method: 6 * 0.1 / 1
  CHECK(std::isnan(v[2]));
}

TEST_CASE("figure layers text and the checked settings reader") {
  std::vector<int> layers = {1};
  CHECK(parse_layers("1,2,4", layers));
  CHECK(layers == std::vector<int>{1, 2, 4});
  CHECK(layers_to_text(layers) == "1,2,4");
  CHECK_FALSE(parse_layers("1,49", layers));
  CHECK_FALSE(parse_layers("1,2x", layers));
  CHECK(layers == std::vector<int>{1, 2, 4});  // unchanged on error

  Settings s;
  CHECK_THROWS_WITH_AS(apply_settings_json({{"nn", 3}}, s, "--set"), doctest::Contains("unknown setting 'nn'"),
                       std::runtime_error);
  apply_settings_json({{"n", 12}}, s, "--set");
  CHECK(s.n == 12);
}

TEST_CASE("random weights in the views: layer 0 first for cosines and norms, norm bars, one head's maps") {
  Settings s;
  s.model = Model::random_weights;
  s.n = 6;
  s.d = 24;
  s.heads = 3;
  s.layers = 2;
  s.gamma = 1.0;
  s.samples = 400;
  s.threads = 2;
  const auto snap = run_to_completion(s);
  CHECK(shown_layers(*snap, Quantity::cosine) == std::vector<int>{0, 1, 2});
  CHECK(h_theory(s) == HTheory::none);  // Eq. 42 and Behind RoPE describe the parameter-free model
  CHECK(h_theory_note(s).find("random-weight") != std::string::npos);
  CHECK(shown_layers(*snap, Quantity::norm) == std::vector<int>{0, 1, 2});
  CHECK(shown_layers(*snap, Quantity::score) == std::vector<int>{1, 2});  // the embeddings have no scores
  ViewOptions view;
  view.quantity = Quantity::norm;
  const auto norms = build_panels(*snap, view);
  REQUIRE(norms.size() == 3);
  CHECK(norms[0].layer == 0);
  CHECK(norms[0].norms);
  CHECK(norms[0].value.size() == 6);
  CHECK(std::string(norms[0].metric_name) == "norm adj");
  CHECK(norms[0].metric == snap->embeddings[0].norm_adjacency.mean);
  for (const auto& p : norms) {
    CHECK(p.lo == 0.0f);
    for (std::size_t i = 0; i < p.value.size(); ++i) CHECK(p.value[i] + p.se[i] <= double(p.hi));  // bars fit
  }
  // The embeddings' norms: sigma sqrt(d) on average.
  CHECK(norms[0].value[2] == doctest::Approx(0.02 * std::sqrt(24.0)).epsilon(0.05));
  view.quantity = Quantity::score;
  view.head = 1;
  const auto head = build_panels(*snap, view);
  REQUIRE(head.size() == 2);
  const LayerStats& l1 = snap->layers[0];
  CHECK(head[0].metric == l1.heads[1].rp.mean);
  for (std::size_t e = 0; e < l1.heads[1].score_mean.size(); ++e)
    if (std::isfinite(head[0].value[e])) CHECK(head[0].value[e] == l1.heads[1].score_mean[e]);
  view.head = -1;
  CHECK(build_panels(*snap, view)[0].metric == l1.rp.mean);
}

TEST_CASE("choosing the random-weight family without gamma gives it its default residual strength 1") {
  Settings s;
  CHECK(s.gamma == 0.0);
  apply_settings_json({{"model", "random_weights"}}, s, "--set");
  CHECK(s.gamma == 1.0);
  Settings t;
  apply_settings_json({{"model", "random_weights"}, {"gamma", 0.25}}, t, "--set");
  CHECK(t.gamma == 0.25);
  apply_settings_json({{"gamma", 0.5}}, t, "--set");  // already random weights: gamma as given
  CHECK(t.gamma == 0.5);
  CHECK_THROWS_WITH_AS(apply_settings_json({{"model", "gpt"}}, t, "--set"),
                       doctest::Contains("parameter_free, random_weights"), std::runtime_error);
}
