// Real models' tensors in maskscope's metrics: a folder with manifest.json and NumPy arrays
//   logits  [P, L, H, T, T]  pre-softmax attention logits of P prompts (required)
//   weights [P, L, H, T, T]  attention weights (optional; else softmax of the logits under the mask)
//   hidden  [P, L+1, T, d]   hidden states, layer 0 the embeddings (optional)
//   stages  {name: file}     optional [P, L, T, D] arrays of the forward pass's stages (stages.hpp): their
//                            Gram matrices, as Settings::stage_grams gives a run's (docs/tensors.md)
// read through memory maps, and turned into a Snapshot by the same per-sample metric and
// accumulation code as the simulation (layer_sums.hpp): each prompt is one sample, so means are
// over prompts and standard errors over prompts. The same analysis reads arrays already in memory
// (the Python module's NumPy arrays, tensors_from_memory). Non-finite values are refused before any
// metric is computed (find_nonfinite), unless the caller allows them: then the prompts holding them are
// left out.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/formats/npy.hpp"
#include "core/model/settings.hpp"
#include "core/model/trace.hpp"
#include "core/stats/position_probe.hpp"
#include "core/stats/snapshot.hpp"

namespace maskscope {

constexpr const char* kTensorFormat = "maskscope-tensors 1";
// The manifest's "model" of a folder `run --save-tensors` wrote: "maskscope simulation: <settings>".
constexpr const char* kSimulationModelPrefix = "maskscope simulation";

struct TensorSet {
  std::string folder;
  std::string model;                 // manifest "model" (may be empty)
  MaskKind mask = MaskKind::causal;  // manifest "mask": causal | bidirectional | window:W
  int window = 0;
  std::vector<std::string> prompts;  // manifest "prompts" (may be empty)
  std::unique_ptr<NpyArray> logits, weights, hidden;
  // The manifest's "stages", indexed by Stage: [P, L, T, D_s] each (any D_s); Stage::input has none (it is
  // `hidden`'s layer l - 1). Any of them turns the stage Gram matrices on.
  std::array<std::unique_ptr<NpyArray>, kStageCount> stages;
  int P = 0, L = 0, H = 0, T = 0, d = 0;  // d = 0 without hidden states
  std::vector<int> layers;                // the layers to analyse, 1-based, ascending; empty = all L
  bool allow_nonfinite = false;           // leave out the prompts holding non-finite values instead of refusing
  int histograms = 0;                     // Settings::histograms (needs hidden states)

