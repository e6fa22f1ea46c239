// Opening and checking tensor folders and arrays in memory, and their layout as settings
// (tensor_analysis.hpp).
#include "core/formats/tensor_analysis.hpp"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "core/formats/result_json.hpp"
#include "core/model/checksum.hpp"
#include "core/model/input_file.hpp"

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
  for (const auto& [stage, name] : kStageNames) {
    const NpyArray* a = t.stages[std::size_t(stage)].get();
    if (!a) continue;
    const auto& ss = a->shape();
    if (ss.size() != 4 || ss[0] != ls[0] || ss[1] != ls[1] || ss[2] != ls[3] || ss[3] < 1 || ss[3] > (1 << 20))
      refuse(a->path(), "array 'stages." + std::string(name) + "' has shape " + shape_text(ss) +
                            "; expected [P, L, T, D] = [" + std::to_string(t.P) + ", " + std::to_string(t.L) + ", " +
                            std::to_string(t.T) + ", D] with D in [1, 2^20]");
  }
  if (t.mask == MaskKind::window && (t.window < 1 || t.window > t.T))
    refuse(mask_where, std::string(mask_where.empty() ? "mask" : "\"mask\"") + " window:" + std::to_string(t.window) +
                           " must have W in [1, T] = [1, " + std::to_string(t.T) + "]");
}

// A plain file name inside the folder (no path, no "..").
bool plain_name(const std::string& file) {
  return !file.empty() && file.find('/') == std::string::npos && file != "." && file != "..";
}

// The manifest's "files": {name: {"bytes": N, "fnv1a64": "16 hex digits"}} (the checksum optional: the
// exporter lists sizes only). Each file's size, and its checksum when listed, against the folder's: a
// folder whose writing failed partway, or with one array from another run, is refused. Returns the names.
std::vector<std::string> verify_files(const std::string& folder, const std::string& manifest_path,
                                      const nlohmann::json& files) {
  if (!files.is_object() || files.empty())
    refuse(manifest_path, "\"files\" must be an object {file name: {\"bytes\": N, \"fnv1a64\": \"hex\"}}");
  std::vector<std::string> names;
  std::vector<char> chunk(std::size_t(1) << 20);
  for (const auto& [file, entry] : files.items()) {
    if (!plain_name(file)) refuse(manifest_path, "\"files\": '" + file + "' must be a file name inside the folder");
    if (!entry.is_object() || !entry.contains("bytes") || !entry["bytes"].is_number_unsigned())
      refuse(manifest_path, "\"files\"." + file + " must be {\"bytes\": N} with an optional \"fnv1a64\"");
    std::uint64_t want_sum = 0;
    const bool summed = entry.contains("fnv1a64");
    if (summed) {
      const auto& hex = entry["fnv1a64"];
      if (!hex.is_string() || hex.get<std::string>().size() != 16 ||
          hex.get<std::string>().find_first_not_of("0123456789abcdef") != std::string::npos)
        refuse(manifest_path, "\"files\"." + file + ".fnv1a64 must be 16 lowercase hex digits");
      want_sum = std::stoull(hex.get<std::string>(), nullptr, 16);
    }
    const std::uint64_t want = entry["bytes"].get<std::uint64_t>();
    const std::string path = (fs::path(folder) / file).string();
    std::uint64_t size = 0;
    const int fd = open_input_file(path, kMaxTensorFileBytes, "the file '" + file + "' the manifest lists", size);
    if (size != want) {
      ::close(fd);
      refuse(path, std::to_string(size) + " bytes, but the manifest lists " + std::to_string(want) +
                       ": the folder is not as it was written (a write that failed partway, or a file replaced)");
    }
    std::uint64_t sum = kFnv1aOffset, read_bytes = 0;
    while (summed) {
      const ssize_t r = ::read(fd, chunk.data(), chunk.size());
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        const int e = errno;
        ::close(fd);
        refuse(path, std::string("cannot be read (") + std::strerror(e) + ")");
      }
      if (r == 0) break;
      sum = fnv1a64(chunk.data(), std::size_t(r), sum);
      read_bytes += std::uint64_t(r);
    }
    ::close(fd);
    if (summed && (read_bytes != want || sum != want_sum))
      refuse(path,
             "its FNV-1a checksum differs from the manifest's: the folder is not as it was written (a write "
             "that failed partway, or a file from another run)");
    names.push_back(file);
  }
  return names;
}

}  // namespace

