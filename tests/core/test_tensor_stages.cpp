// A tensor folder's optional `stages` arrays (docs/tensors.md): their Gram matrices against a direct
// computation, the input stage from `hidden`, absent stages without maps, and what the manifest refuses.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/formats/npy.hpp"
#include "core/formats/tensor_analysis.hpp"

using namespace maskscope;
namespace fs = std::filesystem;

namespace {

// Prompts, layers, heads, tokens (k: other test files of a unity batch have their own P, L, H, T).
constexpr int kP = 5, kL = 2, kH = 1, kT = 6, d = 8, Dq = 12;

fs::path folder_with_stages(const std::string& name, const nlohmann::json& stages) {
  const fs::path dir = fs::temp_directory_path() / ("maskscope-tensor-stages-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::mt19937 gen(3);
  std::normal_distribution<float> normal;
  auto fill = [&](std::size_t count) {
    std::vector<float> v(count);
    for (float& x : v) x = normal(gen);
    return v;
  };
  std::string error;
  const std::vector<float> logits = fill(std::size_t(kP) * kL * kH * kT * kT);
  REQUIRE(write_npy_f32((dir / "logits.npy").string(), {kP, kL, kH, kT, kT}, logits.data(), error));
  const std::vector<float> hidden = fill(std::size_t(kP) * (kL + 1) * kT * d);
  REQUIRE(write_npy_f32((dir / "hidden.npy").string(), {kP, kL + 1, kT, d}, hidden.data(), error));
  const std::vector<float> query = fill(std::size_t(kP) * kL * kT * Dq);
  REQUIRE(write_npy_f32((dir / "q.npy").string(), {kP, kL, kT, Dq}, query.data(), error));
  nlohmann::json m = {{"format", kTensorFormat}, {"model", "synthetic"},   {"mask", "causal"},
                      {"logits", "logits.npy"},  {"hidden", "hidden.npy"}, {"stages", stages}};
  std::ofstream(dir / "manifest.json") << m.dump();
  return dir;
}

// Rows [T, D] of prompt p, layer l of an array [P, layers, T, D].
std::vector<float> rows_of(const NpyArray& a, int p, int l) {
  const std::size_t T_ = std::size_t(a.shape()[2]), D_ = std::size_t(a.shape()[3]);
  std::vector<float> v(T_ * D_);
  a.read((std::size_t(p) * std::size_t(a.shape()[1]) + std::size_t(l)) * T_ * D_, v.size(), v.data());
  return v;
}

}  // namespace

TEST_CASE("tensor stages: each stage's Gram matrices are the mean over prompts of its rows' inner products") {
  const fs::path dir = folder_with_stages("ok", {{"query", "q.npy"}});
  TensorSet t = open_tensors(dir.string());
  REQUIRE(t.has_stages());
  const Snapshot snap = analyze_tensors(t);
  REQUIRE(snap.samples_done == kP);
  CHECK(tensor_config_json(t)["stages"] == nlohmann::json::array({"input", "query"}));
  for (int l = 0; l < kL; ++l) {
    const LayerStats& ls = snap.layers[std::size_t(l)];
    for (Stage st : {Stage::input, Stage::query}) {
      const StageGram& g = ls.stages[std::size_t(st)];
      REQUIRE_FALSE(g.gram_mean.empty());
      for (int i = 0; i < kT; ++i)
        for (int j = 0; j < kT; ++j) {
          double sum = 0, cos_sum = 0, sq = 0;
          for (int p = 0; p < kP; ++p) {
            // The input of layer l + 1 is hidden layer l; the query its array's layer l.
            const std::vector<float> r =
                st == Stage::input ? rows_of(*t.hidden, p, l) : rows_of(*t.stages[std::size_t(Stage::query)], p, l);
            const int D = st == Stage::input ? d : Dq;
            double dot = 0, ni = 0, nj = 0;
            for (int e = 0; e < D; ++e) {
              dot += double(r[std::size_t(i * D + e)]) * r[std::size_t(j * D + e)];
              ni += double(r[std::size_t(i * D + e)]) * r[std::size_t(i * D + e)];
              nj += double(r[std::size_t(j * D + e)]) * r[std::size_t(j * D + e)];
            }
            sum += dot;
            sq += dot * dot;
            cos_sum += dot / std::sqrt(ni * nj);
          }
          const double mean = sum / kP, se = std::sqrt((sq - kP * mean * mean) / (kP - 1) / kP);
          CAPTURE(i);
          CAPTURE(j);
          CHECK(g.gram_mean(i, j) == doctest::Approx(mean).epsilon(1e-5));
          CHECK(g.gram_se(i, j) == doctest::Approx(se).epsilon(1e-3));
          CHECK(g.cosine_mean(i, j) == doctest::Approx(cos_sum / kP).epsilon(1e-5));
        }
    }
    // Stages the folder lacks have no map (not zeros).
    CHECK(ls.stages[std::size_t(Stage::key)].gram_mean.empty());
    CHECK(ls.stages[std::size_t(Stage::mlp)].gram_mean.empty());
  }
  // A folder without stages has none, and no stage sums at all.
  std::ofstream(dir / "manifest.json") << nlohmann::json{{"format", kTensorFormat}, {"logits", "logits.npy"}}.dump();
  const TensorSet plain = open_tensors(dir.string());
  CHECK_FALSE(plain.has_stages());
  CHECK_FALSE(tensor_settings(plain).stage_grams);
}

TEST_CASE("tensor stages: an unknown stage, the input as a stage, a wrong shape and a path outside are refused") {
  auto refusal = [](const fs::path& dir) -> std::string {
    try {
      open_tensors(dir.string());
    } catch (const std::runtime_error& e) { return e.what(); }
    return "";
  };
  CHECK(refusal(folder_with_stages("unknown", {{"values", "q.npy"}})).find("unknown stage 'values'") !=
        std::string::npos);
  CHECK(refusal(folder_with_stages("input", {{"input", "q.npy"}})).find("the input is 'hidden'") != std::string::npos);
  CHECK(refusal(folder_with_stages("outside", {{"query", "../q.npy"}})).find("inside the folder") != std::string::npos);
  const fs::path shape = folder_with_stages("shape", {{"key", "logits.npy"}});
  CHECK(refusal(shape).find("array 'stages.key' has shape [5, 2, 1, 6, 6]; expected [P, L, T, D]") !=
        std::string::npos);
}
