// Analysing tensor folders: every prompt's metrics through the simulation's per-layer code
// (layer_sums.hpp), the stage Gram matrices of the optional `stages` arrays, and the position probes
// (tensor_analysis.hpp).
#include "core/formats/tensor_analysis.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/stats/exact_sums.hpp"
#include "core/stats/metric_table.hpp"
#include "core/kernel/layer_sums.hpp"
#include "core/kernel/stage_grams.hpp"

namespace maskscope {

std::optional<ProbeTable> probe_tensors(const TensorSet& t, const ProbeRequest& r, int threads,
                                        const std::atomic<bool>* cancel) {
  if (!t.hidden) throw std::runtime_error("the position probes need the hidden states (array 'hidden')");
  if (r.train < 2 || r.test < 2 || r.train + r.test > t.P)
    throw std::runtime_error("the position probes need at least 2 training and 2 test prompts (" + std::to_string(t.P) +
                             " prompts)");
  const auto start = std::chrono::steady_clock::now();
  const int n = t.T, d = t.d, blocks = t.analysed_layers() + 1;
  ProbeCollector collector(n, d, blocks, r);
  std::vector<float> x(std::size_t(n) * d);
  for (std::int64_t p = 0; p < r.train + r.test; ++p) {
    if (cancel && cancel->load(std::memory_order_relaxed)) return std::nullopt;
    for (int k = 0; k < blocks; ++k) {
      const int l = k == 0 ? 0 : t.source_layer(k - 1);  // hidden layer l: 0 the embeddings
      t.hidden->read((std::size_t(p) * (t.L + 1) + std::size_t(l)) * n * d, std::size_t(n) * d, x.data());
      collector.add_sequence(p, k, x.data());
    }
  }
  const auto read = std::chrono::steady_clock::now();
  auto table = fit_probes(collector, r, threads, cancel);
  if (!table) return table;
  for (int k = 1; k < blocks; ++k) table->layers[std::size_t(k)].layer = t.source_layer(k - 1);
  table->collect_s = std::chrono::duration<double>(read - start).count();
  table->fit_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - read).count();
  return table;
}

std::uint64_t tensor_analysis_bytes(const TensorSet& t) {
  const AccumLayout L = accum_layout(tensor_settings(t));  // the snapshot's layout (mask, histograms)
  const std::uint64_t nn = std::uint64_t(t.T) * t.T;
  // BlockSums 16, exact 48 + 1, moments 16 bytes a value; snapshot maps (7 + 4 H per layer).
  return std::uint64_t(L.total()) * 81 +
         sizeof(double) * nn * std::uint64_t(t.analysed_layers() + 1) * (7 + 4 * std::uint64_t(t.H));
}

