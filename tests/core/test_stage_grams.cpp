// The Gram matrices of every stage (docs/model.md section 12): closed forms at layer 1 of both families,
// exact identities between stages, symmetry, the lane kernel against the per-sample kernel, and that
// turning them on changes no other number.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "core/run/kernel_info.hpp"
#include "core/kernel/lane/lane_kernel.hpp"
#include "core/kernel/simulator.hpp"
#include "core/model/stages.hpp"
#include "core/model/theory.hpp"
#include "core/run/runner.hpp"
#include "helpers.hpp"

using namespace maskscope;

namespace {

std::shared_ptr<const Snapshot> run_to_end(const Settings& s, Simulator::Kernel kernel = Simulator::Kernel::automatic) {
  RunOptions o;
  o.kernel = kernel;
  Run run(s, o);
  run.wait();
  return run.snapshot();
}

const StageGram& stage(const Snapshot& snap, int layer, Stage st) {
  return snap.layers[std::size_t(layer - 1)].stages[std::size_t(st)];
}

// The worst |mean - expected| / SE over every cell (i, j) of a stage's Gram matrix.
template <class Expected>
double worst_z(const StageGram& g, int n, Expected expected) {
  double worst = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double z = std::fabs(g.gram_mean(i, j) - expected(i, j)) / g.gram_se(i, j);
      worst = std::max(worst, z);
    }
  return worst;
}

Settings parameter_free(double alpha) {
  Settings s = test::ln_recency(32, alpha, 400);
  s.stage_grams = true;
  return s;
}

Settings network() {
  Settings s;
  s.model = Model::random_weights;
  s.n = 8;
  s.d = 32;
  s.heads = 4;
  s.layers = 2;
  s.gamma = 1.0;
  s.vocab = 50;
  s.samples = 400;
  s.seed = 9;
  s.threads = 2;
  s.stage_grams = true;
  return s;
}

}  // namespace

TEST_CASE("stage Grams: the layer-1 input Gram is the inputs' covariance, delta_ij + alpha / (1 - alpha)") {
  for (double alpha : {0.0, 0.3, 0.6}) {
    Settings s = parameter_free(alpha);
    const auto snap = run_to_end(s);
    const double c2 = alpha / (1.0 - alpha);  // docs/model.md section 1: E<x_i, x_j> = (d delta_ij + c^2 d) / d
    const StageGram& g = stage(*snap, 1, Stage::input);
    REQUIRE(g.gram_mean.n() == s.n);
    CAPTURE(alpha);
    CHECK(worst_z(g, s.n, [&](int i, int j) { return (i == j ? 1.0 : 0.0) + c2; }) < 4.0);
    // A wrong law fails: the same cells against alpha itself (the cosine's limit, not the inner product's).
    if (alpha > 0) CHECK(worst_z(g, s.n, [&](int i, int j) { return i == j ? 1.0 + c2 : alpha; }) > 4.0);
  }
}

TEST_CASE("stage Grams: with unit inputs the input Gram is the input cosine matrix") {
  Settings s = test::behind_rope(10, 64, 0.4, 200);
  s.stage_grams = true;
  const auto snap = run_to_end(s);
  const StageGram& g = stage(*snap, 1, Stage::input);
  for (int i = 0; i < s.n; ++i)
    for (int j = 0; j < s.n; ++j) CHECK(g.gram_mean(i, j) == doctest::Approx(g.cosine_mean(i, j)).epsilon(1e-5));
}

