// The random-weight transformer (docs/model.md section 7): the forward pass against a direct
// computation for a drawn network, the initialization's statistics, the per-sample draws'
// law, adjacency on exchangeable inputs and at the papers' width, heads, determinism.
#include <doctest/doctest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "core/kernel/network/random_weights.hpp"
#include "core/run/runner.hpp"
#include "core/kernel/simulator.hpp"
#include "random_weights_helpers.hpp"

using namespace maskscope;
using maskscope::test::random_weights;

namespace {

using Matrix = std::vector<std::vector<double>>;  // rows

// Y = LayerNorm(X) with eps 1e-5, no affine (docs/model.md section 7), in double.
Matrix layernorm(const Matrix& x) {
  Matrix y = x;
  for (auto& row : y) {
    const double mean = std::accumulate(row.begin(), row.end(), 0.0) / double(row.size());
    double var = 0;
    for (double v : row) var += (v - mean) * (v - mean);
    var /= double(row.size());
    for (double& v : row) v = (v - mean) / std::sqrt(var + 1e-5);
  }
  return y;
}

// Y W for W given row-major (inner x cols), taking columns [c0, c0 + m).
Matrix times(const Matrix& y, const std::vector<float>& w, int cols, int c0, int m) {
  Matrix out(y.size(), std::vector<double>(std::size_t(m), 0.0));
  for (std::size_t i = 0; i < y.size(); ++i)
    for (std::size_t p = 0; p < y[i].size(); ++p)
      for (int j = 0; j < m; ++j) out[i][std::size_t(j)] += y[i][p] * w[p * std::size_t(cols) + std::size_t(c0 + j)];
  return out;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t k = 0; k < a.size(); ++k) s += a[k] * b[k];
  return s;
}

double mean_of(const std::vector<float>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / double(v.size()); }
double std_of(const std::vector<float>& v) {
  const double m = mean_of(v);
  double s = 0;
  for (float x : v) s += (x - m) * (x - m);
  return std::sqrt(s / double(v.size() - 1));
}

// The entries of w have mean mu and std sigma: within 4 SE each (of a mean sigma / sqrt(N), of a std
// about sigma / sqrt(2 N)).
void check_law(const std::vector<float>& w, double mu, double sigma) {
  const double N = double(w.size());
  CHECK(std::abs(mean_of(w) - mu) < 4 * sigma / std::sqrt(N));
  CHECK(std::abs(std_of(w) - sigma) < 4 * sigma / std::sqrt(2 * N));
}

// A drawn network of 3 layers: E ~ N(mu, embed_std^2); W_QKV, W_1 ~ N(mu, sigma^2); the residual projections
// W_O, W_2 ~ N(residual_mu, (sigma / sqrt(2 L))^2).
void check_network_law(const Network& net, double mu, double embed_std, double residual_mu, double sigma) {
  REQUIRE(net.blocks.size() == 3);
  check_law(net.embed, mu, embed_std);
  for (const auto& b : net.blocks) {
    check_law(b.wqkv, mu, sigma);
    check_law(b.w1, mu, sigma);
    check_law(b.wo, residual_mu, sigma / std::sqrt(6.0));
    check_law(b.w2, residual_mu, sigma / std::sqrt(6.0));
  }
}

}  // namespace