TensorSet open_tensors(const std::string& folder) {
  TensorSet t;
  t.folder = folder;
  const std::string manifest_path = (fs::path(folder) / "manifest.json").string();
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) refuse(folder, "not a folder");
  // Read without blocking, a regular file of at most 16 MiB (input_file.hpp): a FIFO named manifest.json is refused.
  std::string text;
  try {
    text = read_input_file(manifest_path, kMaxTextInputBytes, "the manifest");
  } catch (const InputFileError& e) {
    if (!fs::exists(fs::symlink_status(manifest_path, ec)))
      refuse(manifest_path, "missing (a tensor folder has manifest.json; see docs/tensors.md)");
    throw std::runtime_error(escape_bytes(e.what()));
  }
  nlohmann::json m;
  try {
    m = nlohmann::json::parse(text);
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
  // Sizes and checksums: a folder a maskscope run wrote lists them (run --save-tensors); an exported one may.
  std::vector<std::string> listed;
  const bool simulated = t.model.rfind(kSimulationModelPrefix, 0) == 0;
  if (m.contains("files") && !m["files"].is_null()) listed = verify_files(folder, manifest_path, m["files"]);
  else if (simulated)
    refuse(manifest_path,
           "written by a maskscope run, but lists no \"files\" with their sizes and checksums: an "
           "older maskscope's folder, or an altered one; write it again with run --save-tensors");
  auto require_listed = [&](const std::string& key, const std::string& file) {
    if (m.contains("files") && !m["files"].is_null() && std::find(listed.begin(), listed.end(), file) == listed.end())
      refuse(manifest_path, "\"" + key + "\": '" + file + "' is not in \"files\" (every array's size is listed)");
  };
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
    require_listed(key, file);
    return std::make_unique<NpyArray>((fs::path(folder) / file).string(), key);
  };
  t.logits = array("logits", "logits.npy", true);
  t.weights = array("weights", "weights.npy", false);
  t.hidden = array("hidden", "hidden.npy", false);
  if (m.contains("stages") && !m["stages"].is_null()) {  // {name: file} of the forward pass's stages
    if (!m["stages"].is_object()) refuse(manifest_path, "\"stages\" must be an object {stage: file name}");
    for (const auto& [key, file] : m["stages"].items()) {
      const auto stage = enum_value(kStageNames, key);
      if (!stage || *stage == Stage::input)
        refuse(manifest_path, "\"stages\": unknown stage '" + key +
                                  "'; valid: normalized, query, key, mix, attention, residual, mlp (the input is "
                                  "'hidden')");
      if (!file.is_string()) refuse(manifest_path, "\"stages\"." + key + " must be a file name");
      const std::string f = file.get<std::string>();
      if (fs::path(f).is_absolute() || f.find("..") != std::string::npos)
        refuse(manifest_path, "\"stages\"." + key + ": '" + f + "' must be a file name inside the folder");
      require_listed("stages." + key, f);
      t.stages[std::size_t(*stage)] = std::make_unique<NpyArray>((fs::path(folder) / f).string(), "stages." + key);
    }
  }
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
  s.stage_grams = t.has_stages();
  return s;
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
  if (t.has_stages()) {
    nlohmann::json stages = nlohmann::json::array();
    for (const auto& [stage, name] : kStageNames)
      if (t.stages[std::size_t(stage)] || (stage == Stage::input && t.hidden)) stages.push_back(std::string(name));
    c["stages"] = std::move(stages);
  }
  if (left_out && left_out->values > 0)
    c["left_out"] = {
        {"prompts", left_out->prompts}, {"nonfinite_values", left_out->values}, {"first", left_out->first}};
  return c;
}

}  // namespace maskscope
