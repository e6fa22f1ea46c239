// A fixed network's batched forward pass (random_weights_batched.hpp) against the per-sample path, its
// bits independent of blocks and threads; 48 layers; the network's parallel draw.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "core/kernel/network/random_weights.hpp"
#include "core/kernel/network/random_weights_init.hpp"
#include "core/kernel/simulator.hpp"
#include "core/run/runner.hpp"
#include "random_weights_helpers.hpp"

using namespace maskscope;
using maskscope::test::random_weights;

namespace {

std::shared_ptr<const Snapshot> run_with(const Settings& s, Simulator::Kernel kernel) {
  RunOptions options;
  options.kernel = kernel;
  Run run(s, options);
  run.wait();
  return run.snapshot();
}

// Zuo et al.'s block at a smaller width: n 22, d 64, 4 heads, 3 layers, MLP, one fixed network.
Settings fixed_network_settings(std::int64_t samples) {
  Settings s = random_weights(22, 64, 4, 3, samples);
  s.weights = WeightsMode::fixed;
  s.weight_seed = 9;
  return s;
}

}  // namespace

TEST_CASE("fixed network: the batched products give every sample the per-sample path's values") {
  const Settings s = fixed_network_settings(1);
  if (!RandomWeightsModel::batched(s)) {
    MESSAGE("no AVX2 + FMA: fixed networks run per sample only; nothing to compare");
    return;
  }
  Simulator batched(s), per_sample(s, false, Simulator::Kernel::per_sample);
  // Samples in every slot of a batch and across batches (fixed_batch_samples(22) = 16).
  for (std::uint64_t sample : {0u, 5u, 15u, 16u, 31u, 302u}) {
    const SampleTrace a = batched.trace_sample(sample), b = per_sample.trace_sample(sample);
    REQUIRE(a.tokens == b.tokens);
    CHECK(a.input == b.input);  // the embeddings are copied, not computed
    for (int l = 0; l < s.layers; ++l) {
      const LayerTrace &la = a.layers[l], &lb = b.layers[l];
      double scale = 0;
      for (float v : lb.output) scale = std::max(scale, double(std::abs(v)));
      for (std::size_t e = 0; e < la.output.size(); ++e)  // float products summed in another order
        CHECK(la.output[e] == doctest::Approx(lb.output[e]).epsilon(1e-5).scale(scale));
      for (std::size_t e = 0; e < la.weights.size(); ++e)
        CHECK(la.weights[e] == doctest::Approx(lb.weights[e]).epsilon(1e-4).scale(1e-5));
    }
  }
}

TEST_CASE("fixed network: a sample's bits depend on its index only, not on the block it is computed in") {
  const Settings s = fixed_network_settings(1);
  Simulator sim(s);
  // One block of 40 samples (crossing batches of 16, starting inside one) against 40 one-sample
  // blocks added in order: 0 + v is exact, so equal sums mean every sample gave the same values. (Not the
  // squares: a block fuses v * v + sum into one rounding, a one-sample block rounds v * v alone.)
  BlockSums whole, parts, one;
  REQUIRE(sim.simulate_block(7, 40, whole));
  for (std::uint64_t t = 7; t < 47; ++t) {
    REQUIRE(sim.simulate_block(t, 1, one));
    if (parts.sum.size() == 0) parts.reset(one.sum.size());
    parts.add(one);
  }
  REQUIRE(whole.count == 40);
  REQUIRE(parts.count == 40);
  CHECK(whole.sum == parts.sum);
  // And a traced sample equals itself traced inside a longer range.
  const SampleTrace alone = sim.trace_sample(20);
  Simulator again(s);
  for (std::uint64_t t : {19u, 21u, 20u}) (void)again.trace_sample(t);
  CHECK(again.trace_sample(20).layers[2].output == alone.layers[2].output);
}