TEST_CASE("fixed weights, one head: layer 1 equals a direct computation of the drawn network") {
  Settings s = random_weights(7, 24, 1, 2, 1);
  s.weights = WeightsMode::fixed;
  s.vocab = 5;  // repeated tokens in 7 positions
  Simulator sim(s);
  const Network* net = sim.network();
  REQUIRE(net != nullptr);
  const SampleTrace t = sim.trace_sample(302);
  const int n = s.n, d = s.d;
  // x_i = E[t_i]
  Matrix x(n, std::vector<double>(d));
  for (int i = 0; i < n; ++i) {
    REQUIRE(t.tokens[i] >= 0);
    REQUIRE(t.tokens[i] < s.vocab);
    for (int e = 0; e < d; ++e) {
      x[i][e] = net->embed[std::size_t(t.tokens[i]) * d + e];
      CHECK(t.input[std::size_t(i) * d + e] == doctest::Approx(x[i][e]).epsilon(1e-6));
    }
  }
  const Matrix y = layernorm(x);
  const Network::Block& b = net->blocks[0];
  const Matrix q = times(y, b.wqkv, 3 * d, 0, d), k = times(y, b.wqkv, 3 * d, d, d),
               v = times(y, b.wqkv, 3 * d, 2 * d, d);
  const LayerTrace& l1 = t.layers[0];
  REQUIRE(l1.head_scores.size() == 1);
  // S = mask(q k^T / sqrt(d_h)) and A = softmax(S) over j <= i
  Matrix a(n, std::vector<double>(n, 0.0));
  for (int i = 0; i < n; ++i) {
    double z = 0;
    std::vector<double> row(i + 1);
    for (int j = 0; j <= i; ++j) {
      row[j] = dot(q[i], k[j]) / std::sqrt(double(d));
      CHECK(l1.scores[std::size_t(i) * n + j] == doctest::Approx(row[j]).epsilon(1e-4).scale(1e-3));
      CHECK(l1.head_scores[0][std::size_t(i) * n + j] == l1.scores[std::size_t(i) * n + j]);
      z += std::exp(row[j]);
    }
    for (int j = i + 1; j < n; ++j) CHECK(std::isnan(l1.scores[std::size_t(i) * n + j]));
    for (int j = 0; j <= i; ++j) {
      a[i][j] = std::exp(row[j]) / z;
      CHECK(l1.weights[std::size_t(i) * n + j] == doctest::Approx(a[i][j]).epsilon(1e-4).scale(1e-4));
    }
  }
  // h = x + (A v) W_O; x' = h + GELU(LN(h) W_1) W_2
  Matrix av(n, std::vector<double>(d, 0.0));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j)
      for (int e = 0; e < d; ++e) av[i][e] += a[i][j] * v[j][e];
  const Matrix att = times(av, b.wo, d, 0, d);
  Matrix h = x;
  for (int i = 0; i < n; ++i)
    for (int e = 0; e < d; ++e) h[i][e] += att[i][e];
  Matrix u = times(layernorm(h), b.w1, 4 * d, 0, 4 * d);
  for (auto& row : u)
    for (double& e : row) e = 0.5 * e * (1.0 + std::erf(e / std::sqrt(2.0)));
  const Matrix m = times(u, b.w2, d, 0, d);
  double scale = 0;
  for (int i = 0; i < n; ++i)
    for (int e = 0; e < d; ++e) scale = std::max(scale, std::abs(h[i][e] + m[i][e]));
  for (int i = 0; i < n; ++i)
    for (int e = 0; e < d; ++e)
      CHECK(l1.output[std::size_t(i) * d + e] == doctest::Approx(h[i][e] + m[i][e]).epsilon(1e-4).scale(scale));
}

TEST_CASE("initialization: N(mu, sigma^2), residual projections sigma / sqrt(2L), embeddings embed_std") {
  Settings s = random_weights(4, 32, 2, 3, 1);
  s.weights = WeightsMode::fixed;
  s.init_mean = 0.5;
  s.init_std = 0.1;
  s.embed_std = 0.3;
  s.vocab = 300;
  const auto net = fixed_network(s);
  check_network_law(*net, 0.5, 0.3, 0.5, 0.1);
  // The same seed is the same network; another seed another one.
  CHECK(fixed_network(s)->blocks[1].wo == net->blocks[1].wo);
  Settings other = s;
  other.weight_seed = 2;
  CHECK(fixed_network(other)->blocks[1].wo != net->blocks[1].wo);
}