TEST_CASE("stage Grams: l2 gives a unit diagonal, LayerNorm d; without RoPE Q = K = Norm(X) bit for bit") {
  for (Norm norm : {Norm::l2, Norm::layernorm}) {
    Settings s = parameter_free(0.5);
    s.norm = norm;
    s.layers = 3;
    const auto snap = run_to_end(s);
    const double diag = norm == Norm::l2 ? 1.0 : double(s.d);  // LayerNorm: d var / (var + 1e-12)
    for (int l = 1; l <= s.layers; ++l) {
      const StageGram& y = stage(*snap, l, Stage::normalized);
      const StageGram& q = stage(*snap, l, Stage::query);
      for (int i = 0; i < s.n; ++i) {
        CHECK(y.gram_mean(i, i) == doctest::Approx(diag).epsilon(1e-5));
        CHECK(y.cosine_mean(i, i) == 1.0);
        CHECK(y.cosine_se(i, i) == 0.0);
      }
      CHECK(same_bits(q.gram_mean, y.gram_mean));
      CHECK(same_bits(q.cosine_mean, y.cosine_mean));
      CHECK(same_bits(q.gram_se, y.gram_se));
    }
  }
  // With RoPE the queries/keys stage is another matrix (rotations by position change inner products).
  Settings r = parameter_free(0.5);
  r.rope_base = 100;
  const auto snap = run_to_end(r);
  CHECK_FALSE(same_bits(stage(*snap, 1, Stage::query).gram_mean, stage(*snap, 1, Stage::normalized).gram_mean));
  // ... but not its diagonal: a rotation keeps each row's norm.
  for (int i = 0; i < r.n; ++i)
    CHECK(stage(*snap, 1, Stage::query).gram_mean(i, i) ==
          doctest::Approx(stage(*snap, 1, Stage::normalized).gram_mean(i, i)).epsilon(1e-5));
}

TEST_CASE("stage Grams: layer 1 of Behind RoPE Sec. 3.2 (l2, unit inputs): A Y is g'(i), h'(i)^2, X' is g(i), h(i)^2") {
  // The closed forms assume inner products exactly alpha (d -> infinity); at d 4096 the inputs' cosines
  // scatter by about 1/64 and the softmax's curvature biases the means by O(1/d): 0.004 absolute covers it.
  Settings s = test::behind_rope(8, 4096, 0.5, 200);
  s.stage_grams = true;
  s.layers = 1;
  const auto snap = run_to_end(s);
  const StageGram& mix = stage(*snap, 1, Stage::mix);
  const StageGram& out = stage(*snap, 1, Stage::residual);
  for (int i = 0; i < s.n; ++i)
    for (int j = 0; j <= i; ++j) {
      CAPTURE(i);
      CAPTURE(j);
      // 1-based i as the paper counts; gamma 0 gives the forms of the mix alone (App. A.2).
      const double mix_expected =
          i == j ? std::pow(theory::behind_rope_h(i + 1, 0.5, 0.0), 2) : theory::behind_rope_g(i + 1, 0.5, 0.0);
      const double out_expected =
          i == j ? std::pow(theory::behind_rope_h(i + 1, 0.5, 1.0), 2) : theory::behind_rope_g(i + 1, 0.5, 1.0);
      CHECK(std::fabs(mix.gram_mean(i, j) - mix_expected) < 4 * mix.gram_se(i, j) + 0.004);
      CHECK(std::fabs(out.gram_mean(i, j) - out_expected) < 4 * out.gram_se(i, j) + 0.004);
    }
  // g'(i) depends on i only: row 7's cells agree across the keys j < 7.
  CHECK(std::fabs(mix.gram_mean(7, 0) - mix.gram_mean(7, 5)) < 0.01);
}

TEST_CASE("stage Grams: without a residual the layer output is the mix; its cosines are the cosine map's") {
  Settings s = parameter_free(0.5);
  const auto snap = run_to_end(s);  // gamma 0: X' = A Y
  // The per-sample kernel computes A Y for the stage as it computes X' (gamma 0 adds 0 x): the same bits. The
  // lane kernel mixes in its own order, so there the two agree to rounding.
  const auto one = run_to_end(s, Simulator::Kernel::per_sample);
  for (int l = 1; l <= s.layers; ++l) {
    CHECK(same_bits(stage(*one, l, Stage::mix).gram_mean, stage(*one, l, Stage::residual).gram_mean));
    for (int i = 0; i < s.n; ++i)
      for (int j = 0; j < s.n; ++j)
        CHECK(stage(*snap, l, Stage::mix).gram_mean(i, j) ==
              doctest::Approx(stage(*snap, l, Stage::residual).gram_mean(i, j)).epsilon(1e-5));
    const LayerStats& ls = snap->layers[std::size_t(l - 1)];
    for (int i = 0; i < s.n; ++i)
      for (int j = 0; j < s.n; ++j)
        CHECK(stage(*snap, l, Stage::residual).cosine_mean(i, j) ==
              doctest::Approx(ls.cosine_mean(i, j)).epsilon(1e-5));
  }
}

