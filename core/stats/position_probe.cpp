// Position probes (position_probe.hpp): features, the ridge and MLP probes, and their scores.
#include "core/stats/position_probe.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/random/random_stream.hpp"

namespace maskscope {

namespace {

using MatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Uniform integer in [0, v) (Lemire's multiply-shift).
std::int64_t below(SampleStream& rng, std::uint64_t v) {
  __extension__ typedef unsigned __int128 u128;
  return static_cast<std::int64_t>((static_cast<u128>(rng.next()) * v) >> 64);
}

// Scalar features enter the ridge probe as z, z^2, z^3 (ProbeOptions::ridge).
constexpr int kScalarPowers = 3;

// Per-column mean and standard deviation of the training design (a constant column gets scale 0).
struct Standardizer {
  std::vector<double> mean, inv_std;
};

// The design matrix of `rows` rows of `width` values: the values themselves, or for a scalar feature
// with `powers`, its first kScalarPowers powers of the value standardized by (m0, s0).
MatrixD design(const std::vector<float>& values, std::int64_t rows, int width, bool powers, double m0, double s0) {
  const int p = (powers && width == 1) ? kScalarPowers : width;
  MatrixD z(rows, p);
  for (std::int64_t r = 0; r < rows; ++r) {
    if (p == width) {
      for (int c = 0; c < width; ++c) z(r, c) = values[std::size_t(r) * width + c];
      continue;
    }
    const double v = (double(values[std::size_t(r)]) - m0) * s0;
    double power = v;
    for (int c = 0; c < p; ++c, power *= v) z(r, c) = power;
  }
  return z;
}

Standardizer standardizer_of(const MatrixD& z) {
  Standardizer st;
  const double rows = double(z.rows());
  st.mean.resize(z.cols());
  st.inv_std.resize(z.cols());
  for (Eigen::Index c = 0; c < z.cols(); ++c) {
    const double m = z.col(c).sum() / rows;
    const double var = (z.col(c).array() - m).square().sum() / rows;
    st.mean[c] = m;
    st.inv_std[c] = var > 1e-24 ? 1.0 / std::sqrt(var) : 0.0;
  }
  return st;
}

void standardize(const Standardizer& st, MatrixD& z) {
  for (Eigen::Index c = 0; c < z.cols(); ++c) z.col(c) = (z.col(c).array() - st.mean[c]) * st.inv_std[c];
}

// The standardization of a scalar feature before its powers are taken.
void scalar_moments(const std::vector<float>& v, double& mean, double& inv_std) {
  double m = 0;
  for (float x : v) m += x;
  m /= double(std::max<std::size_t>(1, v.size()));
  double var = 0;
  for (float x : v) var += (x - m) * (x - m);
  var /= double(std::max<std::size_t>(1, v.size()));
  mean = m;
  inv_std = var > 1e-24 ? 1.0 / std::sqrt(var) : 0.0;
}

// Both designs, standardized by the training rows' moments.
void designs(const ProbeData& data, bool powers, MatrixD& train, MatrixD& test) {
  double m0 = 0, s0 = 1;
  if (powers && data.width == 1) scalar_moments(data.train, m0, s0);
  train = design(data.train, data.train_sequences * data.n, data.width, powers, m0, s0);
  test = design(data.test, data.test_sequences * data.n, data.width, powers, m0, s0);
  const Standardizer st = standardizer_of(train);
  standardize(st, train);
  standardize(st, test);
}

double position_of(std::int64_t row, int n) { return double(row % n); }

// Ridge regression with an unpenalized intercept: (Z^T Z / N + lambda I) w = Z^T (y - mean y) / N.
std::vector<double> ridge_predictions(const ProbeData& data, const ProbeOptions& o) {
  MatrixD train, test;
  designs(data, true, train, test);
  const Eigen::Index rows = train.rows(), p = train.cols();
  Eigen::VectorXd y(rows);
  for (Eigen::Index r = 0; r < rows; ++r) y(r) = position_of(r, data.n);
  const double y_mean = y.mean();
  y.array() -= y_mean;
  Eigen::MatrixXd gram = Eigen::MatrixXd::Zero(p, p);
  gram.selfadjointView<Eigen::Lower>().rankUpdate(train.transpose(), 1.0 / double(rows));
  gram.diagonal().array() += o.ridge;
  const Eigen::VectorXd rhs = train.transpose() * y / double(rows);
  const Eigen::VectorXd w = gram.selfadjointView<Eigen::Lower>().ldlt().solve(rhs);
  const Eigen::VectorXd predicted = (test * w).array() + y_mean;
  return {predicted.data(), predicted.data() + predicted.size()};
}

// The paper's MLP probe (ProbeOptions): four affine maps, ReLU between, trained with Adam.
class MlpProbe {
 public:
  MlpProbe(int inputs, const ProbeOptions& o) : o_(o) {
    const int h = o.mlp_width;
    const int fan_in[4] = {inputs, h, h, h}, fan_out[4] = {h, h, h, 1};
    SampleStream rng(o.seed, 0);
    for (int k = 0; k < 4; ++k) {
      std::vector<float> draws(std::size_t(fan_in[k]) * fan_out[k]);
      rng.normals(draws.data(), draws.size());
      const float scale = std::sqrt(2.0f / float(fan_in[k]));  // He et al. for ReLU
      w_[k] = Eigen::Map<MatrixF>(draws.data(), fan_in[k], fan_out[k]) * scale;
      b_[k] = Eigen::RowVectorXf::Zero(fan_out[k]);
      mw_[k] = vw_[k] = MatrixF::Zero(fan_in[k], fan_out[k]);
      mb_[k] = vb_[k] = Eigen::RowVectorXf::Zero(fan_out[k]);
    }
  }

  // Output for each row of x (B x inputs); keeps the activations for backward().
  const MatrixF& forward(const MatrixF& x) {
    a_[0] = x;
    for (int k = 0; k < 4; ++k) {
      a_[k + 1] = (a_[k] * w_[k]).rowwise() + b_[k];
      if (k < 3) a_[k + 1] = a_[k + 1].cwiseMax(0.0f);
    }
    return a_[4];
  }

  // One Adam step on the mean squared error of the last forward() against `target` (B x 1).
  void step(const MatrixF& target) {
    const float batch = float(target.rows());
    MatrixF g = (a_[4] - target) * (2.0f / batch);
    ++t_;
    for (int k = 3; k >= 0; --k) {
      const MatrixF gw = a_[k].transpose() * g;
      const Eigen::RowVectorXf gb = g.colwise().sum();
      if (k > 0) g = ((g * w_[k].transpose()).array() * (a_[k].array() > 0.0f).cast<float>()).matrix();
      adam(w_[k], mw_[k], vw_[k], gw);
      adam(b_[k], mb_[k], vb_[k], gb);
    }
  }

 private:
  template <class P, class G>
  void adam(P& param, P& m, P& v, const G& grad) {
    constexpr float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
    const float lr = float(o_.mlp_learning_rate);
    m = b1 * m + (1.0f - b1) * grad;
    v = b2 * v + (1.0f - b2) * grad.cwiseProduct(grad);
    const float c1 = 1.0f - std::pow(b1, float(t_)), c2 = 1.0f - std::pow(b2, float(t_));
    param.array() -= lr * (m.array() / c1) / ((v.array() / c2).sqrt() + eps);
  }

  ProbeOptions o_;
  MatrixF w_[4], mw_[4], vw_[4], a_[5];
  Eigen::RowVectorXf b_[4], mb_[4], vb_[4];
  int t_ = 0;
};

std::optional<std::vector<double>> mlp_predictions(const ProbeData& data, const ProbeOptions& o,
                                                   const std::atomic<bool>* cancel) {
  MatrixD train_d, test_d;
  designs(data, false, train_d, test_d);
  const MatrixF train = train_d.cast<float>(), test = test_d.cast<float>();
  const std::int64_t rows = train.rows();
  const int n = data.n;
  MlpProbe mlp(int(train.cols()), o);
  std::vector<std::int64_t> order(static_cast<std::size_t>(rows));
  std::iota(order.begin(), order.end(), std::int64_t(0));
  MatrixF xb(o.mlp_batch, train.cols()), tb(o.mlp_batch, 1);
  for (int epoch = 0; epoch < o.mlp_epochs; ++epoch) {
    if (cancel && cancel->load(std::memory_order_relaxed)) return std::nullopt;
    SampleStream shuffle(o.seed, 1 + std::uint64_t(epoch));  // Fisher-Yates from the probe's seed
    for (std::int64_t i = rows - 1; i > 0; --i) {
      const std::int64_t j = below(shuffle, std::uint64_t(i + 1));
      std::swap(order[std::size_t(i)], order[std::size_t(j)]);
    }
    for (std::int64_t first = 0; first < rows; first += o.mlp_batch) {
      const int b = int(std::min<std::int64_t>(o.mlp_batch, rows - first));
      xb.resize(b, train.cols());
      tb.resize(b, 1);
      for (int r = 0; r < b; ++r) {
        const std::int64_t row = order[std::size_t(first + r)];
        xb.row(r) = train.row(row);
        tb(r, 0) = float(position_of(row, n) / n);
      }
      mlp.forward(xb);
      mlp.step(tb);
    }
  }
  const MatrixF out = mlp.forward(test);
  std::vector<double> predicted(std::size_t(out.rows()));
  for (Eigen::Index r = 0; r < out.rows(); ++r) predicted[std::size_t(r)] = double(out(r, 0)) * n;
  return predicted;
}

// Sums over one test sequence's tokens, from which any resample's scores follow.
struct SequenceSums {
  double p = 0, pp = 0, py = 0, y = 0, yy = 0, se = 0;
  void add(const SequenceSums& o) {
    p += o.p;
    pp += o.pp;
    py += o.py;
    y += o.y;
    yy += o.yy;
    se += o.se;
  }
};

void scores_of(const SequenceSums& s, double rows, int n, double& r, double& nrmse) {
  const double cov = s.py - s.p * s.y / rows;
  const double vp = s.pp - s.p * s.p / rows, vy = s.yy - s.y * s.y / rows;
  r = (vp > 1e-12 * std::max(1.0, s.pp) && vy > 0) ? cov / std::sqrt(vp * vy) : 0.0;
  nrmse = std::sqrt(std::max(0.0, s.se) / rows) / n;
}

}  // namespace

std::optional<ProbeFeature> parse_probe_feature(std::string_view text) {
  for (ProbeFeature f : kProbeFeatures)
    if (text == to_string(f)) return f;
  return std::nullopt;
}

std::optional<ProbeKind> parse_probe_kind(std::string_view text) {
  if (text == "ridge") return ProbeKind::ridge;
  if (text == "mlp") return ProbeKind::mlp;
  return std::nullopt;
}

int feature_width(ProbeFeature f, int d) { return f == ProbeFeature::x ? d : 1; }

void append_features(ProbeFeature f, int n, int d, const float* x, std::vector<float>& out) {
  const float* last = x + std::size_t(n - 1) * d;
  double last_norm = 0;
  for (int c = 0; c < d; ++c) last_norm += double(last[c]) * last[c];
  last_norm = std::sqrt(last_norm);
  for (int i = 0; i < n; ++i) {
    const float* xi = x + std::size_t(i) * d;
    switch (f) {
      case ProbeFeature::x: out.insert(out.end(), xi, xi + d); break;
      case ProbeFeature::var: {  // Var_X: the variance over the d coordinates (Chi et al.'s signal)
        double mean = 0, sq = 0;
        for (int c = 0; c < d; ++c) mean += xi[c];
        mean /= d;
        for (int c = 0; c < d; ++c) sq += (xi[c] - mean) * (xi[c] - mean);
        out.push_back(float(sq / d));
        break;
      }
      case ProbeFeature::sim: {  // Sim_X: cos(x_i, x_n), the last position's state
        double dot = 0, norm = 0;
        for (int c = 0; c < d; ++c) {
          dot += double(xi[c]) * last[c];
          norm += double(xi[c]) * xi[c];
        }
        const double denom = std::sqrt(norm) * last_norm;
        out.push_back(denom > 0 ? float(dot / denom) : 0.0f);
        break;
      }
    }
  }
}

ProbeScore score_predictions(const std::vector<double>& predicted, int n, const ProbeOptions& o) {
  const std::int64_t sequences = std::int64_t(predicted.size()) / n;
  std::vector<SequenceSums> seq(static_cast<std::size_t>(sequences));
  SequenceSums all;
  for (std::int64_t q = 0; q < sequences; ++q) {
    SequenceSums& s = seq[std::size_t(q)];
    for (int i = 0; i < n; ++i) {
      const double p = predicted[std::size_t(q * n + i)], y = i;
      s.p += p;
      s.pp += p * p;
      s.py += p * y;
      s.y += y;
      s.yy += y * y;
      s.se += (p - y) * (p - y);
    }
    all.add(s);
  }
  ProbeScore score;
  const double rows = double(sequences) * n;
  scores_of(all, rows, n, score.pearson_r, score.nrmse);
  if (o.bootstrap < 2 || sequences < 2) return score;
  // Bootstrap over whole test sequences (their tokens are not independent).
  SampleStream rng(o.seed, 0x5eedb007);
  double sr = 0, srr = 0, se = 0, see = 0;
  for (int b = 0; b < o.bootstrap; ++b) {
    SequenceSums total;
    for (std::int64_t k = 0; k < sequences; ++k) {
      const std::int64_t q = below(rng, std::uint64_t(sequences));
      total.add(seq[std::size_t(q)]);
    }
    double r = 0, e = 0;
    scores_of(total, rows, n, r, e);
    sr += r;
    srr += r * r;
    se += e;
    see += e * e;
  }
  const double bs = o.bootstrap;
  score.pearson_r_se = std::sqrt(std::max(0.0, (srr - sr * sr / bs) / (bs - 1)));
  score.nrmse_se = std::sqrt(std::max(0.0, (see - se * se / bs) / (bs - 1)));
  return score;
}

std::optional<ProbeScore> fit_probe(const ProbeData& data, const ProbeOptions& o, const std::atomic<bool>* cancel) {
  std::vector<double> predicted;
  if (o.kind == ProbeKind::ridge) {
    predicted = ridge_predictions(data, o);
  } else {
    auto p = mlp_predictions(data, o, cancel);
    if (!p) return std::nullopt;
    predicted = std::move(*p);
  }
  if (cancel && cancel->load(std::memory_order_relaxed)) return std::nullopt;
  return score_predictions(predicted, data.n, o);
}

}  // namespace maskscope
