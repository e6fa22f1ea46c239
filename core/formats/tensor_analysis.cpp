// Opening, analysing and writing tensor folders (tensor_analysis.hpp).
#include "core/formats/tensor_analysis.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>

#include "core/formats/atomic_file.hpp"
#include "core/stats/exact_sums.hpp"
#include "core/kernel/layer_sums.hpp"
#include "core/formats/result_json.hpp"

namespace maskscope {

namespace fs = std::filesystem;

namespace {

// `where` is a file (empty for arrays in memory); messages quote a manifest's and a header's bytes: escaped.
[[noreturn]] void refuse(const std::string& where, const std::string& what) {
  throw std::runtime_error(escape_bytes(where.empty() ? what : where + ": " + what));
}

std::string shape_text(const std::vector<std::int64_t>& s) {
  std::string t = "[";
  for (std::size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

// The arrays' shapes against each other and maskscope's limits; `mask_where` names where the mask came from
// (the manifest; empty for arrays in memory).
void check_shapes(TensorSet& t, const std::string& mask_where) {
  const auto& ls = t.logits->shape();
  if (ls.size() != 5 || ls[3] != ls[4])
    refuse(t.logits->path(), "array 'logits' has shape " + shape_text(ls) + "; expected [P, L, H, T, T]");
  t.P = int(ls[0]);
  t.L = int(ls[1]);
  t.H = int(ls[2]);
  t.T = int(ls[3]);
  if (t.P < 1 || t.L < 1 || t.H < 1 || t.T < 1)
    refuse(t.logits->path(), "array 'logits' has an empty dimension: " + shape_text(ls));
  if (t.T > Limits::n_max)
    refuse(t.logits->path(), "array 'logits': T = " + std::to_string(t.T) + " tokens; maskscope analyses at most " +
                                 std::to_string(Limits::n_max) + " positions (export shorter prompts)");
  if (t.H > Limits::heads_max)
    refuse(t.logits->path(),
           "array 'logits': H = " + std::to_string(t.H) + " heads; at most " + std::to_string(Limits::heads_max));
  if (ls[1] > 1024 || ls[0] > (std::int64_t(1) << 31))
    refuse(t.logits->path(), "array 'logits' shape " + shape_text(ls) + " is too large");
  if (t.weights && t.weights->shape() != ls)
    refuse(t.weights->path(),
           "array 'weights' has shape " + shape_text(t.weights->shape()) + "; expected the logits' " + shape_text(ls));
  if (t.hidden) {
    const auto& hs = t.hidden->shape();
    if (hs.size() != 4 || hs[0] != ls[0] || hs[1] != ls[1] + 1 || hs[2] != ls[3] || hs[3] < 1)
      refuse(t.hidden->path(), "array 'hidden' has shape " + shape_text(hs) + "; expected [P, L+1, T, d] = [" +
                                   std::to_string(t.P) + ", " + std::to_string(t.L + 1) + ", " + std::to_string(t.T) +
                                   ", d]");
    if (hs[3] > (1 << 20)) refuse(t.hidden->path(), "array 'hidden': d = " + std::to_string(hs[3]) + " is too large");
    t.d = int(hs[3]);
  }
  if (t.mask == MaskKind::window && (t.window < 1 || t.window > t.T))
    refuse(mask_where, std::string(mask_where.empty() ? "mask" : "\"mask\"") + " window:" + std::to_string(t.window) +
                           " must have W in [1, T] = [1, " + std::to_string(t.T) + "]");
}

}  // namespace

TensorSet open_tensors(const std::string& folder) {
  TensorSet t;
  t.folder = folder;
  const std::string manifest_path = (fs::path(folder) / "manifest.json").string();
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) refuse(folder, "not a folder");
  std::ifstream in(manifest_path);
  if (!in) refuse(manifest_path, "missing (a tensor folder has manifest.json; see docs/tensors.md)");
  nlohmann::json m;
  try {
    m = nlohmann::json::parse(in);
  } catch (const std::exception& e) { refuse(manifest_path, std::string("not valid JSON: ") + e.what()); }
  if (!m.is_object()) refuse(manifest_path, "expected a JSON object");
  if (m.value("format", std::string()) != kTensorFormat)
    refuse(manifest_path, "\"format\" must be \"" + std::string(kTensorFormat) + "\"");
  try {
    t.model = m.value("model", std::string());
    Settings s;
    const std::string mask = m.value("mask", std::string("causal"));
    if (!parse_mask(mask, s)) refuse(manifest_path, "\"mask\" '" + mask + "'; valid: causal, bidirectional, window:W");
    t.mask = s.mask;
    t.window = s.window;
    if (m.contains("prompts") && !m["prompts"].is_null())
      for (const auto& p : m.at("prompts")) t.prompts.push_back(p.get<std::string>());
  } catch (const nlohmann::json::exception& e) { refuse(manifest_path, std::string("wrong type: ") + e.what()); }
  auto array = [&](const char* key, const char* fallback, bool required) -> std::unique_ptr<NpyArray> {
    std::string file = fallback;
    if (m.contains(key)) {
      if (m[key].is_null()) file.clear();
      else if (m[key].is_string()) file = m[key].get<std::string>();
      else refuse(manifest_path, std::string("\"") + key + "\" must be a file name or null");
    } else if (!required) {
      file.clear();
    }
    if (file.empty()) {
      if (required) refuse(manifest_path, std::string("\"") + key + "\" is required");
      return nullptr;
    }
    if (fs::path(file).is_absolute() || file.find("..") != std::string::npos)
      refuse(manifest_path, std::string("\"") + key + "\": '" + file + "' must be a file name inside the folder");
    return std::make_unique<NpyArray>((fs::path(folder) / file).string(), key);
  };
  t.logits = array("logits", "logits.npy", true);
  t.weights = array("weights", "weights.npy", false);
  t.hidden = array("hidden", "hidden.npy", false);
  check_shapes(t, manifest_path);
  return t;
}

TensorSet tensors_from_memory(const TensorMemory& logits, const TensorMemory* weights, const TensorMemory* hidden,
                              const std::string& mask) {
  TensorSet t;
  Settings s;
  if (!parse_mask(mask, s)) refuse("", "mask '" + mask + "'; valid: causal, bidirectional, window:W");
  t.mask = s.mask;
  t.window = s.window;
  t.logits = std::make_unique<NpyArray>(logits.data, logits.type, logits.shape, "logits");
  if (weights) t.weights = std::make_unique<NpyArray>(weights->data, weights->type, weights->shape, "weights");
  if (hidden) t.hidden = std::make_unique<NpyArray>(hidden->data, hidden->type, hidden->shape, "hidden");
  check_shapes(t, "");
  return t;
}

std::string select_layers(TensorSet& t, const std::string& text) {
  std::vector<int> chosen;
  std::size_t at = 0;
  const std::string valid = "; valid: layer numbers or ranges in [1, " + std::to_string(t.L) + "], e.g. 1,2,5-8";
  auto number = [&](std::size_t& i, int& v) {
    std::size_t j = i;
    while (j < text.size() && text[j] >= '0' && text[j] <= '9') ++j;
    if (j == i || j - i > 6) return false;
    v = std::stoi(text.substr(i, j - i));
    i = j;
    return true;
  };
  while (at < text.size()) {
    int a = 0, b = 0;
    if (!number(at, a)) return "'" + text + "' is not a list of layers" + valid;
    b = a;
    if (at < text.size() && text[at] == '-') {
      ++at;
      if (!number(at, b)) return "'" + text + "' is not a list of layers" + valid;
    }
    if (a < 1 || b > t.L || a > b)
      return "'" + text + "': layer " + std::to_string(a < 1 ? a : b) + " is out of range" + valid;
    for (int l = a; l <= b; ++l) chosen.push_back(l);
    if (at < text.size()) {
      if (text[at] != ',') return "'" + text + "' is not a list of layers" + valid;
      ++at;
      if (at == text.size()) return "'" + text + "' ends with a comma" + valid;
    }
  }
  if (chosen.empty()) return "no layers given" + valid;
  std::sort(chosen.begin(), chosen.end());
  if (std::adjacent_find(chosen.begin(), chosen.end()) != chosen.end())
    return "'" + text + "' names a layer twice" + valid;
  t.layers = std::move(chosen);
  return "";
}

Settings tensor_settings(const TensorSet& t) {
  Settings s;
  s.model = Model::random_weights;  // the layout with heads and embeddings (layer 0)
  s.n = t.T;
  s.layers = t.analysed_layers();
  s.heads = t.H;
  s.d = t.d > 0 ? t.d : t.H;
  s.mask = t.mask;
  s.window = t.window > 0 ? t.window : s.window;
  s.samples = t.P;
  s.seed = 0;
  s.gamma = 1.0;
  s.histograms = t.histograms;
  return s;
}

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

nlohmann::json tensor_config_json(const TensorSet& t, const NonFinite* left_out) {
  nlohmann::json c = {{"source", "tensors"},
                      {"folder", t.folder.empty() ? nlohmann::json(nullptr) : nlohmann::json(t.folder)},
                      {"model", t.model},
                      {"mask", mask_to_string(tensor_settings(t))},
                      {"prompts", t.P},
                      {"layers", t.L},
                      {"analysed_layers", t.analysed_layers()},
                      {"heads", t.H},
                      {"n", t.T},
                      {"d", t.d > 0 ? nlohmann::json(t.d) : nlohmann::json(nullptr)},
                      {"weights", t.weights ? "given" : "softmax of the logits"}};
  if (left_out && left_out->values > 0)
    c["left_out"] = {
        {"prompts", left_out->prompts}, {"nonfinite_values", left_out->values}, {"first", left_out->first}};
  return c;
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
};

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
      kernel::hidden_metrics(n, d, b.x.data(), b.inv_norm.data(), b.C.data(), b.norms.data(), lm);
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
        kernel::hidden_metrics(n, d, b.x.data(), b.inv_norm.data(), b.C.data(), b.norms.data(), lm);
      }
      kernel::accumulate_layer(la, k, true, b.S.data(), b.A.data(), b.s_mean.data(), b.a_mean.data(), b.C.data(),
                               b.inv_norm.data(), lm, sums);
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
  if (!hidden) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    auto blank = [&](LayerStats& ls) {
      ls.cosine_mean = ls.cosine_mean.all_nan();
      ls.cosine_se = ls.cosine_se.all_nan();
      std::fill(ls.norm_mean.begin(), ls.norm_mean.end(), nan);
      std::fill(ls.norm_se.begin(), ls.norm_se.end(), nan);
      ls.adjacency = ls.adjacency_se = ls.adjacency_ties = nan;
      ls.norm_adjacency = ls.norm_adjacency_se = ls.norm_adjacency_ties = nan;
    };
    for (auto& ls : snap.layers) blank(ls);
    snap.embeddings.clear();
  }
  return snap;
}