  bool has_stages() const {
    for (const auto& a : stages)
      if (a) return true;
    return false;
  }
  int analysed_layers() const { return layers.empty() ? L : int(layers.size()); }
  int source_layer(int k) const { return layers.empty() ? k + 1 : layers[std::size_t(k)]; }  // 1-based
};

// Arrays in memory, C order, native little-endian: `data` holds the product of `shape` values of `type`.
struct TensorMemory {
  const void* data = nullptr;
  NpyType type = NpyType::f32;
  std::vector<std::int64_t> shape;
};

// Restricts the analysis to some layers: "1,2,32" or ranges "1-4,30-32". Returns "" or what is
// wrong (with the valid range); `t` is unchanged on error.
std::string select_layers(TensorSet& t, const std::string& text);

// Opens and checks a folder: manifest, arrays, dtypes and shapes (nothing is read yet).
// Throws std::runtime_error naming the file, the array and what was expected.
TensorSet open_tensors(const std::string& folder);

// The same checks as open_tensors (shapes, limits, the mask) on arrays in memory, which the caller keeps
// alive and unchanged while the set is used; `weights` and `hidden` may be null. `mask` as a manifest's
// ("causal", "bidirectional", "window:W"). Throws std::runtime_error naming the array and what was expected.
TensorSet tensors_from_memory(const TensorMemory& logits, const TensorMemory* weights, const TensorMemory* hidden,
                              const std::string& mask);

// The settings under which a tensor set's snapshot is laid out: the random-weight family's layout
// (heads, embeddings), n = T, layers = the analysed layers, heads = H, d, the mask; samples = P.
// The snapshot's LayerStats::layer keeps each layer's number in the model.
Settings tensor_settings(const TensorSet& t);

// Bytes the analysis needs, about (sums, exact sums, moments and the snapshot).
std::uint64_t tensor_analysis_bytes(const TensorSet& t);

// The values a model must not have produced, in the cells the analysis reads (every prompt, the analysed
// layers, hidden layer 0): NaN anywhere, +inf or -inf in weights and hidden states, +inf in logits (-inf
// is how a model masks a logit, and what the softmax gives weight 0).
struct NonFinite {
  std::uint64_t values = 0, nan = 0;  // refused values, and how many of them are NaN
  std::int64_t prompts = 0;           // prompts holding one or more
  std::vector<char> in_prompt;        // per prompt: holds one (P entries; empty when values is 0)
  std::string first;                  // the first one's place, e.g. "logits[3, 1, 0, 5, 2] = NaN (prompt 3, ...)"
};
// Every refused value of the analysed cells; an empty result if `cancel` became true. A -inf logit counts
// only at a key the mask leaves visible (a row of them would be NaN weights; one turns the logits' mean NaN).
NonFinite find_nonfinite(const TensorSet& t, const std::atomic<bool>* cancel = nullptr);
// "17 non-finite values (12 NaN, 5 infinite) in 2 of 8 prompts; the first: logits[...] = NaN (prompt 3, ...)".
std::string nonfinite_text(const NonFinite& f, int prompts);

// "" when the given weights (if any) of every analysed row sum to 1 over the keys the mask leaves visible,
// within weights_sum_tolerance (1e-3; 4e-3 for float16 arrays, 3e-2 for bfloat16); else the first row that
// does not (array, prompt, layer, head, row, its sum). Prompts marked in `left_out` are skipped. analyze_tensors
// refuses them.
std::string weights_sum_error(const TensorSet& t, const std::vector<char>& left_out = {});
double weights_sum_tolerance(NpyType type);

// What an analysis reports while and after it runs.
struct AnalysisReport {
  std::atomic<std::int64_t> prompts_done{0};  // prompts accumulated so far (progress, read from any thread)
  NonFinite nonfinite;                        // the refused values (left out when allow_nonfinite)
};

// Every metric of the simulation on the tensors. Without hidden states the cosines, norms and
// adjacency are NaN. Returns an empty snapshot (samples_done 0) if `cancel` became true. Throws
// std::runtime_error on non-finite values (nonfinite_text and how to go on) unless t.allow_nonfinite, which
// leaves out the prompts holding them (throwing only if that leaves none); `report` (optional) says which.
Snapshot analyze_tensors(const TensorSet& t, const std::atomic<bool>* cancel = nullptr,
                         AnalysisReport* report = nullptr);

// Zuo et al.'s position probes (position_probe.hpp) on the hidden states: prompts 0 .. r.train-1 train,
// the next r.test test (r.train + r.test <= P; needs hidden). One entry per analysed layer and layer 0,
// each with its number in the model. nullopt if cancelled.
std::optional<ProbeTable> probe_tensors(const TensorSet& t, const ProbeRequest& r, int threads,
                                        const std::atomic<bool>* cancel = nullptr);

// The "config" of `maskscope-cli analyze`'s JSON (and of the Python module's analyze): source, folder,
// model, mask, prompts, layers, analysed_layers, heads, n, d, weights; `left_out` adds the prompts left out.
nlohmann::json tensor_config_json(const TensorSet& t, const NonFinite* left_out = nullptr);

// Bytes save_tensors needs for a run of `s` (s.samples traces and the arrays written from them), about.
std::uint64_t save_tensors_bytes(const Settings& s);

// "" when `folder` may receive a run's tensors: it does not exist (its parent folder does and is writable),
// or it is a real folder (not a link) that is empty or holds only what save_tensors writes, with a manifest
// a maskscope run wrote. Otherwise why not. `run --save-tensors` checks it before computing.
std::string check_tensor_destination(const std::string& folder);

// Writes traces (SampleTrace, one per sample) of a run as a tensor folder with manifest.json:
// the round trip of `maskscope-cli run --save-tensors`. The folder is written whole (a failure leaves it
// as it was), its manifest lists every array with its size and FNV-1a 64 ("files"), and open_tensors
// verifies them. False with `error` on failure.
bool save_tensors(const std::string& folder, const Settings& s, const std::vector<SampleTrace>& traces,
                  std::string& error);

}  // namespace maskscope
