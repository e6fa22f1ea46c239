// The batched forward pass of a fixed random-weight network (random_weights_batched.hpp): the
// products through eigen_gemm on B samples' rows, the heads and metrics per sample as on the
// per-sample path (random_weights_steps.hpp), compiled for x86-64-v3 and baseline like it.
#include "core/kernel/network/random_weights_batched.hpp"

#include <algorithm>
#include <cstring>

#include "core/kernel/network/eigen_gemm.hpp"
#include "core/kernel/network/random_weights_math.hpp"

namespace maskscope::rw {

MASKSCOPE_KERNEL_CLONES
bool run_batched(const RwArgs& k, RandomWeightsModel::Work& w, std::uint64_t first_sample, std::int64_t count,
                 BlockSums* sums, SampleTrace* trace, const std::atomic<bool>* cancel, bool trace_every) {
  const int n = k.n, d = k.d, B = w.batch;
  const std::size_t nd = w.nd(), rows = std::size_t(B) * n;
  const std::size_t head_maps = std::size_t(k.heads) * w.nn();
  const MetricScratch ms = w.metric_scratch();
  const HeadScratch hs = w.heads_scratch();
  const kernel::StageScratch ss = w.stage_scratch();
  const bool stages = sums && k.layout->stages;  // docs/model.md section 12
  const std::uint64_t end = first_sample + std::uint64_t(count);
  for (std::uint64_t s = first_sample; s < end;) {
    if (cancel && cancel->load(std::memory_order_relaxed)) return false;
    const std::uint64_t base = s - s % std::uint64_t(B);
    const int lo = int(s - base), hi = int(std::min(end, base + std::uint64_t(B)) - base);  // slots [lo, hi)
    // The slot whose sample is traced (-1: none; with trace_every, every slot).
    const int traced = trace && base + std::uint64_t(hi) == end ? hi - 1 : -1;
    auto is_traced = [&](int t) { return trace && (trace_every || t == traced); };
    auto trace_of = [&](int t) -> SampleTrace& {
      return trace_every ? trace[base + std::uint64_t(t) - first_sample] : *trace;
    };
    // The active rows, for the row-wise steps (the products take all rows).
    const std::size_t r0 = std::size_t(lo) * nd, r1 = std::size_t(hi) * nd;
    auto S = [&](int t) { return w.s.data() + std::size_t(t) * head_maps; };
    auto A = [&](int t) { return w.a.data() + std::size_t(t) * head_maps; };
    for (int t = lo; t < hi; ++t) {  // x_i = E[t_i] (layer 0)
      SampleStream rng(k.seed, base + std::uint64_t(t));
      std::int64_t* tokens = w.tokens.data() + std::size_t(t) * n;
      draw_tokens(k, rng, base + std::uint64_t(t), tokens);
      float* x = w.x.data() + std::size_t(t) * nd;
      for (int i = 0; i < n; ++i)
        std::memcpy(x + std::size_t(i) * d, k.net->embed.data() + std::size_t(tokens[i]) * d,
                    sizeof(float) * std::size_t(d));
      if (k.positions)  // x_i += P[i], the network's learned position table
        for (std::size_t e = 0; e < nd; ++e) x[e] += k.net->pos[e];
      kernel::LayerMetrics& lm = w.metrics[t];
      lm = {};
      hidden_metrics(k, ms, x, lm);
      if (sums) accumulate(k, ms, k.layout->embedding_block(), false, S(t), A(t), lm, *sums);
      if (is_traced(t)) record_input(k, x, tokens, lm, trace_of(t));
    }
    for (int l = 0; l < k.layers; ++l) {
      if (cancel && l > 0 && cancel->load(std::memory_order_relaxed)) return false;
      const Network::Block& block = k.net->blocks[l];
      // h = gamma x + concat_h(softmax(mask(q_h k_h^T / sqrt(d_h))) v_h) W_O, q | k | v = Norm(x) W_QKV
      const std::size_t active = std::size_t(hi - lo) * n;
      normalize_rows(k, w.x.data() + r0, w.y.data() + r0, active);
      norm_affine(block.ln1_gain, block.ln1_bias, w.y.data() + r0, active, d);  // a trained network's ln_1
      eigen_gemm(w.y.data(), int(rows), d, block.wqkv.data(), 3 * d, w.qkv.data());
      add_bias(block.bqkv, w.qkv.data() + 3 * r0, active, 3 * d);
      for (int t = lo; t < hi; ++t) {
        attend(k, w.qkv.data() + 3 * std::size_t(t) * nd, hs, S(t), A(t), w.o.data() + std::size_t(t) * nd,
               w.metrics[t]);
        if (stages) add_head_stages(k, ss, l, hs, *sums);  // the scratch holds sample t's heads until the next
      }
      eigen_gemm(w.o.data(), int(rows), d, block.wo.data(), d, w.att.data());
      add_bias(block.bo, w.att.data() + r0, active, d);
      if (stages)  // before the MLP reuses w.att
        for (int t = lo; t < hi; ++t) {
          const std::size_t at = std::size_t(t) * nd;
          add_stage(k, ss, l, Stage::input, w.x.data() + at, *sums);
          add_stage(k, ss, l, Stage::normalized, w.y.data() + at, *sums);
          add_stage(k, ss, l, Stage::mix, w.o.data() + at, *sums);
          add_stage(k, ss, l, Stage::attention, w.att.data() + at, *sums);
        }
      for (std::size_t e = r0; e < r1; ++e) w.hres[e] = k.gamma * w.x[e] + w.att[e];
      auto layer_sums = [&](int t, const float* hidden) {
        hidden_metrics(k, ms, hidden, w.metrics[t]);
        if (sums) accumulate(k, ms, l, true, S(t), A(t), w.metrics[t], *sums);
      };
      if (k.attention_output)  // the attention sublayer's output, before the MLP reuses w.att
        for (int t = lo; t < hi; ++t) layer_sums(t, w.att.data() + std::size_t(t) * nd);
      // x' = h + GELU(Norm(h) W_1) W_2
      if (k.mlp) {
        normalize_rows(k, w.hres.data() + r0, w.z.data() + r0, active);
        norm_affine(block.ln2_gain, block.ln2_bias, w.z.data() + r0, active, d);
        eigen_gemm(w.z.data(), int(rows), d, block.w1.data(), 4 * d, w.u.data());
        add_bias(block.b1, w.u.data() + 4 * r0, active, 4 * d);
        if (k.net->activation == Activation::gelu_tanh) gelu_tanh_inplace(w.u.data() + 4 * r0, 4 * (r1 - r0));
        else gelu_inplace(w.u.data() + 4 * r0, 4 * (r1 - r0));
        eigen_gemm(w.u.data(), int(rows), 4 * d, block.w2.data(), d, w.att.data());
        add_bias(block.b2, w.att.data() + r0, active, d);
        for (std::size_t e = r0; e < r1; ++e) w.xn[e] = w.hres[e] + w.att[e];
      } else {
        std::copy(w.hres.begin() + std::ptrdiff_t(r0), w.hres.begin() + std::ptrdiff_t(r1),
                  w.xn.begin() + std::ptrdiff_t(r0));
      }
      if (stages)
        for (int t = lo; t < hi; ++t) {
          add_stage(k, ss, l, Stage::residual, w.hres.data() + std::size_t(t) * nd, *sums);
          add_stage(k, ss, l, Stage::mlp, w.xn.data() + std::size_t(t) * nd, *sums);
        }
      for (int t = lo; t < hi; ++t) {
        const float* x_out = w.xn.data() + std::size_t(t) * nd;
        if (!k.attention_output) layer_sums(t, x_out);
        if (is_traced(t))
          record_layer(k, w.y.data() + std::size_t(t) * nd, x_out, S(t), A(t), w.metrics[t], trace_of(t).layers[l]);
      }
      std::swap(w.x, w.xn);
    }
    if (sums) sums->count += hi - lo;
    s = base + std::uint64_t(hi);
  }
  return true;
}

}  // namespace maskscope::rw