bool save_tensors(const std::string& folder, const Settings& s, const std::vector<SampleTrace>& traces,
                  std::string& error) {
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) {
    error = folder + ": cannot create (" + ec.message() + ")";
    return false;
  }
  if (traces.empty()) {
    error = "no samples to save";
    return false;
  }
  const int P = int(traces.size()), L = s.layers, n = s.n, H = s.random_weights() ? s.heads : 1;
  const int dim = traces.front().dim;
  const std::size_t nn = std::size_t(n) * n;
  std::vector<float> logits(std::size_t(P) * L * H * nn), weights(logits.size()),
      hidden(std::size_t(P) * (L + 1) * n * dim);
  for (int p = 0; p < P; ++p) {
    const SampleTrace& tr = traces[std::size_t(p)];
    std::copy(tr.input.begin(), tr.input.begin() + std::ptrdiff_t(std::size_t(n) * dim),
              hidden.begin() + std::ptrdiff_t(std::size_t(p) * (L + 1) * n * dim));
    for (int l = 0; l < L; ++l) {
      const LayerTrace& lt = tr.layers[std::size_t(l)];
      for (int h = 0; h < H; ++h) {
        const std::vector<float>& sh = H > 1 ? lt.head_scores[std::size_t(h)] : lt.scores;
        const std::size_t at = ((std::size_t(p) * L + l) * H + h) * nn;
        std::copy(sh.begin(), sh.end(), logits.begin() + std::ptrdiff_t(at));
      }
      if (H == 1)
        std::copy(lt.weights.begin(), lt.weights.end(),
                  weights.begin() + std::ptrdiff_t((std::size_t(p) * L + l) * nn));
      std::copy(lt.output.begin(), lt.output.begin() + std::ptrdiff_t(std::size_t(n) * dim),
                hidden.begin() + std::ptrdiff_t((std::size_t(p) * (L + 1) + l + 1) * n * dim));
    }
  }
  // Masked logits are -inf, as a model's masked logits (NaN in traces).
  for (float& v : logits)
    if (std::isnan(v)) v = -std::numeric_limits<float>::infinity();
  const fs::path dir(folder);
  if (!write_npy_f32((dir / "logits.npy").string(), {P, L, H, n, n}, logits.data(), error)) return false;
  // Per-head weights are not in the traces of multi-head runs: the analysis recomputes them (softmax).
  if (H == 1 && !write_npy_f32((dir / "weights.npy").string(), {P, L, 1, n, n}, weights.data(), error)) return false;
  if (!write_npy_f32((dir / "hidden.npy").string(), {P, L + 1, n, dim}, hidden.data(), error)) return false;
  nlohmann::json manifest = {
      {"format", kTensorFormat},
      {"model", "maskscope simulation: " + short_label(s)},
      {"mask", mask_to_string(s)},
      {"logits", "logits.npy"},
      {"weights", H == 1 ? nlohmann::json("weights.npy") : nlohmann::json(nullptr)},
      {"hidden", "hidden.npy"},
      {"prompts", nlohmann::json::array()},
      {"settings", settings_to_json(s)},
      {"note", dim == s.d ? "hidden states in R^d"
                          : "hidden states in the reduced input basis (" + std::to_string(dim) +
                                " coordinates: a rotation of R^d, so norms and cosines are exact)"}};
  return write_file_atomic((dir / "manifest.json").string(), manifest.dump(1) + "\n", error);
}

}  // namespace maskscope
