// Real models' tensors in maskscope's metrics: a folder with manifest.json and NumPy arrays
//   logits  [P, L, H, T, T]  pre-softmax attention logits of P prompts (required)
//   weights [P, L, H, T, T]  attention weights (optional; else softmax of the logits under the mask)
//   hidden  [P, L+1, T, d]   hidden states, layer 0 the embeddings (optional)
// read through memory maps, and turned into a Snapshot by the same per-sample metric and
// accumulation code as the simulation (layer_sums.hpp): each prompt is one sample, so means are
// over prompts and standard errors over prompts.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "core/formats/npy.hpp"
#include "core/model/settings.hpp"
#include "core/model/trace.hpp"
#include "core/stats/snapshot.hpp"

namespace maskscope {

constexpr const char* kTensorFormat = "maskscope-tensors 1";

struct TensorSet {
  std::string folder;
  std::string model;                 // manifest "model" (may be empty)
  MaskKind mask = MaskKind::causal;  // manifest "mask": causal | bidirectional | window:W
  int window = 0;
  std::vector<std::string> prompts;  // manifest "prompts" (may be empty)
  std::unique_ptr<NpyArray> logits, weights, hidden;
  int P = 0, L = 0, H = 0, T = 0, d = 0;  // d = 0 without hidden states
  std::vector<int> layers;                // the layers to analyse, 1-based, ascending; empty = all L

  int analysed_layers() const { return layers.empty() ? L : int(layers.size()); }
  int source_layer(int k) const { return layers.empty() ? k + 1 : layers[std::size_t(k)]; }  // 1-based
};

// Restricts the analysis to some layers: "1,2,32" or ranges "1-4,30-32". Returns "" or what is
// wrong (with the valid range); `t` is unchanged on error.
std::string select_layers(TensorSet& t, const std::string& text);

// Opens and checks a folder: manifest, arrays, dtypes and shapes (nothing is read yet).
// Throws std::runtime_error naming the file, the array and what was expected.
TensorSet open_tensors(const std::string& folder);

// The settings under which a tensor set's snapshot is laid out: the random-weight family's layout
// (heads, embeddings), n = T, layers = the analysed layers, heads = H, d, the mask; samples = P.
// The snapshot's LayerStats::layer keeps each layer's number in the model.
Settings tensor_settings(const TensorSet& t);

// Bytes the analysis needs, about (sums, exact sums, moments and the snapshot).
std::uint64_t tensor_analysis_bytes(const TensorSet& t);

// Every metric of the simulation on the tensors. Without hidden states the cosines, norms and
// adjacency are NaN. Returns an empty snapshot (samples_done 0) if `cancel` became true.
Snapshot analyze_tensors(const TensorSet& t, const std::atomic<bool>* cancel = nullptr);

// Writes traces (SampleTrace, one per sample) of a run as a tensor folder with manifest.json:
// the round trip of `maskscope-cli run --save-tensors`. False with `error` on failure.
bool save_tensors(const std::string& folder, const Settings& s, const std::vector<SampleTrace>& traces,
                  std::string& error);

}  // namespace maskscope