TEST_CASE("fixed network: batched and per-sample paths agree statistically (independent seeds, z within 4)" *
          doctest::test_suite("slow")) {
  for (HiddenState hidden : {HiddenState::block, HiddenState::attention}) {
    Settings s = fixed_network_settings(1600);
    s.hidden = hidden;
    INFO("hidden " << to_string(hidden));
    const auto batched = run_with(s, Simulator::Kernel::automatic);
    s.seed = 77;
    const auto per_sample = run_with(s, Simulator::Kernel::per_sample);
    REQUIRE(batched->layers.size() == per_sample->layers.size());
    for (std::size_t l = 0; l < batched->layers.size(); ++l) {
      const auto &a = batched->layers[l], &b = per_sample->layers[l];
      const double z_adj = (a.adjacency.mean - b.adjacency.mean) / std::hypot(a.adjacency.se, b.adjacency.se);
      const double z_rp = (a.rp.mean - b.rp.mean) / std::hypot(a.rp.se, b.rp.se);
      INFO("layer " << l + 1 << ": adjacency " << a.adjacency.mean << " vs " << b.adjacency.mean << ", RP " << a.rp.mean
                    << " vs " << b.rp.mean);
      CHECK(std::abs(z_adj) < 4.0);
      CHECK(std::abs(z_rp) < 4.0);
    }
  }
}

TEST_CASE("48 layers run for both model families (Zuo et al.'s 24-layer stacks and deeper)" *
          doctest::test_suite("slow")) {
  Settings pf;  // parameter-free, LayerNorm: layer 1 sees exchangeable inputs, so its RP is 0.5
  pf.layers = Limits::layers_max;
  REQUIRE(pf.layers == 48);
  pf.samples = 4000;
  pf.seed = 5;
  const auto a = run_to_completion(pf);
  REQUIRE(a->layers.size() == 48);
  CHECK(std::abs(a->layers[0].rp.mean - 0.5) < 4 * a->layers[0].rp.se);
  CHECK(std::isfinite(a->layers[47].rp.mean));
  for (WeightsMode mode : {WeightsMode::per_sample, WeightsMode::fixed}) {
    Settings s = random_weights(12, 32, 2, Limits::layers_max, 300);
    s.weights = mode;
    const auto b = run_to_completion(s);
    REQUIRE(b->layers.size() == 48);
    for (const auto& l : b->layers) {  // every layer a proper score (deep layers drift back toward 0.5)
      REQUIRE(std::isfinite(l.adjacency.mean));
      CHECK(l.adjacency.mean >= 0.0);
      CHECK(l.adjacency.mean <= 1.0);
    }
    // The embeddings have no order. (Layer 1 has hardly any either: W_O's std sigma / sqrt(2 L) is small at 48.)
    CHECK(std::abs(b->embeddings[0].adjacency.mean - 0.5) < 4 * b->embeddings[0].adjacency.se + 1e-3);
  }
}

TEST_CASE("the fixed network's parallel draw gives the bits of one sequential draw of the weight stream") {
  Settings s = random_weights(4, 300, 3, 2, 1);  // d 300: W_QKV and the embedding span two chunks of 2^18
  s.weights = WeightsMode::fixed;
  s.vocab = 1000;
  s.init_mean = 0.5;
  s.weight_seed = 3;
  const auto net = fixed_network(s);
  const rw::InitStd init = rw::init_of(s);
  SampleStream rng(s.weight_seed, ~std::uint64_t(0));
  auto same = [&](const std::vector<float>& m, float std) {
    std::vector<float> expect(m.size());
    rw::draw_entries(rng, init.mean, std, expect.data(), expect.size());
    return m == expect;
  };
  CHECK(same(net->embed, init.embed_std));
  for (const Network::Block& b : net->blocks) {
    CHECK(same(b.wqkv, init.std));
    CHECK(same(b.wo, init.residual_std));
    CHECK(same(b.w1, init.std));
    CHECK(same(b.w2, init.residual_std));
  }
}
