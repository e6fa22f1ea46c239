// AdamW, its schedule and clipping (optimizer.hpp), element by element in the order of torch.optim.AdamW's
// single-tensor path, so that its losses follow PyTorch's to float rounding (tests/python/train_torch.py).
#include "core/train/optimizer.hpp"

#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "core/train/parallel.hpp"
#include "core/train/parameters.hpp"

namespace maskscope::train {

double learning_rate(const OptimizerSettings& o, std::int64_t step) {
  if (step < o.warmup) return o.lr * double(step + 1) / double(o.warmup + 1);
  const double min_lr = o.lr * o.min_lr_ratio;
  if (step >= o.decay_steps || o.decay_steps <= o.warmup) return step >= o.decay_steps ? min_lr : o.lr;
  const double t = double(step - o.warmup) / double(o.decay_steps - o.warmup);
  return min_lr + 0.5 * (1.0 + std::cos(M_PI * t)) * (o.lr - min_lr);
}

namespace {

// The tensors of a network in for_each_tensor's order, and their sizes.
template <class Net,
          class Tensor = std::conditional_t<std::is_const_v<Net>, const std::vector<float>, std::vector<float>>>
std::vector<Tensor*> tensors_of(Net& net) {
  std::vector<Tensor*> out;
  for_each_tensor(net, [&out](const std::string&, Tensor& v, bool) { out.push_back(&v); });
  return out;
}

template <class Tensor>
std::vector<std::size_t> sizes_of(const std::vector<Tensor*>& tensors) {
  std::vector<std::size_t> sizes;
  for (const Tensor* t : tensors) sizes.push_back(t->size());
  return sizes;
}

// The sum of squares of every entry, in double: each block of tensor_blocks summed in entry order, then the blocks'
// sums in block order, so the bits do not depend on the thread count.
template <class Tensor>
double sum_of_squares(const std::vector<Tensor*>& g, const std::vector<TensorBlock>& blocks, int threads) {
  std::vector<double> partial(blocks.size(), 0.0);
  parallel_chunks(0, int(blocks.size()), threads, [&](int, int k) {
    const TensorBlock& b = blocks[std::size_t(k)];
    const float* v = g[b.tensor]->data();
    double sum = 0;
    for (std::size_t e = b.begin; e < b.end; ++e) sum += double(v[e]) * double(v[e]);
    partial[std::size_t(k)] = sum;
  });
  double sum = 0;
  for (double p : partial) sum += p;
  return sum;
}

}  // namespace

double gradient_norm(const Network& grad) {
  const std::vector<const std::vector<float>*> g = tensors_of(grad);
  return std::sqrt(sum_of_squares(g, tensor_blocks(sizes_of(g)), 1));
}

double adamw_update(const OptimizerSettings& o, double lr, Network& params, Network& grad, AdamState& state,
                    int threads) {
  const std::vector<std::vector<float>*> ps = tensors_of(params), gs = tensors_of(grad), ms = tensors_of(state.m),
                                         vs = tensors_of(state.v);
  const std::vector<TensorBlock> blocks = tensor_blocks(sizes_of(ps));
  const double norm = std::sqrt(sum_of_squares(gs, blocks, threads));
  const float clip = o.grad_clip > 0 && o.grad_clip / (norm + 1e-6) < 1.0 ? float(o.grad_clip / (norm + 1e-6)) : 1.0f;
  ++state.step;
  const float b1 = float(o.beta1), b2 = float(o.beta2), eps = float(o.eps);
  const double bc1 = 1.0 - std::pow(o.beta1, double(state.step)), bc2 = 1.0 - std::pow(o.beta2, double(state.step));
  const float step_size = float(lr / bc1), bc2_sqrt = float(std::sqrt(bc2));
  const float decay = float(1.0 - lr * o.weight_decay);
  std::vector<bool> decays;
  for_each_tensor(params, [&](const std::string&, std::vector<float>&, bool d) { decays.push_back(d); });
  // Entry by entry, so any split over threads gives the same bits.
  parallel_chunks(0, int(blocks.size()), threads, [&](int, int k) {
    const TensorBlock& b = blocks[std::size_t(k)];
    float* p = ps[b.tensor]->data();
    const float* g = gs[b.tensor]->data();
    float* m = ms[b.tensor]->data();
    float* v = vs[b.tensor]->data();
    const bool wd = decays[b.tensor] && o.weight_decay != 0.0;
    for (std::size_t e = b.begin; e < b.end; ++e) {
      const float ge = g[e] * clip;
      if (wd) p[e] *= decay;
      m[e] += (ge - m[e]) * (1.0f - b1);
      v[e] = v[e] * b2 + (1.0f - b2) * ge * ge;
      const float denom = std::sqrt(v[e]) / bc2_sqrt + eps;
      p[e] -= step_size * (m[e] / denom);
    }
  });
  return norm;
}

}  // namespace maskscope::train
