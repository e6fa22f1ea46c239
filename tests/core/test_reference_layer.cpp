// The fast kernels (the lane kernel and the per-sample kernel) held to the plain double-precision
// reference of one layer (core/kernel/reference_layer.hpp, docs/model.md section 2): every traced
// layer's input fed to the reference gives its normalized rows, scores, weights and output.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/kernel/reference_layer.hpp"
#include "core/kernel/simulator.hpp"

using namespace maskscope;

namespace {

// Every norm, scale and mask, RoPE off and on, gamma 0 and 1, alpha 0 and 0.5: 288 settings. n 11
// leaves a remainder after the kernels' blocks of 4 rows; d 32 gives the reduced basis (no RoPE)
// rows of 16 coordinates narrower than d; 3 layers take the later layers' paths (scores from the
// Gram matrix or the previous cosines).
std::vector<Settings> reference_cases() {
  std::vector<Settings> v;
  for (Norm norm : {Norm::none, Norm::l2, Norm::layernorm, Norm::rmsnorm})
    for (Scale scale : {Scale::one, Scale::sqrt_d, Scale::d})
      for (double rope_base : {0.0, 10000.0})
        for (MaskKind mask : {MaskKind::causal, MaskKind::bidirectional, MaskKind::window})
          for (double gamma : {0.0, 1.0})
            for (double alpha : {0.0, 0.5}) {
              Settings s;
              s.n = 11;
              s.d = 32;
              s.layers = 3;
              s.norm = norm;
              s.scale = scale;
              s.rope_base = rope_base;
              s.mask = mask;
              s.window = 3;
              s.gamma = gamma;
              s.alpha = alpha;
              s.samples = 100;  // blocks of whole batches, as the lane kernel needs
              s.seed = 31;
              v.push_back(s);
            }
  return v;
}

// The tolerance. The kernels compute in float (rounding u = 2^-24 = 6e-8 per operation) from the same
// float input as the reference, which is exact by comparison. A dot product of dim <= 32 terms is off
// by at most dim u = 2e-6 of |a| |b|, the norm's factor by a few u more, the exponential by 1e-7: tol =
// 1e-5 (about 160 u) relative to each quantity's magnitude covers them with room (measured: at most
// 6% of the allowed error, on AVX2), and a wrong step (a lost gamma, scale, sign or centring, a mask
// one key wider) is off by O(1) of it. (The 1e-30 below only keeps an allowed error of 0 from dividing.)
constexpr double kTol = 1e-5;

struct Worst {
  double normalized = 0, scores = 0, weights = 0, output = 0;  // largest error / allowed error
  int masked_wrong = 0;  // masked cells whose score is not NaN or whose weight is not 0
};

double norm_of_row(const reference::Matrix& m, int i, int dim) {
  double ss = 0;
  for (int e = 0; e < dim; ++e) ss += m[std::size_t(i * dim + e)] * m[std::size_t(i * dim + e)];
  return std::sqrt(ss);
}

// One traced layer against the reference on its input x. The magnitudes: |S_ij| <= scale |y_i| |y_j|
// (Cauchy-Schwarz); softmax moves A_ij by A_ij (dS_ij - sum_k A_ik dS_ik), at most A_ij 2 max |dS|;
// X'_i = sum_j A_ij y_j + gamma x_i is off by the weights' error times |y_j| plus A's mean of y's error.
void compare(const reference::LayerSpec& spec, const std::vector<float>& input, const LayerTrace& lt, Worst& w) {
  const int n = spec.n, dim = spec.dim;
  const reference::Matrix x(input.begin(), input.end());
  const reference::Layer ref = reference::layer(spec, x);
  const double scale = reference::score_scale(spec);
  auto ratio = [](double fast, double exact, double allowed) { return std::fabs(fast - exact) / allowed; };
  for (int i = 0; i < n; ++i) {
    const double yi = norm_of_row(ref.normalized, i, dim);
    double keys_norm = 0;  // the largest |y_j| over row i's keys
    for (int j = 0; j < n; ++j)
      if (reference::attends(spec, i, j)) keys_norm = std::max(keys_norm, norm_of_row(ref.normalized, j, dim));
    const double s_max = scale * yi * keys_norm;  // bounds |S_ij| in row i
    for (int e = 0; e < dim; ++e) {
      const std::size_t c = std::size_t(i * dim + e);
      w.normalized = std::max(w.normalized, ratio(lt.normalized[c], ref.normalized[c], kTol * yi + 1e-30));
      const double allowed = kTol * ((2 + 2 * s_max) * keys_norm + spec.gamma * std::fabs(x[c])) + 1e-30;
      w.output = std::max(w.output, ratio(lt.output[c], ref.output[c], allowed));
    }
    for (int j = 0; j < n; ++j) {
      const std::size_t c = std::size_t(i * n + j);
      if (!reference::attends(spec, i, j)) {  // masked: NaN score, weight exactly 0, in both
        w.masked_wrong += !std::isnan(lt.scores[c]) || lt.weights[c] != 0.0f;
        continue;
      }
      const double yj = norm_of_row(ref.normalized, j, dim);
      w.scores = std::max(w.scores, ratio(lt.scores[c], ref.scores[c], kTol * scale * yi * yj + 1e-30));
      const double weight_allowed = kTol * ref.weights[c] * (1 + 2 * s_max) + 1e-30;
      w.weights = std::max(w.weights, ratio(lt.weights[c], ref.weights[c], weight_allowed));
    }
  }
}

}  // namespace

TEST_CASE("every traced layer of both kernels equals the reference layer within float rounding") {
  for (const Simulator::Kernel kernel : {Simulator::Kernel::lanes, Simulator::Kernel::per_sample}) {
    Worst worst;
    int layers = 0;
    for (const Settings& s : reference_cases()) {
      REQUIRE(validate(s).empty());
      Simulator sim(s, false, kernel);
      REQUIRE(sim.uses_lanes() == (kernel == Simulator::Kernel::lanes));
      const reference::LayerSpec spec = reference::layer_spec(s, input_basis(s));
      CAPTURE(int(s.norm));
      CAPTURE(int(s.scale));
      CAPTURE(s.rope_base);
      CAPTURE(int(s.mask));
      CAPTURE(s.gamma);
      CAPTURE(s.alpha);
      for (const SampleTrace& t : sim.trace_block(3, 4)) {
        REQUIRE(t.dim == spec.dim);
        const std::vector<float>* input = &t.input;  // layer l's input: layer l - 1's output
        for (const LayerTrace& lt : t.layers) {
          Worst w;
          compare(spec, *input, lt, w);
          CHECK(w.normalized <= 1.0);
          CHECK(w.scores <= 1.0);
          CHECK(w.weights <= 1.0);
          CHECK(w.output <= 1.0);
          CHECK(w.masked_wrong == 0);
          worst = {std::max(worst.normalized, w.normalized), std::max(worst.scores, w.scores),
                   std::max(worst.weights, w.weights), std::max(worst.output, w.output)};
          input = &lt.output;
          ++layers;
        }
      }
    }
    const std::string name = kernel == Simulator::Kernel::lanes ? "lanes" : "per-sample";
    MESSAGE(name, ": ", layers, " layers; largest error / allowed: normalized ", worst.normalized, ", scores ",
            worst.scores, ", weights ", worst.weights, ", output ", worst.output);
    CHECK(layers == 288 * 4 * 3);
  }
}