namespace {

struct Buffers {
  std::vector<float> S, A, s_mean, a_mean, x, C, inv_norm, norms;
  std::vector<float> rows, G, GC, g_inv;  // a stage's rows (T x D), its Gram matrix and cosines
  std::vector<double> squares;            // each token's squared norm, in double
};

// The hidden states' cosines, norms, adjacency and norm adjacency (kernel::hidden_metrics). A simulation's
// values go through the kernel's float code, so a round trip repeats the run bit for bit; but a model's
// finite value of 1e20 squares past float's range (3.4e38), and the kernel would take that token for a
// zero vector (norm 0, cosine 0). When any token's squared norm leaves [1e-30, 1e30] (or is zero next to
// such a token), norms and cosines are computed in double: dot products of floats cannot overflow there.
[[gnu::always_inline]] inline void tensor_hidden_metrics(int n, int d, Buffers& b, kernel::LayerMetrics& lm) {
  const float* x = b.x.data();
  b.squares.resize(std::size_t(n));
  bool in_float_range = true;
  for (int i = 0; i < n; ++i) {
    const float* xi = x + std::size_t(i) * d;
    double ss = 0.0;
    for (int k = 0; k < d; ++k) ss += double(xi[k]) * double(xi[k]);
    b.squares[std::size_t(i)] = ss;
    if (ss > 1e30 || (ss > 0.0 && ss < 1e-30)) in_float_range = false;
  }
  if (in_float_range) {
    kernel::hidden_metrics(n, d, x, b.inv_norm.data(), b.C.data(), b.norms.data(), lm);
    return;
  }
  float* C = b.C.data();
  for (int i = 0; i < n; ++i) {
    const double ss = b.squares[std::size_t(i)];
    b.inv_norm[std::size_t(i)] = ss > 0.0 ? float(1.0 / std::sqrt(ss)) : 0.0f;
  }
  for (int i = 0; i < n; ++i) {
    const float* xi = x + std::size_t(i) * d;
    float* Ci = C + std::size_t(i) * n;
    for (int j = 0; j < i; ++j) {
      const double sj = b.squares[std::size_t(j)], si = b.squares[std::size_t(i)];
      if (si <= 0.0 || sj <= 0.0) {
        Ci[j] = 0.0f;
        continue;
      }
      const float* xj = x + std::size_t(j) * d;
      double dot = 0.0;
      for (int k = 0; k < d; ++k) dot += double(xi[k]) * double(xj[k]);
      Ci[j] = float(std::clamp(dot / (std::sqrt(si) * std::sqrt(sj)), -1.0, 1.0));
    }
    Ci[i] = b.squares[std::size_t(i)] > 0.0 ? 1.0f : 0.0f;
  }
  lm.adjacency = kernel::adjacency_of(n, [&](int r) { return C + std::size_t(r) * n; });
  lm.norm_adjacency = kernel::norm_adjacency_of(n, b.inv_norm.data(), b.norms.data());
}

// Prompt p's stage Gram matrices of model layer l (0-based), analysed as layer k (docs/model.md section 12):
// the input is hidden layer l (the embeddings for l = 0), the other stages their arrays.
[[gnu::always_inline]] inline void add_tensor_stages(const TensorSet& t, const AccumLayout& layout, int p, int l, int k,
                                                     Buffers& b, BlockSums& sums) {
  const int n = t.T;
  const kernel::StageScratch ss{b.G.data(), b.GC.data(), b.g_inv.data()};
  auto add = [&](Stage st, const NpyArray& a, std::size_t at, int width) {
    b.rows.resize(std::size_t(n) * std::size_t(width));
    a.read(at, b.rows.size(), b.rows.data());
    kernel::add_stage(layout, k, int(st), b.rows.data(), width, 1, ss, sums.sum.data(), sums.sumsq.data());
  };
  if (t.hidden) add(Stage::input, *t.hidden, (std::size_t(p) * (t.L + 1) + std::size_t(l)) * n * t.d, t.d);
  for (int st = 0; st < kStageCount; ++st)
    if (const NpyArray* a = t.stages[std::size_t(st)].get()) {
      const int width = int(a->shape()[3]);
      add(Stage(st), *a, (std::size_t(p) * t.L + std::size_t(l)) * n * std::size_t(width), width);
    }
}

// Every prompt's metrics into `sums`, with the kernel's clones (kernel_steps.hpp) so the arithmetic
// (FMA contraction included) is the simulation's. False if cancelled.
MASKSCOPE_KERNEL_CLONES
bool accumulate_prompts(const TensorSet& t, const kernel::LayerArgs& la, const KeyRanges& keys,
                        const AccumLayout& layout, Buffers& b, BlockSums& sums, const std::atomic<bool>* cancel,
                        const std::vector<char>& left_out, std::atomic<std::int64_t>* done) {
  const int n = t.T, H = t.H, d = std::max(1, t.d);
  const std::size_t nn = std::size_t(n) * n;
  const bool hidden = t.hidden != nullptr;
  for (int p = 0; p < t.P; ++p) {
    if (cancel && cancel->load(std::memory_order_relaxed)) return false;
    if (!left_out.empty() && left_out[std::size_t(p)]) continue;  // holds non-finite values (allow_nonfinite)
    kernel::LayerMetrics lm{};
    if (hidden) {  // layer 0: the embeddings
      t.hidden->read(std::size_t(p) * (t.L + 1) * n * d, std::size_t(n) * d, b.x.data());
      tensor_hidden_metrics(n, d, b, lm);
      kernel::accumulate_layer(la, layout.embedding_block(), false, b.S.data(), b.A.data(), b.s_mean.data(),
                               b.a_mean.data(), b.C.data(), b.inv_norm.data(), lm, sums);
    }
    for (int k = 0; k < t.analysed_layers(); ++k) {
      const int l = t.source_layer(k) - 1;  // the model's layer, 0-based
      const std::size_t at = (std::size_t(p) * t.L + l) * H * nn;
      t.logits->read(at, H * nn, b.S.data());
      if (t.weights) t.weights->read(at, H * nn, b.A.data());
      kernel::begin_heads(lm);
      for (int h = 0; h < H; ++h) {
        float* Sh = b.S.data() + std::size_t(h) * nn;
        float* Ah = b.A.data() + std::size_t(h) * nn;
        if (!t.weights) kernel::softmax(n, keys.lo.data(), keys.hi.data(), Sh, Ah);  // the simulation's softmax
        kernel::head_metrics(la, h, Sh, Ah, lm);
      }
      if (hidden) {
        t.hidden->read((std::size_t(p) * (t.L + 1) + l + 1) * n * d, std::size_t(n) * d, b.x.data());
        tensor_hidden_metrics(n, d, b, lm);
      }
      kernel::accumulate_layer(la, k, true, b.S.data(), b.A.data(), b.s_mean.data(), b.a_mean.data(), b.C.data(),
                               b.inv_norm.data(), lm, sums);
      if (layout.stages) add_tensor_stages(t, layout, p, l, k, b, sums);
    }
    sums.count += 1;
    if (done) done->store(sums.count, std::memory_order_relaxed);
  }
  return true;
}

}  // namespace

