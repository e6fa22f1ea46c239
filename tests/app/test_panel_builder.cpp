// Panels on screen without a window: the largest SE they record, panels rebuilt in place equal to
// fresh ones, and the background panel builder (its panels and texels, the newest request wins).
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <thread>

#include "core/formats/result_json.hpp"
#include "common/controller.hpp"
#include "common/panel_builder.hpp"
#include "common/panels.hpp"

using namespace maskscope;
using namespace maskscope::gui;

TEST_CASE("largest SE on screen: the panels' own record equals a pass over their cells, maps and norm bars") {
  Settings s;
  s.d = 16;
  s.alpha = 0.5;
  s.samples = 300;
  s.n = 9;
  s.layers = 2;
  s.threads = 1;
  const auto snap = run_to_completion(s);
  auto brute = [](const std::vector<PanelData>& panels) {
    double m = 0;
    for (const auto& p : panels)
      for (std::size_t e = 0; e < p.se.size() && e < p.value.size(); ++e)
        if (std::isfinite(p.value[e]) && std::isfinite(p.se[e])) m = std::max(m, p.se[e]);
    return m;
  };
  for (Quantity q : {Quantity::score, Quantity::weight, Quantity::cosine, Quantity::norm}) {
    for (bool hide : {true, false}) {
      CAPTURE(int(q));
      ViewOptions view;
      view.quantity = q;
      view.hide_diagonal = hide;
      const auto panels = build_panels(*snap, view);
      REQUIRE(!panels.empty());
      const double expect = brute(panels);
      CHECK(expect > 0);
      CHECK(largest_shown_se(panels) == expect);
    }
  }
}

namespace {
// Two panel lists alike in every field and every bit (NaN equal to NaN).
void check_same_panels(const std::vector<PanelData>& a, const std::vector<PanelData>& b) {
  REQUIRE(a.size() == b.size());
  auto same = [](const std::vector<double>& x, const std::vector<double>& y) {
    if (x.size() != y.size()) return false;
    for (std::size_t e = 0; e < x.size(); ++e)
      if (!(x[e] == y[e] || (std::isnan(x[e]) && std::isnan(y[e])))) return false;
    return true;
  };
  for (std::size_t k = 0; k < a.size(); ++k) {
    CAPTURE(k);
    CHECK(a[k].layer == b[k].layer);
    CHECK(a[k].n == b[k].n);
    CHECK(a[k].norms == b[k].norms);
    CHECK(same(a[k].value, b[k].value));
    CHECK(same(a[k].se, b[k].se));
    CHECK(a[k].noise == b[k].noise);
    CHECK(a[k].lo == b[k].lo);
    CHECK(a[k].hi == b[k].hi);
    CHECK(a[k].centred == b[k].centred);
    CHECK(a[k].below == b[k].below);
    CHECK(a[k].above == b[k].above);
    CHECK(std::string(a[k].metric_name) == b[k].metric_name);
    CHECK((a[k].metric == b[k].metric || (std::isnan(a[k].metric) && std::isnan(b[k].metric))));
    CHECK((a[k].max_se == b[k].max_se || (std::isnan(a[k].max_se) && std::isnan(b[k].max_se))));
  }
}
}  // namespace

TEST_CASE("panels rebuilt in place equal fresh ones, whatever the panels held before") {
  Settings a;
  a.d = 16;
  a.n = 12;
  a.layers = 3;
  a.samples = 200;
  a.threads = 1;
  Settings b = a;
  b.n = 7;
  b.layers = 2;
  const auto sa = run_to_completion(a), sb = run_to_completion(b);
  std::vector<PanelData> reused;
  // Each view after another that left longer or shorter arrays, noise or none, more or fewer panels.
  for (int round = 0; round < 2; ++round)
    for (Tab tab : {Tab::attention, Tab::diagonal})
      for (Quantity q : {Quantity::score, Quantity::cosine, Quantity::norm, Quantity::weight})
        for (const auto* snap : {&sa, &sb}) {
          CAPTURE(round);
          CAPTURE(int(q));
          ViewOptions view;
          view.tab = tab;
          view.quantity = q;
          view.shared_range = round == 1;
          build_panels(**snap, view, reused);
          check_same_panels(reused, build_panels(**snap, view));
        }
}

TEST_CASE("panel builder: its panels and texels are build_panels' and panel_texels', the newest request wins") {
  Settings s;
  s.d = 16;
  s.n = 10;
  s.layers = 2;
  s.samples = 300;
  s.threads = 1;
  const auto snap = run_to_completion(s);
  Settings t = s;
  t.alpha = 0.9;
  const auto other = run_to_completion(t);
  int wakes = 0;
  std::mutex m;
  PanelBuilder builder([&] {
    std::lock_guard lock(m);
    ++wakes;
  });
  PanelBuilder::Result r;
  CHECK_FALSE(builder.take(r));  // nothing asked yet
  ViewOptions view;
  view.tab = Tab::diagonal;
  auto wait_idle_result = [&] {
    for (int i = 0; i < 2000 && !builder.take(r); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  builder.request(other, view, 3);
  builder.request(snap, view, 7);  // asked before the first started or after: the newest comes last
  for (int i = 0; i < 2000; ++i) {
    wait_idle_result();
    if (r.snap == snap) break;
  }
  REQUIRE(r.snap == snap);
  CHECK(r.tag == 7);
  CHECK(r.view == view);
  check_same_panels(r.panels, build_panels(*snap, view));
  REQUIRE(r.texels.size() == r.panels.size());
  for (std::size_t k = 0; k < r.panels.size(); ++k) {
    std::vector<float> expect;
    panel_texels(r.panels[k], expect);
    REQUIRE(r.texels[k].size() == expect.size());
    CHECK(std::memcmp(r.texels[k].data(), expect.data(), expect.size() * sizeof(float)) == 0);  // NaN cells too
    for (std::size_t e = 0; e < expect.size(); ++e)
      if (r.panels[k].noise.size() > e && r.panels[k].noise[e]) CHECK(std::isinf(r.texels[k][e]));
  }
  for (int i = 0; i < 2000 && !builder.idle(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHECK(builder.idle());
  std::lock_guard lock(m);
  CHECK(wakes >= 1);
}