TEST_CASE("stage Grams: turning them on changes no other number, and the grid of blocks stays the same") {
  // Per-sample weights at mean 0 without RoPE take Bartlett attention's draws when the option is off and the
  // direct draws when on (the next test): here a mean of 0.05 and a fixed network, where both take one path.
  Settings with_mean = network(), fixed = network();
  with_mean.init_mean = 0.05;
  fixed.weights = WeightsMode::fixed;
  for (Settings s : {parameter_free(0.5), with_mean, fixed}) {
    s.rope_base = s.random_weights() ? 0.0 : 10000.0;
    const auto on = run_to_end(s);
    s.stage_grams = false;
    const auto off = run_to_end(s);
    for (std::size_t l = 0; l < off->layers.size(); ++l) {
      const LayerStats &a = on->layers[l], &b = off->layers[l];
      CHECK(same_bits(a.score_mean, b.score_mean));
      CHECK(same_bits(a.score_se, b.score_se));
      CHECK(same_bits(a.weight_mean, b.weight_mean));
      CHECK(same_bits(a.cosine_mean, b.cosine_mean));
      CHECK(same_bits(a.cosine_se, b.cosine_se));
      CHECK(std::memcmp(&a.rp.mean, &b.rp.mean, sizeof(double)) == 0);
      CHECK(std::memcmp(&a.adjacency.se, &b.adjacency.se, sizeof(double)) == 0);
      CHECK(a.norm_mean == b.norm_mean);
      for (int st = 0; st < kStageCount; ++st) CHECK(b.stages[std::size_t(st)].gram_mean.empty());
    }
  }
}

TEST_CASE("stage Grams: per-sample weights at mean 0 draw q, k and v directly, not by Bartlett's law") {
  // Bartlett attention (random_weights_bartlett.hpp) draws q' = C G, whose Gram matrix is Wishart(n) where q's is
  // Wishart(d_h): only q' k'^T has q k^T's law. So a run with stage Grams names the direct draws' kernel.
  Settings s = network();
  REQUIRE(s.head_width() >= s.n);
  s.stage_grams = false;
  const std::string off = kernel_name(s);
  s.stage_grams = true;
  const std::string on = kernel_name(s);
  if (off.find("triangular") == std::string::npos) return;  // no per-sample x86-64-v3 path here
  CHECK(off.find("bartlett") != std::string::npos);
  CHECK(on.find("bartlett") == std::string::npos);
}

TEST_CASE("stage Grams: random weights, layer 1 with per-sample weights: E<q_i, q_j> = sigma^2 d E<y_i, y_j>") {
  // q_i = y_i W_Q with W_Q (d x d, the heads' columns side by side) iid N(0, sigma^2): given y,
  // E<q_i, q_j> = sum_c sum_a y_ia y_ja sigma^2 = d sigma^2 <y_i, y_j>, for the heads concatenated.
  Settings s = network();
  s.samples = 600;
  const auto snap = run_to_end(s);
  const double factor = s.init_std * s.init_std * s.d;
  const StageGram& y = stage(*snap, 1, Stage::normalized);
  for (Stage st : {Stage::query, Stage::key}) {
    const StageGram& q = stage(*snap, 1, st);
    double worst = 0, worst_wrong = 0;
    for (int i = 0; i < s.n; ++i)
      for (int j = 0; j <= i; ++j) {
        const double se = std::hypot(q.gram_se(i, j), factor * y.gram_se(i, j));
        worst = std::max(worst, std::fabs(q.gram_mean(i, j) - factor * y.gram_mean(i, j)) / se);
        // One head's width instead of d (a per-head mean) is refused.
        worst_wrong = std::max(worst_wrong, std::fabs(q.gram_mean(i, j) - factor / s.heads * y.gram_mean(i, j)) / se);
      }
    CHECK(worst < 4.0);
    CHECK(worst_wrong > 4.0);
  }
  // LayerNorm with PyTorch's eps: ||y||^2 = d var / (var + 1e-5) <= d.
  for (int i = 0; i < s.n; ++i) {
    CHECK(y.gram_mean(i, i) <= s.d * (1 + 1e-6));
    CHECK(y.gram_mean(i, i) > 0.9 * s.d);
    CHECK(y.cosine_mean(i, i) == 1.0);
  }
  // Stages that follow from others: the residual h = x + attention, the MLP's block output is the cosine map's
  // source (hidden = block).
  const LayerStats& l1 = snap->layers[0];
  for (int i = 0; i < s.n; ++i)
    for (int j = 0; j < s.n; ++j)
      CHECK(stage(*snap, 1, Stage::mlp).cosine_mean(i, j) == doctest::Approx(l1.cosine_mean(i, j)).epsilon(1e-5));
  // Layer 2's input is layer 1's block output.
  CHECK(same_bits(stage(*snap, 2, Stage::input).gram_mean, stage(*snap, 1, Stage::mlp).gram_mean));
}