Snapshot analyze_tensors(const TensorSet& t, const std::atomic<bool>* cancel, AnalysisReport* report) {
  // A model that produced NaN is a finding: refused, or its prompts left out when allowed (find_nonfinite).
  NonFinite bad = find_nonfinite(t, cancel);
  if (cancel && cancel->load()) return Snapshot{};
  if (bad.values > 0 && !t.allow_nonfinite)
    throw std::runtime_error(nonfinite_text(bad, t.P) +
                             ". A model that produced them is a finding: look at that prompt and layer, or leave out "
                             "the prompts holding them (--allow-nonfinite; Python: allow_nonfinite=True)");
  if (bad.prompts >= t.P)
    throw std::runtime_error(nonfinite_text(bad, t.P) + ": every prompt holds one, so none is left to analyse");
  if (std::string why = weights_sum_error(t, bad.in_prompt); !why.empty()) throw std::runtime_error(why);
  Settings s = tensor_settings(t);
  s.samples = t.P - bad.prompts;
  const KeyRanges keys = key_ranges(s);
  const AccumLayout layout = accum_layout(s);  // make_snapshot's: the mask's packing and the histograms
  const int n = t.T, H = t.H, d = std::max(1, t.d);
  const std::size_t nn = std::size_t(n) * n, slack = 8;
  Buffers b;
  b.S.assign(H * nn + slack, 0.0f);
  b.A.assign(H * nn + slack, 0.0f);
  b.s_mean.assign(nn + slack, 0.0f);
  b.a_mean.assign(nn + slack, 0.0f);
  b.x.assign(std::size_t(n) * d + slack, 0.0f);
  b.C.assign(nn + slack, 0.0f);
  b.inv_norm.assign(n + slack, 0.0f);
  b.norms.assign(n + slack, 0.0f);
  if (layout.stages) {
    b.G.assign(nn + slack, 0.0f);
    b.GC.assign(nn + slack, 0.0f);
    b.g_inv.assign(std::size_t(n), 0.0f);
  }
  const kernel::LayerArgs la{n,      H, keys.lo.data(), keys.hi.data(), keys.recency_triples, keys.slope_coef.data(),
                             &layout};
  BlockSums sums(layout.total());
  const bool hidden = t.hidden != nullptr;
  const bool done =
      accumulate_prompts(t, la, keys, layout, b, sums, cancel, bad.in_prompt, report ? &report->prompts_done : nullptr);
  if (report) report->nonfinite = std::move(bad);
  if (!done) return Snapshot{};
  // The same path from sums to numbers as a run: one exact segment, moments, snapshot.
  ExactSums exact(layout.total());
  exact.add(sums);
  RunMoments m(layout.total());
  exact.moments(m, 0);
  Snapshot snap = make_snapshot(s, m, keys);
  snap.finished = true;
  for (int k = 0; k < t.analysed_layers(); ++k) snap.layers[std::size_t(k)].layer = t.source_layer(k);
  // Stages without a source (no array, or no hidden states for the input): no map, not zeros.
  for (LayerStats& ls : snap.layers)
    for (int st = 0; st < kStageCount; ++st)
      if (st == int(Stage::input) ? !hidden : !t.stages[std::size_t(st)]) ls.stages[std::size_t(st)] = StageGram{};
  if (!hidden) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    auto blank = [&](LayerStats& ls) {
      ls.cosine_mean = ls.cosine_mean.all_nan();
      ls.cosine_se = ls.cosine_se.all_nan();
      std::fill(ls.norm_mean.begin(), ls.norm_mean.end(), nan);
      std::fill(ls.norm_se.begin(), ls.norm_se.end(), nan);
      for (const MetricInfo& metric : metric_table())  // those of the hidden states: the embeddings' metrics
        if (metric.embeddings) metric.of(ls) = {nan, nan, nan, metric.of(ls).samples};
    };
    for (auto& ls : snap.layers) blank(ls);
    snap.embeddings.clear();
  }
  return snap;
}

}  // namespace maskscope
