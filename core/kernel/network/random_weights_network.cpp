// The network of `fixed` weights (docs/model.md section 7): drawn once from the weight seed with
// GPT-2's initialization, and shared by every worker of a run (random_weights.hpp).
#include "core/kernel/network/random_weights.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

#include "core/kernel/network/random_weights_init.hpp"
#include "core/model/threading.hpp"

namespace maskscope {

namespace {

using rw::draw_entries;
using rw::init_of;
using rw::InitStd;

// One matrix of the network: its entries mu + s N(0, 1) are normals [start, start + count) of the
// weight stream.
struct Draw {
  float* out;
  std::size_t count;
  float mean, std;
  std::uint64_t start;
};

std::shared_ptr<const Network> draw_network(const Settings& s) {
  auto net = std::make_shared<Network>();
  const InitStd init = init_of(s);
  const std::size_t d = std::size_t(s.d);
  // The matrices in stream order, each starting at the next multiple of 64 (as SampleStream::normals
  // leaves its position): embedding, then per block W_QKV, W_O (, W_1, W_2).
  std::vector<Draw> draws;
  std::uint64_t position = 0;
  auto add = [&](std::vector<float>& m, std::size_t count, float mean, float std) {
    m.resize(count);
    draws.push_back({m.data(), count, mean, std, position});
    position += (count + 63) / 64 * 64;
  };
  add(net->embed, std::size_t(s.vocab) * d, init.mean, init.embed_std);
  net->blocks.resize(s.layers);
  for (Network::Block& b : net->blocks) {
    add(b.wqkv, d * 3 * d, init.mean, init.std);
    add(b.wo, d * d, init.residual_mean, init.residual_std);
    if (s.mlp) {
      add(b.w1, d * 4 * d, init.mean, init.std);
      add(b.w2, 4 * d * d, init.residual_mean, init.residual_std);
    }
  }
  // Chunks of 2^18 normals (a multiple of 64), drawn on up to 8 threads: a normal's value depends only on
  // its index in the stream (random_stream.hpp), so the bits are those of one sequential draw. GPT-2
  // small's 85 M weights take a fraction of a second instead of most of the window's first second.
  struct Chunk {
    const Draw* draw;
    std::size_t offset, count;
  };
  constexpr std::size_t chunk = std::size_t(1) << 18;
  std::vector<Chunk> chunks;
  for (const Draw& dr : draws)
    for (std::size_t o = 0; o < dr.count; o += chunk) chunks.push_back({&dr, o, std::min(chunk, dr.count - o)});
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t c = next++; c < chunks.size(); c = next++) {
      const Chunk& ch = chunks[c];
      // Its own stream: sample index 2^64 - 1 is never a run's (samples are at most Limits::samples_max).
      SampleStream rng(s.weight_seed, ~std::uint64_t(0));
      rng.seek_normal(ch.draw->start + ch.offset);
      draw_entries(rng, ch.draw->mean, ch.draw->std, ch.draw->out + ch.offset, ch.count);
    }
  };
  const unsigned threads = std::clamp(hardware_threads(), 1u, 8u);
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads && t < chunks.size(); ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (s.fixed_first_token()) {
    // BOS, the embedding row beyond the vocabulary (id V), from its own stream: rows 0..V-1 and every
    // block are those of first_token none (the same network with one more row).
    SampleStream bos_rng(s.weight_seed, ~std::uint64_t(2));
    net->embed.resize((std::size_t(s.vocab) + 1) * d);
    draw_entries(bos_rng, init.mean, init.embed_std, net->embed.data() + std::size_t(s.vocab) * d, d);
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
  if (s.from_checkpoint()) return checkpoint_network(s);
  // The workers of a run (and runs of the same network) share one copy while any of them lives.
  using Key =
      std::tuple<std::int64_t, int, int, bool, double, double, double, ResidualMean, std::uint64_t, int, double, bool>;
  static std::mutex mutex;
  static std::map<Key, std::weak_ptr<const Network>> cache;
  const int pos_rows = s.learned_positions() ? s.n : 0;
  const Key key{s.vocab,       s.d,        s.layers,          s.mlp,
                s.init_mean,   s.init_std, s.embedding_std(), s.residual_mean,
                s.weight_seed, pos_rows,   s.position_std(),  s.fixed_first_token()};
  std::lock_guard lock(mutex);
  for (auto it = cache.begin(); it != cache.end();) it = it->second.expired() ? cache.erase(it) : std::next(it);
  if (auto found = cache.find(key); found != cache.end())
    if (auto net = found->second.lock()) return net;
  auto net = draw_network(s);
  cache[key] = net;
  return net;
}

}  // namespace maskscope