TEST_CASE("residual_mean zero: W_O and W_2 drawn with mean 0, E, W_QKV and W_1 still with mu") {
  // NanoGPT's c_proj loop as written (docs/papers.md, Table 4): only the residual projections lose the mean.
  Settings s = random_weights(4, 32, 2, 3, 1);
  s.weights = WeightsMode::fixed;
  s.init_mean = 4.0;
  s.init_std = 0.1;
  s.vocab = 300;
  s.residual_mean = ResidualMean::zero;
  const auto net = fixed_network(s);
  check_network_law(*net, 4.0, 0.1, 0.0, 0.1);
  // A network of its own (the cache keys on the setting), with the same draws shifted by mu.
  Settings all = s;
  all.residual_mean = ResidualMean::init_mean;
  const auto with_mean = fixed_network(all);
  REQUIRE(with_mean->blocks[0].wo.size() == net->blocks[0].wo.size());
  CHECK(with_mean->blocks[0].wo[7] - net->blocks[0].wo[7] == doctest::Approx(4.0).epsilon(1e-6));
  CHECK(with_mean->blocks[2].wqkv == net->blocks[2].wqkv);
}

TEST_CASE("hidden attention: the attention sublayer's output; without residual and MLP it is the block's") {
  for (WeightsMode mode : {WeightsMode::per_sample, WeightsMode::fixed}) {
    INFO("weights ", to_string(mode));
    Settings s = random_weights(10, 32, 2, 2, 300);
    s.weights = mode;
    s.gamma = 0.0;
    s.mlp = false;
    Settings a = s;
    a.hidden = HiddenState::attention;
    const auto block = run_to_completion(s), attn = run_to_completion(a);
    for (std::size_t l = 0; l < block->layers.size(); ++l) {
      CHECK(attn->layers[l].adjacency.mean == block->layers[l].adjacency.mean);
      CHECK(attn->layers[l].norm_adjacency.mean == block->layers[l].norm_adjacency.mean);
    }
  }
  // With the residual and the MLP the block's output carries each token's embedding; the attention output
  // is a running mean of the values and orders its neighbours far more often (Zuo et al. Table 4).
  Settings s = random_weights(22, 96, 2, 1, 1500);
  Settings a = s;
  a.hidden = HiddenState::attention;
  const auto block = run_to_completion(s), attn = run_to_completion(a);
  const LayerStats &b1 = block->layers[0], &a1 = attn->layers[0];
  CHECK(a1.adjacency.mean - b1.adjacency.mean > 10 * std::hypot(a1.adjacency.se, b1.adjacency.se));
  CHECK(a1.adjacency.mean > 0.9);
}

TEST_CASE("residual_mean zero: the layer-1 attention output does not see mu (LayerNorm removes it)") {
  // Norm(x) has zero mean over its d entries, so mu (Norm(x) 1) 1^T vanishes from Norm(x) W_Q, W_K, W_V and
  // W_1; only W_O's and W_2's mean would add a direction shared by every token (docs/papers.md, Table 4).
  Settings s = random_weights(16, 64, 2, 1, 3000);
  s.hidden = HiddenState::attention;
  s.residual_mean = ResidualMean::zero;
  Settings m4 = s;
  m4.init_mean = 4.0;
  m4.seed = 7;  // other draws: the two estimates are independent
  const auto zero = run_to_completion(s), four = run_to_completion(m4);
  const LayerStats &z = zero->layers[0], &f = four->layers[0];
  CHECK(std::abs(f.adjacency.mean - z.adjacency.mean) < 4 * std::hypot(f.adjacency.se, z.adjacency.se));
  // With W_O's mean mu the attention outputs share the direction 1 and their order is mostly lost.
  Settings shared = m4;
  shared.residual_mean = ResidualMean::init_mean;
  const LayerStats g = run_to_completion(shared)->layers[0];
  CHECK(z.adjacency.mean - g.adjacency.mean > 10 * std::hypot(z.adjacency.se, g.adjacency.se));
}

