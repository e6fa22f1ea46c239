// The training engine (core/train/): step 0 is the drawn network, and the parameters after a few steps are the
// same bytes for any thread count (chunks summed in a fixed tree). Gradients and AdamW against PyTorch:
// tests/python/train_torch.py (ctest train_torch).
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/kernel/simulator.hpp"
#include "core/random/random_stream.hpp"
#include "core/train/parameters.hpp"
#include "core/train/trainer.hpp"
#include "random_weights_helpers.hpp"

using namespace maskscope;
using maskscope::test::random_weights;

namespace {

Settings tiny(int n) {
  Settings s = random_weights(n, 16, 2, 2, 4);
  s.weights = WeightsMode::fixed;
  s.weight_seed = 3;
  s.vocab = 13;
  return s;
}

TokenBatch batch_of(const Settings& s, int rows, std::uint64_t step) {
  TokenBatch b;
  b.rows = rows;
  b.n = s.n;
  SampleStream rng(5, step);
  for (int e = 0; e < rows * s.n; ++e) b.tokens.push_back(std::int32_t(rng.next() % std::uint64_t(s.vocab)));
  for (int e = 0; e < rows * s.n; ++e) b.targets.push_back(e % s.n == s.n - 1 ? -1 : b.tokens[std::size_t(e) + 1]);
  return b;
}

std::vector<float> flat(const Network& net) {
  std::vector<float> out;
  train::for_each_tensor(
      net, [&](const std::string&, const std::vector<float>& v, bool) { out.insert(out.end(), v.begin(), v.end()); });
  return out;
}

}  // namespace

TEST_CASE("training: step 0 is the network --weights fixed draws from the weight seed, gains 1 and biases 0") {
  const Settings s = tiny(7);
  const Network init = train::initial_network(s);
  const auto drawn = fixed_network(s);
  CHECK(init.embed == drawn->embed);
  CHECK(init.blocks[1].w2 == drawn->blocks[1].w2);
  CHECK(init.blocks[0].ln1_gain == std::vector<float>(16, 1.0f));
  CHECK(init.blocks[0].b1 == std::vector<float>(64, 0.0f));
  Simulator a(s), b(s, false, Simulator::Kernel::automatic, std::make_shared<Network>(init));
  CHECK(a.trace_sample(2).layers[1].output == b.trace_sample(2).layers[1].output);
}

TEST_CASE("training: the same seed gives the same parameter bytes for 1, 2 and 3 threads") {
  Settings s = tiny(9);
  s.rope_base = 100;
  s.first_token = FirstToken::none;
  train::OptimizerSettings o;
  o.lr = 0.01;
  o.warmup = 2;
  o.decay_steps = 5;
  std::vector<std::vector<float>> results;
  std::vector<double> losses;
  for (int threads : {1, 2, 3}) {
    train::Trainer t(s, o, 11, threads);  // 8 chunks of 1 or 2 rows
    double loss = 0;
    for (std::uint64_t step = 0; step < 4; ++step) loss = t.train_step(batch_of(s, 11, step)).loss;
    results.push_back(flat(t.parameters()));
    losses.push_back(loss);
  }
  REQUIRE(results[0].size() == results[1].size());
  CHECK(std::memcmp(results[0].data(), results[1].data(), results[0].size() * sizeof(float)) == 0);
  CHECK(std::memcmp(results[0].data(), results[2].data(), results[0].size() * sizeof(float)) == 0);
  CHECK(losses[0] == losses[1]);
  CHECK(results[0] != flat(train::initial_network(s)));  // the steps moved the parameters
}

TEST_CASE("training: a few AdamW steps on one batch lower its loss") {
  const Settings s = tiny(8);
  train::OptimizerSettings o;
  o.lr = 0.01;
  o.warmup = 0;
  train::Trainer t(s, o, 4, 2);
  const TokenBatch b = batch_of(s, 4, 0);
  const double first = t.train_step(b).loss;
  double last = first;
  for (int k = 0; k < 30; ++k) last = t.train_step(b).loss;
  CHECK(last < 0.5 * first);
}