TEST_CASE("stage Grams: every map is symmetric and each family has its stages") {
  const auto pf = run_to_end(parameter_free(0.5));
  Settings rw = network();
  rw.mlp = false;
  const auto net = run_to_end(rw);
  for (const auto& snap : {pf, net}) {
    const bool is_rw = snap->settings.random_weights();
    for (int st = 0; st < kStageCount; ++st) {
      const StageGram& g = snap->layers[0].stages[std::size_t(st)];
      const bool has = (stage_bits(snap->settings) >> st) & 1u;
      CHECK(!g.gram_mean.empty() == has);
      if (!has) continue;
      const std::vector<double> m = g.gram_mean.unpacked(), c = g.cosine_mean.unpacked();
      const int n = snap->settings.n;
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          CHECK(m[std::size_t(i * n + j)] == m[std::size_t(j * n + i)]);
          CHECK(c[std::size_t(i * n + j)] == c[std::size_t(j * n + i)]);
          CHECK(std::isfinite(m[std::size_t(i * n + j)]));
        }
    }
    CHECK(!snap->layers[0].stages[std::size_t(Stage::key)].gram_mean.empty() == is_rw);
  }
  CHECK(net->layers[0].stages[std::size_t(Stage::mlp)].gram_mean.empty());  // no MLP: no MLP stage
  // Without the MLP the block output is h: the residual stage's cosines are the cosine map's.
  for (int i = 0; i < rw.n; ++i)
    for (int j = 0; j < rw.n; ++j)
      CHECK(stage(*net, 1, Stage::residual).cosine_mean(i, j) ==
            doctest::Approx(net->layers[0].cosine_mean(i, j)).epsilon(1e-5));
}

TEST_CASE("stage Grams: the lane kernel's sums are the per-sample kernel's to float rounding") {
  for (Settings s : {test::ln_recency(64, 0.5, 100), test::behind_rope(13, 16, 0.5, 100)}) {
    s.stage_grams = true;
    if (s.unit_input) s.rope_base = 10000;
    REQUIRE(use_lane_kernel(s, input_basis(s)));
    Simulator lanes(s, false, Simulator::Kernel::lanes), one(s, false, Simulator::Kernel::per_sample);
    REQUIRE(lanes.uses_lanes());
    const AccumLayout& L = lanes.layout();
    BlockSums a(L.total()), b(L.total());
    REQUIRE(lanes.simulate_block(5, 37, a));
    REQUIRE(one.simulate_block(5, 37, b));
    CHECK(a.count == b.count);
    for (int l = 0; l < s.layers; ++l)
      for (int st = 0; st < kStageCount; ++st) {
        if (!L.has_stage(st)) continue;
        const std::size_t from = L.stage_gram(l, st), to = from + 2 * L.triangle();
        for (std::size_t k = from; k < to; ++k) {
          CAPTURE(k);
          CHECK(a.sum[k] == doctest::Approx(b.sum[k]).epsilon(1e-4).scale(37));
          CHECK(a.sumsq[k] == doctest::Approx(b.sumsq[k]).epsilon(1e-4).scale(37));
        }
      }
  }
}

TEST_CASE("stage Grams: random weights' batched fixed network agrees with its per-sample path") {
  Settings s = network();
  s.weights = WeightsMode::fixed;
  s.init_std = 0.2;
  Simulator batched(s), one(s, false, Simulator::Kernel::per_sample);
  const AccumLayout& L = one.layout();
  BlockSums a(L.total()), b(L.total());
  REQUIRE(batched.simulate_block(3, 40, a));
  REQUIRE(one.simulate_block(3, 40, b));
  for (int l = 0; l < s.layers; ++l)
    for (int st = 0; st < kStageCount; ++st) {
      if (!L.has_stage(st)) continue;
      for (std::size_t k = L.stage_gram(l, st); k < L.stage_gram(l, st) + 2 * L.triangle(); ++k)
        CHECK(a.sum[k] == doctest::Approx(b.sum[k]).epsilon(1e-4).scale(40));
    }
}
