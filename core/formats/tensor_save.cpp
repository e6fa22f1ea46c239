// Writing a run's traces as a tensor folder: the round trip of `maskscope-cli run --save-tensors`
// (tensor_analysis.hpp).
#include "core/formats/tensor_analysis.hpp"

#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>

#include "core/formats/atomic_file.hpp"
#include "core/formats/npy.hpp"
#include "core/model/input_file.hpp"
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

std::string check_tensor_destination(const std::string& folder) {
  if (folder.empty()) return "needs a folder name";
  fs::path target(folder);
  if (target.filename().empty()) target = target.parent_path();  // "out/" names the folder "out"
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string name = "'" + printable(target.string(), 200) + "'";
  struct stat st {};
  if (::stat(parent.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return "the folder '" + printable(parent.string(), 200) + "' does not exist";
  if (::access(parent.c_str(), W_OK | X_OK) != 0)
    return "the folder '" + printable(parent.string(), 200) + "' is not writable (the tensors are written beside " +
           name + " and then take its place)";
  if (::lstat(target.c_str(), &st) != 0) {
    if (errno == ENOENT) return "";
    return name + " cannot be examined (" + std::strerror(errno) + ")";
  }
  if (S_ISLNK(st.st_mode)) return name + " is a symbolic link; give a new folder (an existing one is replaced whole)";
  if (!S_ISDIR(st.st_mode)) return name + " exists and is not a folder";
  // An existing folder is replaced whole: only an empty one, or a tensor folder a run of maskscope wrote.
  const std::string not_ours =
      ": it is not a tensor folder written by 'maskscope-cli run --save-tensors', so it is "
      "not replaced; give a new folder";
  std::error_code ec;
  bool manifest = false, empty = true;
  for (fs::directory_iterator it(target, ec), end; !ec && it != end; it.increment(ec)) {
    empty = false;
    const std::string entry = it->path().filename().string();
    if (entry != "manifest.json" && entry != "logits.npy" && entry != "weights.npy" && entry != "hidden.npy")
      return name + " holds '" + printable(entry) + "', which maskscope does not write" + not_ours;
    if (!it->is_regular_file(ec) || it->is_symlink(ec))
      return name + " holds '" + printable(entry) + "', which is not a regular file" + not_ours;
    manifest = manifest || entry == "manifest.json";
  }
  if (ec) return name + " cannot be read (" + ec.message() + ")";
  if (empty) return "";
  if (!manifest) return name + " holds no manifest.json" + not_ours;
  std::string text, error;
  if (!read_input_file((target / "manifest.json").string(), kMaxTextInputBytes, "its manifest", text, error))
    return name + ": " + error;
  const nlohmann::json m = nlohmann::json::parse(text, nullptr, false);
  if (m.is_discarded() || !m.is_object() || m.value("format", std::string()) != kTensorFormat || !m.contains("model") ||
      !m["model"].is_string() || m["model"].get<std::string>().rfind(kSimulationModelPrefix, 0) != 0)
    return name + "'s manifest.json is not one a maskscope run wrote" + not_ours;
  return "";
}

bool save_tensors(const std::string& folder, const Settings& s, const std::vector<SampleTrace>& traces,
                  std::string& error) {
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
  // The folder is written whole (write_folder_atomically): every file into a fresh temporary folder, the
  // manifest last, naming each array with its size and FNV-1a 64; then it takes DIR's place in one step. A
  // failure partway leaves DIR as it was, never new logits beside old hidden states.
  auto fill = [&](const std::string& tmp) -> std::string {
    const fs::path dir(tmp);
    nlohmann::json files = nlohmann::json::object();
    std::string why;
    auto write = [&](const char* file, const std::vector<std::int64_t>& shape, const float* data) {
      NpyWritten w;
      if (!write_npy_f32((dir / file).string(), shape, data, why, &w)) return false;
      char hex[17];
      std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(w.fnv1a));
      files[file] = {{"bytes", w.bytes}, {"fnv1a64", hex}};
      return true;
    };
    if (!write("logits.npy", {P, L, H, n, n}, logits.data())) return why;
    // Per-head weights are not in the traces of multi-head runs: the analysis recomputes them (softmax).
    if (H == 1 && !write("weights.npy", {P, L, 1, n, n}, weights.data())) return why;
    if (!write("hidden.npy", {P, L + 1, n, dim}, hidden.data())) return why;
    nlohmann::json manifest = {
        {"format", kTensorFormat},
        {"model", kSimulationModelPrefix + std::string(": ") + short_label(s)},
        {"mask", mask_to_string(s)},
        {"logits", "logits.npy"},
        {"weights", H == 1 ? nlohmann::json("weights.npy") : nlohmann::json(nullptr)},
        {"hidden", "hidden.npy"},
        {"files", std::move(files)},
        {"prompts", nlohmann::json::array()},
        {"settings", settings_to_json(s)},
        {"note", dim == s.d ? "hidden states in R^d"
                            : "hidden states in the reduced input basis (" + std::to_string(dim) +
                                  " coordinates: a rotation of R^d, so norms and cosines are exact)"}};
    if (!write_file_atomic((dir / "manifest.json").string(), manifest.dump(1) + "\n", why)) return why;
    return "";
  };
  if (std::string why = check_tensor_destination(folder); !why.empty()) {  // checked before the run too
    error = why;
    return false;
  }
  return write_folder_atomically(folder, fill, error);
}

}  // namespace maskscope