namespace {

// The per-sample kernel draws Y W through the Gram matrix of Y (random_weights.cpp). Compare its
// layer-1 and layer-2 statistics at init mean `mu` with 400 explicitly drawn (fixed) networks of 50 samples.
void check_per_sample_law(double mu) {
  Settings s = random_weights(6, 16, 2, 2, 20000);
  s.init_mean = mu;
  s.init_std = 0.2;
  s.vocab = 4;
  const auto per_sample = run_to_completion(s);
  Settings f = s;
  f.weights = WeightsMode::fixed;
  f.samples = 50;
  const int nets = 400;
  const int n = s.n;
  struct Stat {
    const char* name;
    double value(const Snapshot& snap) const {
      const LayerStats& l = snap.layers[std::size_t(layer)];
      switch (kind) {
        case 0: return l.cosine_mean[std::size_t(n - 1) * n];      // cos(x_{n-1}, x_0)
        case 1: return l.norm_mean[std::size_t(n - 1)];            // ||x_{n-1}||
        case 2: return l.weight_mean[std::size_t(n - 1) * n + 1];  // A_{n-1, 1}
        default: return l.adjacency.mean;
      }
    }
    int kind, layer, n;
  };
  const std::vector<Stat> stats = {{"cos", 0, 0, n}, {"norm", 1, 1, n}, {"weight", 2, 1, n}, {"adjacency", 3, 1, n}};
  std::vector<double> sum(stats.size(), 0.0), sumsq(stats.size(), 0.0);
  for (int w = 0; w < nets; ++w) {
    f.weight_seed = std::uint64_t(1000 + w);
    f.seed = std::uint64_t(w);
    const auto snap = run_to_completion(f);
    for (std::size_t k = 0; k < stats.size(); ++k) {
      const double v = stats[k].value(*snap);
      sum[k] += v;
      sumsq[k] += v * v;
    }
  }
  for (std::size_t k = 0; k < stats.size(); ++k) {
    const double mean = sum[k] / nets;
    const double se_fixed = std::sqrt((sumsq[k] / nets - mean * mean) / (nets - 1));
    const LayerStats& l = per_sample->layers[std::size_t(stats[k].layer)];
    double se_ps = 0;
    switch (stats[k].kind) {
      case 0: se_ps = l.cosine_se[std::size_t(n - 1) * n]; break;
      case 1: se_ps = l.norm_se[std::size_t(n - 1)]; break;
      case 2: se_ps = l.weight_se[std::size_t(n - 1) * n + 1]; break;
      default: se_ps = l.adjacency.se;
    }
    const double z = (stats[k].value(*per_sample) - mean) / std::hypot(se_fixed, se_ps);
    INFO(std::string(stats[k].name), ": per-sample ", stats[k].value(*per_sample), ", explicit networks ", mean,
         ", z = ", z);
    CHECK(std::abs(z) < 4.0);
  }
}

}  // namespace

TEST_CASE("per-sample weights have the law of explicitly drawn networks (mean 0.3: the direct draws)" *
          doctest::test_suite("slow")) {
  check_per_sample_law(0.3);  // exercises the mean part mu (Y 1) 1^T
}

TEST_CASE("per-sample weights have the law of explicitly drawn networks (mean 0: Bartlett attention)" *
          doctest::test_suite("slow")) {
  check_per_sample_law(0.0);  // d_h 8 >= n 6: the heads' Bartlett draws (random_weights_bartlett.hpp)
}

TEST_CASE("exchangeable tokens (bidirectional mask): adjacency and norm adjacency are 0.5 within 4 SE") {
  for (WeightsMode mode : {WeightsMode::per_sample, WeightsMode::fixed}) {
    Settings s = random_weights(9, 32, 4, 3, 4000);
    s.mask = MaskKind::bidirectional;
    s.weights = mode;
    const auto snap = run_to_completion(s);
    REQUIRE(snap->embeddings.size() == 1);
    std::vector<const LayerStats*> all = {&snap->embeddings[0]};
    for (const auto& l : snap->layers) all.push_back(&l);
    for (const LayerStats* l : all) {
      INFO("layer ", l->layer, " weights ", to_string(mode));
      CHECK(std::abs(l->adjacency.mean - 0.5) < 4 * l->adjacency.se);
      CHECK(std::abs(l->norm_adjacency.mean - 0.5) < 4 * l->norm_adjacency.se);
    }
  }
}

