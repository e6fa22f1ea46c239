// Zuo et al.'s Fig. 2 and Fig. 13 histograms (docs/model.md section 9): every histogram sums to 1, the mass
// of sim(c, b) - sim(c, a) above 0 is the adjacency score of the same samples, the per-sample adjacency
// histogram's mean is the adjacency score to within a bin, and the same numbers for any thread count.
#include <doctest/doctest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "core/run/runner.hpp"

using namespace maskscope;

namespace {

Settings network_with_histograms(int bins) {
  Settings s;
  s.model = Model::random_weights;
  s.n = 12;
  s.d = 64;
  s.heads = 2;
  s.layers = 2;
  s.gamma = 1.0;
  s.vocab = 1000;  // few repeated tokens: few exact ties at the embeddings
  s.samples = 300;
  s.seed = 5;
  s.threads = 2;
  s.embed_std = 0.002;  // a small token embedding: a strong adjacency pattern (docs/papers.md) at a small d
  s.histograms = bins;
  return s;
}

std::shared_ptr<const Snapshot> run_to_end(const Settings& s) {
  Run run(s);
  run.wait();
  return run.snapshot();
}

double total(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

// Mass of the bins at or above 0 (bins over [-1, 1], 0 a bin edge).
double mass_above_zero(const std::vector<double>& v) {
  return std::accumulate(v.begin() + std::ptrdiff_t(v.size() / 2), v.end(), 0.0);
}

}  // namespace

TEST_CASE("histograms sum to 1 and their mass above 0 is the adjacency score of the same samples") {
  const int bins = 40;
  const auto snap = run_to_end(network_with_histograms(bins));
  std::vector<const LayerStats*> layers{&snap->embeddings.front()};
  for (const LayerStats& l : snap->layers) layers.push_back(&l);
  for (const LayerStats* l : layers) {
    const LayerHistograms& h = l->histograms;
    INFO("layer " << l->layer);
    REQUIRE(h.forward_difference.size() == std::size_t(bins));
    CHECK(total(h.forward_difference) == doctest::Approx(1.0).epsilon(1e-12));
    CHECK(total(h.backward_difference) == doctest::Approx(1.0).epsilon(1e-12));
    CHECK(total(h.adjacency) == doctest::Approx(1.0).epsilon(1e-12));
    // The share above 0 (ties 1/2) of sim(c, b) - sim(c, a), row by row, is the adjacency score itself.
    CHECK(h.backward_above.mean == doctest::Approx(l->adjacency.mean).epsilon(1e-9));
    // Read off the bins (ties fall in the bin above 0): within the adjacency score's SE plus the ties.
    CHECK(std::abs(mass_above_zero(h.backward_difference) - l->adjacency.mean) <=
          3.0 * l->adjacency.se + 0.5 * l->adjacency.ties + 1e-12);
    CHECK(h.forward_above.mean > 0.0);
    CHECK(h.forward_above.mean < 1.0);
    // The per-sample adjacency histogram's mean: the adjacency score, to within half a bin.
    double mean = 0;
    for (int b = 0; b < bins; ++b) mean += h.adjacency[std::size_t(b)] * (b + 0.5) / bins;
    CHECK(std::abs(mean - l->adjacency.mean) <= 0.5 / bins + 1e-12);
    if (l->layer > 0) {
      CHECK(total(h.rp) == doctest::Approx(1.0).epsilon(1e-12));
      double rp = 0;
      for (int b = 0; b < bins; ++b) rp += h.rp[std::size_t(b)] * (b + 0.5) / bins;
      CHECK(std::abs(rp - l->rp.mean) <= 0.5 / bins + 1e-12);
    } else {
      CHECK(h.rp.empty());  // the embeddings have no attention
    }
  }
  // After causal attention nearer tokens are more similar (Zuo et al. Fig. 2): mass above 0 in both.
  CHECK(snap->layers[0].histograms.forward_above.mean > 0.6);
  CHECK(snap->layers[0].histograms.backward_above.mean > 0.6);
}

TEST_CASE("histograms: the same numbers for any thread count, and nothing without them") {
  Settings s = network_with_histograms(20);
  s.samples = 64;
  s.threads = 1;
  const auto one = run_to_end(s);
  s.threads = 3;
  const auto three = run_to_end(s);
  for (std::size_t l = 0; l < one->layers.size(); ++l) {
    const LayerHistograms &a = one->layers[l].histograms, &b = three->layers[l].histograms;
    CHECK(a.forward_difference == b.forward_difference);
    CHECK(a.backward_difference == b.backward_difference);
    CHECK(a.adjacency == b.adjacency);
    CHECK(a.rp == b.rp);
    CHECK(a.forward_above == b.forward_above);
  }
  s.histograms = 0;
  const auto none = run_to_end(s);
  CHECK(none->layers[0].histograms.forward_difference.empty());
  // The histograms change no other number.
  CHECK(none->layers[1].adjacency.mean == one->layers[1].adjacency.mean);
  CHECK(none->layers[1].rp.mean == one->layers[1].rp.mean);
}

TEST_CASE("histograms: an odd or too large bin count, or the parameter-free model, is refused") {
  auto names = [](const Settings& s) {
    std::vector<std::string> out;
    for (const auto& e : validate(s)) out.push_back(e.setting);
    return out;
  };
  Settings s = network_with_histograms(3);
  CHECK(names(s) == std::vector<std::string>{"histograms"});
  s.histograms = Limits::histograms_max + 2;
  CHECK(names(s) == std::vector<std::string>{"histograms"});
  Settings pf;
  pf.histograms = 10;
  CHECK(names(pf) == std::vector<std::string>{"histograms"});
}
