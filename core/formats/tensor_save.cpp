// Writing a run's traces as a tensor folder: the round trip of `maskscope-cli run --save-tensors`
// (tensor_analysis.hpp).
#include "core/formats/tensor_analysis.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <limits>

#include "core/formats/atomic_file.hpp"
#include "core/formats/npy.hpp"
#include "core/model/settings_text.hpp"

namespace maskscope {

namespace fs = std::filesystem;

std::uint64_t save_tensors_bytes(const Settings& s) {
  // Per sample: its trace (input, and per layer scores, per-head scores, weights, output: n x d or n x n each)
  // and its share of logits, weights and hidden, plus one array's file image while it is written.
  const std::uint64_t n = std::uint64_t(s.n), d = std::uint64_t(s.d), L = std::uint64_t(s.layers);
  const std::uint64_t H = s.random_weights() ? std::uint64_t(s.heads) : 1;
  return std::uint64_t(s.samples) * sizeof(float) * ((L + 1) * n * d * 3 + L * n * n * (4 * H + 2));
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