TEST_CASE("the papers' width: adjacency far above 0.5 after the first causal layer; at d 64 barely" *
          doctest::test_suite("slow")) {
  // Zuo et al. Table 4 (mu 0, sigma 0.02): d 384, 6 heads, n 22. Layer 0 (the embeddings) has no order.
  const auto wide = run_to_completion(random_weights(22, 384, 6, 2, 600));
  CHECK(std::abs(wide->embeddings[0].adjacency.mean - 0.5) < 4 * wide->embeddings[0].adjacency.se);
  for (const auto& l : wide->layers) CHECK(l.adjacency.mean > 0.75);
  // At d 64 the embeddings (norm sigma sqrt(d)) outweigh the running mean attention adds.
  const auto narrow = run_to_completion(random_weights(22, 64, 1, 2, 3000));
  for (const auto& l : narrow->layers) {
    CHECK(l.adjacency.mean - 0.5 > 4 * l.adjacency.se);
    CHECK(l.adjacency.mean < 0.53);
  }
}

TEST_CASE("heads: the layer's maps are the mean of the heads' maps, its RP the mean of the heads' RP") {
  Settings s = random_weights(8, 24, 3, 2, 500);
  s.rope_base = 10000;
  const auto snap = run_to_completion(s);
  for (const auto& l : snap->layers) {
    REQUIRE(l.heads.size() == 3);
    double rp = 0;
    for (const auto& h : l.heads) rp += h.rp.mean / 3;
    CHECK(l.rp.mean == doctest::Approx(rp).epsilon(1e-12));
    for (std::size_t e = 0; e < l.score_mean.size(); ++e) {
      if (std::isnan(l.score_mean[e])) continue;
      const double mean = (l.heads[0].score_mean[e] + l.heads[1].score_mean[e] + l.heads[2].score_mean[e]) / 3;
      CHECK(l.score_mean[e] == doctest::Approx(mean).epsilon(1e-5).scale(1e-5));
      const double w = (l.heads[0].weight_mean[e] + l.heads[1].weight_mean[e] + l.heads[2].weight_mean[e]) / 3;
      CHECK(l.weight_mean[e] == doctest::Approx(w).epsilon(1e-5).scale(1e-6));
    }
  }
}

TEST_CASE("random weights are deterministic: the same bits for any thread count") {
  for (WeightsMode mode : {WeightsMode::per_sample, WeightsMode::fixed}) {
    Settings s = random_weights(10, 32, 2, 2, 300);  // fixed: 300 samples in batches of 32, the last partial
    s.weights = mode;
    s.threads = 1;
    const auto one = run_to_completion(s);
    s.threads = 3;
    const auto three = run_to_completion(s);
    for (std::size_t l = 0; l < one->layers.size(); ++l) {
      CHECK(same_bits(one->layers[l].score_mean, three->layers[l].score_mean));
      CHECK(one->layers[l].cosine_mean == three->layers[l].cosine_mean);
      CHECK(one->layers[l].rp.mean == three->layers[l].rp.mean);
      CHECK(one->layers[l].norm_adjacency.mean == three->layers[l].norm_adjacency.mean);
    }
    CHECK(one->embeddings[0].cosine_mean == three->embeddings[0].cosine_mean);
  }
}

TEST_CASE("random-weight settings are validated, each error naming its setting") {
  auto names = [](const Settings& s) {
    std::vector<std::string> v;
    for (const auto& e : validate(s)) v.push_back(e.setting);
    return v;
  };
  Settings s = random_weights(8, 30, 4, 2, 10);
  CHECK(names(s) == std::vector<std::string>{"heads"});  // 30 % 4 != 0
  s.heads = 3;
  s.rope_base = 10000;  // head width 10: even, fine
  CHECK(names(s).empty());
  s.heads = 6;  // head width 5: odd
  CHECK(names(s) == std::vector<std::string>{"rope"});
  s = random_weights(8, 32, 1, 2, 10);
  s.vocab = 0;
  s.init_std = -0.1;
  s.embed_std = -1.0;
  s.init_mean = 1e9;
  CHECK(names(s) == std::vector<std::string>{"vocab", "init_mean", "init_std", "embed_std"});
  Settings pf;
  pf.heads = 2;
  CHECK(names(pf) == std::vector<std::string>{"heads"});
}
