// AdamW, its schedule and clipping (optimizer.hpp), element by element in the order of torch.optim.AdamW's
// single-tensor path, so that its losses follow PyTorch's to float rounding (tests/python/train_torch.py).
#include "core/train/optimizer.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "core/train/parameters.hpp"

namespace maskscope::train {

double learning_rate(const OptimizerSettings& o, std::int64_t step) {
  if (step < o.warmup) return o.lr * double(step + 1) / double(o.warmup + 1);
  const double min_lr = o.lr * o.min_lr_ratio;
  if (step >= o.decay_steps || o.decay_steps <= o.warmup) return step >= o.decay_steps ? min_lr : o.lr;
  const double t = double(step - o.warmup) / double(o.decay_steps - o.warmup);
  return min_lr + 0.5 * (1.0 + std::cos(M_PI * t)) * (o.lr - min_lr);
}

double gradient_norm(const Network& grad) {
  double sum = 0;
  for_each_tensor(grad, [&](const std::string&, const std::vector<float>& g, bool) {
    for (float v : g) sum += double(v) * double(v);
  });
  return std::sqrt(sum);
}

double adamw_update(const OptimizerSettings& o, double lr, Network& params, Network& grad, AdamState& state) {
  const double norm = gradient_norm(grad);
  const float clip = o.grad_clip > 0 && o.grad_clip / (norm + 1e-6) < 1.0 ? float(o.grad_clip / (norm + 1e-6)) : 1.0f;
  ++state.step;
  const float b1 = float(o.beta1), b2 = float(o.beta2), eps = float(o.eps);
  const double bc1 = 1.0 - std::pow(o.beta1, double(state.step)), bc2 = 1.0 - std::pow(o.beta2, double(state.step));
  const float step_size = float(lr / bc1), bc2_sqrt = float(std::sqrt(bc2));
  const float decay = float(1.0 - lr * o.weight_decay);
  // Walk the four networks' tensors in step: for_each_tensor lists them in one order.
  std::vector<std::vector<float>*> ps, gs, ms, vs;
  auto collect = [](std::vector<std::vector<float>*>& out) {
    return [&out](const std::string&, std::vector<float>& v, bool) { out.push_back(&v); };
  };
  for_each_tensor(params, collect(ps));
  for_each_tensor(grad, collect(gs));
  for_each_tensor(state.m, collect(ms));
  for_each_tensor(state.v, collect(vs));
  std::vector<bool> decays;
  for_each_tensor(params, [&](const std::string&, std::vector<float>&, bool d) { decays.push_back(d); });
  for (std::size_t t = 0; t < ps.size(); ++t) {
    std::vector<float>& p = *ps[t];
    std::vector<float>& g = *gs[t];
    std::vector<float>& m = *ms[t];
    std::vector<float>& v = *vs[t];
    const bool wd = decays[t] && o.weight_decay != 0.0;
    for (std::size_t e = 0; e < p.size(); ++e) {
      const float ge = g[e] * clip;
      if (wd) p[e] *= decay;
      m[e] += (ge - m[e]) * (1.0f - b1);
      v[e] = v[e] * b2 + (1.0f - b2) * ge * ge;
      const float denom = std::sqrt(v[e]) / bc2_sqrt + eps;
      p[e] -= step_size * (m[e] / denom);
    }
  }
  return norm;
}

}  // namespace maskscope::train
