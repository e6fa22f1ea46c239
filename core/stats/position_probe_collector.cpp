// Position probes (position_probe.hpp): the collector of one run's hidden states as probe features, and the
// fit of every (layer, feature) probe on a pool of threads.
#include <algorithm>
#include <atomic>
#include <thread>

#include "core/stats/position_probe.hpp"

namespace maskscope {

ProbeCollector::ProbeCollector(int n, int d, int blocks, const ProbeRequest& r)
    : n_(n), d_(d), blocks_(blocks), r_(r), data_(std::size_t(blocks) * 3) {
  for (int l = 0; l < blocks; ++l)
    for (ProbeFeature f : r.features) {
      ProbeData& p = data_[std::size_t(l) * 3 + std::size_t(f)];
      p.n = n;
      p.width = feature_width(f, d);
      p.train_sequences = r.train;
      p.test_sequences = r.test;
      p.train.resize(std::size_t(r.train) * n * p.width);
      p.test.resize(std::size_t(r.test) * n * p.width);
    }
}

std::uint64_t ProbeCollector::bytes(int n, int d, int blocks, const ProbeRequest& r) {
  std::uint64_t width = 0;
  for (ProbeFeature f : r.features) width += std::uint64_t(feature_width(f, d));
  return std::uint64_t(r.train + r.test) * std::uint64_t(n) * width * std::uint64_t(blocks) * sizeof(float);
}

void ProbeCollector::add_sequence(std::int64_t sequence, int layer, const float* x) {
  thread_local std::vector<float> rows;
  for (ProbeFeature f : r_.features) {
    ProbeData& p = data_[std::size_t(layer) * 3 + std::size_t(f)];
    rows.clear();
    append_features(f, n_, d_, x, rows);
    const bool train = sequence < r_.train;
    float* out = (train ? p.train.data() : p.test.data()) +
                 std::size_t(train ? sequence : sequence - r_.train) * std::size_t(n_) * p.width;
    std::copy(rows.begin(), rows.end(), out);
  }
}

std::optional<ProbeTable> fit_probes(const ProbeCollector& c, const ProbeRequest& r, int threads,
                                     const std::atomic<bool>* cancel) {
  struct Task {
    int layer;
    ProbeFeature feature;
  };
  std::vector<Task> tasks;
  for (ProbeFeature f : r.features)  // X first: its probes take longest
    for (int l = 0; l < c.blocks(); ++l) tasks.push_back({l, f});
  std::stable_sort(tasks.begin(), tasks.end(), [](const Task& a, const Task& b) {
    return (a.feature == ProbeFeature::x) > (b.feature == ProbeFeature::x);
  });
  ProbeTable table;
  table.layers.resize(std::size_t(c.blocks()));
  for (int l = 0; l < c.blocks(); ++l) table.layers[std::size_t(l)].layer = l;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stopped{false};
  auto worker = [&] {
    for (std::size_t t; (t = next.fetch_add(1)) < tasks.size();) {
      const Task& task = tasks[t];
      auto score = fit_probe(c.data(task.layer, task.feature), r.probe, cancel);
      if (!score) {
        stopped = true;
        return;
      }
      table.layers[std::size_t(task.layer)].score[std::size_t(task.feature)] = *score;
    }
  };
  std::vector<std::thread> pool;
  for (int k = 1; k < std::max(1, threads); ++k) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  if (stopped || (cancel && cancel->load())) return std::nullopt;
  return table;
}

}  // namespace maskscope
