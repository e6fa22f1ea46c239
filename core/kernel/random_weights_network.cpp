// The network of `fixed` weights (docs/model.md section 7): drawn once from the weight seed with
// GPT-2's initialization, and shared by every worker of a run (random_weights.hpp).
#include "core/kernel/random_weights.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "core/kernel/random_weights_init.hpp"

namespace maskscope {

namespace {

using rw::draw_entries;
using rw::init_of;
using rw::InitStd;

std::shared_ptr<const Network> draw_network(const Settings& s) {
  auto net = std::make_shared<Network>();
  const InitStd init = init_of(s);
  const std::size_t d = std::size_t(s.d);
  // Its own stream: sample index 2^64 - 1 is never a run's (samples are at most Limits::samples_max).
  SampleStream rng(s.weight_seed, ~std::uint64_t(0));
  net->embed.resize(std::size_t(s.vocab) * d);
  draw_entries(rng, init.mean, init.embed_std, net->embed.data(), net->embed.size());
  net->blocks.resize(s.layers);
  for (Network::Block& b : net->blocks) {
    b.wqkv.resize(d * 3 * d);
    b.wo.resize(d * d);
    draw_entries(rng, init.mean, init.std, b.wqkv.data(), b.wqkv.size());
    draw_entries(rng, init.mean, init.residual_std, b.wo.data(), b.wo.size());
    if (s.mlp) {
      b.w1.resize(d * 4 * d);
      b.w2.resize(4 * d * d);
      draw_entries(rng, init.mean, init.std, b.w1.data(), b.w1.size());
      draw_entries(rng, init.mean, init.residual_std, b.w2.data(), b.w2.size());
    }
  }
  if (s.learned_positions()) {
    // Its own stream, row by row: the first n rows of a longer table are this one, and the table
    // does not depend on the layers drawn before it.
    SampleStream pos_rng(s.weight_seed, ~std::uint64_t(1));
    net->pos.resize(std::size_t(s.n) * d);
    draw_entries(pos_rng, init.mean, init.pos_std, net->pos.data(), net->pos.size());
  }
  return net;
}

}  // namespace

std::shared_ptr<const Network> fixed_network(const Settings& s) {
  // The workers of a run (and runs of the same network) share one copy while any of them lives.
  using Key = std::tuple<std::int64_t, int, int, bool, double, double, double, std::uint64_t, int, double>;
  static std::mutex mutex;
  static std::map<Key, std::weak_ptr<const Network>> cache;
  const int pos_rows = s.learned_positions() ? s.n : 0;
  const Key key{s.vocab,           s.d,           s.layers, s.mlp,           s.init_mean, s.init_std,
                s.embedding_std(), s.weight_seed, pos_rows, s.position_std()};
  std::lock_guard lock(mutex);
  for (auto it = cache.begin(); it != cache.end();) it = it->second.expired() ? cache.erase(it) : std::next(it);
  if (auto found = cache.find(key); found != cache.end())
    if (auto net = found->second.lock()) return net;
  auto net = draw_network(s);
  cache[key] = net;
  return net;
}

}  // namespace maskscope
