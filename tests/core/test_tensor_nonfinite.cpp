// Non-finite tensors (tensor_analysis.hpp): NaN and infinities are refused with their count and the first
// one's place; allowed, the prompts holding them are left out and the rest give the numbers of a set without
// them, bit for bit. Arrays in memory read as the same folder would; file bytes in messages are escaped.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <stdexcept>

#include "core/formats/npy.hpp"
#include "core/formats/result_json.hpp"
#include "core/formats/tensor_analysis.hpp"

using namespace maskscope;
namespace fs = std::filesystem;

namespace {

constexpr int P = 5, L = 2, H = 2, T = 6, D = 3;
constexpr float kInf = std::numeric_limits<float>::infinity();

struct Arrays {
  std::vector<float> logits, hidden;
  std::vector<std::int64_t> logits_shape{P, L, H, T, T}, hidden_shape{P, L + 1, T, D};
};

// Causal logits (-inf above the diagonal, as a model masks them) and hidden states, from a fixed seed.
Arrays make_arrays(int prompts = P) {
  Arrays a;
  a.logits_shape[0] = a.hidden_shape[0] = prompts;
  std::mt19937 rng(11);
  std::normal_distribution<float> noise(0.0f, 1.0f);
  a.logits.resize(std::size_t(prompts) * L * H * T * T);
  for (std::size_t e = 0; e < a.logits.size(); ++e) {
    const std::size_t i = (e / T) % T, j = e % T;
    a.logits[e] = j <= i ? noise(rng) : -kInf;
  }
  a.hidden.resize(std::size_t(prompts) * (L + 1) * T * D);
  for (float& v : a.hidden) v = noise(rng);
  return a;
}

TensorSet memory_set(const Arrays& a) {
  const TensorMemory logits{a.logits.data(), NpyType::f32, a.logits_shape};
  const TensorMemory hidden{a.hidden.data(), NpyType::f32, a.hidden_shape};
  return tensors_from_memory(logits, nullptr, &hidden, "causal");
}

std::size_t logit_at(int p, int l, int h, int i, int j) { return (((std::size_t(p) * L + l) * H + h) * T + i) * T + j; }

std::string refusal(const TensorSet& t) {
  try {
    analyze_tensors(t);
  } catch (const std::runtime_error& e) { return e.what(); }
  return "";
}

}  // namespace

TEST_CASE("non-finite: NaN and +inf are refused with the count and the first one's place; -inf in logits is a mask") {
  Arrays a = make_arrays();
  CHECK(find_nonfinite(memory_set(a)).values == 0);  // the masked -inf logits are fine
  CHECK(refusal(memory_set(a)).empty());
  a.logits[logit_at(3, 1, 0, 5, 2)] = std::nanf("");
  a.logits[logit_at(3, 1, 1, 4, 4)] = kInf;
  a.logits[logit_at(4, 0, 0, 1, 5)] = std::nanf("");                   // a masked cell: NaN is refused anywhere
  a.hidden[((std::size_t(1) * (L + 1) + 0) * T + 2) * D + 1] = -kInf;  // -inf in hidden states is refused
  const NonFinite f = find_nonfinite(memory_set(a));
  CHECK(f.values == 4);
  CHECK(f.nan == 2);
  CHECK(f.prompts == 3);
  REQUIRE(f.in_prompt.size() == std::size_t(P));
  CHECK(f.in_prompt == std::vector<char>{0, 1, 0, 1, 1});
  CHECK(f.first == "hidden[1, 0, 2, 1] = -inf (prompt 1, layer 0 = the embeddings, token 2, coordinate 1)");
  const std::string why = refusal(memory_set(a));
  INFO(why);
  CHECK(why.find("4 non-finite values (2 NaN, 2 infinite) in 3 of 5 prompts") != std::string::npos);
  CHECK(why.find("--allow-nonfinite") != std::string::npos);
  a.hidden[((std::size_t(1) * (L + 1) + 0) * T + 2) * D + 1] = 0.5f;
  CHECK(find_nonfinite(memory_set(a)).first == "logits[3, 1, 0, 5, 2] = NaN (prompt 3, layer 2, head 1, i 5, j 2)");
}

TEST_CASE("non-finite: only the analysed layers are scanned; a float64 past float32's range counts as +inf") {
  Arrays a = make_arrays();
  a.logits[logit_at(2, 1, 1, 3, 0)] = std::nanf("");  // layer 2
  TensorSet t = memory_set(a);
  CHECK(find_nonfinite(t).values == 1);
  REQUIRE(select_layers(t, "1").empty());
  CHECK(find_nonfinite(t).values == 0);
  std::vector<double> big(a.logits.begin(), a.logits.end());
  big[logit_at(0, 0, 0, 2, 1)] = 1e300;
  const TensorMemory logits{big.data(), NpyType::f64, a.logits_shape};
  TensorSet t64 = tensors_from_memory(logits, nullptr, nullptr, "causal");
  REQUIRE(select_layers(t64, "1").empty());
  CHECK(find_nonfinite(t64).first.find("logits[0, 0, 0, 2, 1] = +inf") == 0);
}

TEST_CASE(
    "non-finite allowed: the prompts holding them are left out, the rest give the numbers of a set without them") {
  Arrays a = make_arrays();
  a.logits[logit_at(1, 0, 1, 3, 1)] = std::nanf("");
  a.hidden[((std::size_t(3) * (L + 1) + 2) * T + 0) * D + 0] = kInf;
  TensorSet t = memory_set(a);
  t.allow_nonfinite = true;
  AnalysisReport report;
  const Snapshot snap = analyze_tensors(t, nullptr, &report);
  CHECK(report.nonfinite.prompts == 2);
  CHECK(report.nonfinite.values == 2);
  CHECK(report.prompts_done.load() == P - 2);
  CHECK(snap.samples_done == P - 2);
  // The same arrays without prompts 1 and 3.
  Arrays kept = make_arrays(P - 2);
  const std::size_t lp = std::size_t(L) * H * T * T, hp = std::size_t(L + 1) * T * D;
  int q = 0;
  for (int p : {0, 2, 4}) {
    std::copy_n(a.logits.begin() + std::ptrdiff_t(p * lp), lp, kept.logits.begin() + std::ptrdiff_t(q * lp));
    std::copy_n(a.hidden.begin() + std::ptrdiff_t(p * hp), hp, kept.hidden.begin() + std::ptrdiff_t(q * hp));
    ++q;
  }
  const nlohmann::json left = snapshot_to_json(snap), alone = snapshot_to_json(analyze_tensors(memory_set(kept)));
  CHECK(left.at("layers") == alone.at("layers"));
  CHECK(left.at("embeddings") == alone.at("embeddings"));
  const nlohmann::json config = tensor_config_json(t, &report.nonfinite);
  CHECK(config.at("left_out").at("prompts") == 2);
  // Every prompt holding one: nothing left to analyse, refused even when allowed.
  for (int p = 0; p < P; ++p) a.logits[logit_at(p, 0, 0, 0, 0)] = std::nanf("");
  TensorSet all = memory_set(a);
  all.allow_nonfinite = true;
  CHECK(refusal(all).find("every prompt holds one") != std::string::npos);
}

TEST_CASE("tensors in memory read as the same folder: the same checks, the same numbers") {
  const Arrays a = make_arrays();
  const fs::path dir = fs::temp_directory_path() / "maskscope-tensors-memory";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string error;
  REQUIRE(write_npy_f32((dir / "logits.npy").string(), a.logits_shape, a.logits.data(), error));
  REQUIRE(write_npy_f32((dir / "hidden.npy").string(), a.hidden_shape, a.hidden.data(), error));
  std::ofstream(dir / "manifest.json") << nlohmann::json{{"format", kTensorFormat}, {"hidden", "hidden.npy"}}.dump();
  const nlohmann::json file = snapshot_to_json(analyze_tensors(open_tensors(dir.string())));
  const nlohmann::json memory = snapshot_to_json(analyze_tensors(memory_set(a)));
  CHECK(file.at("layers") == memory.at("layers"));
  CHECK(file.at("embeddings") == memory.at("embeddings"));
  const std::vector<std::int64_t> wrong{P, L, T, T};
  const TensorMemory bad{a.logits.data(), NpyType::f32, wrong};
  try {
    tensors_from_memory(bad, nullptr, nullptr, "causal");
    FAIL("a 4-dimensional logits array was accepted");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "array 'logits' has shape [5, 2, 6, 6]; expected [P, L, H, T, T]");
  }
  const TensorMemory logits{a.logits.data(), NpyType::f32, a.logits_shape};
  CHECK_THROWS_WITH(tensors_from_memory(logits, nullptr, nullptr, "window:7"),
                    "mask window:7 must have W in [1, T] = [1, 6]");
}

TEST_CASE("messages that quote a file's bytes escape control characters and invalid UTF-8") {
  CHECK(escape_bytes("plain ascii") == "plain ascii");
  CHECK(escape_bytes("caf\xc3\xa9 \xe2\x82\xac") == "caf\xc3\xa9 \xe2\x82\xac");  // valid UTF-8 stays
  CHECK(escape_bytes("\x1b[31m") == "\\x1b[31m");
  CHECK(escape_bytes("a\xff\xfe") == "a\\xff\\xfe");
  CHECK(escape_bytes("\xc3") == "\\xc3");                    // a cut sequence
  CHECK(escape_bytes("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // a surrogate
  const fs::path dir = fs::temp_directory_path() / "maskscope-tensors-escape";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string header = "{'descr': '\x1b\xff<f4', 'fortran_order': False, 'shape': (1, 1, 1, 2, 2), }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::ofstream(dir / "logits.npy", std::ios::binary)
      << std::string("\x93NUMPY\x01\x00", 8) << char(header.size()) << char(0) << header << std::string(16, '\0');
  std::ofstream(dir / "manifest.json") << nlohmann::json{{"format", kTensorFormat}}.dump();
  std::string why;
  try {
    open_tensors(dir.string());
  } catch (const std::runtime_error& e) { why = e.what(); }
  INFO(why);
  CHECK(why.find("dtype '\\x1b\\xff<f4' is not supported") != std::string::npos);
  CHECK(why.find('\x1b') == std::string::npos);
}

TEST_CASE("-inf at a visible key is refused: one turns a mean NaN, a whole row gives NaN weights") {
  Arrays a = make_arrays();
  for (int j = 0; j <= 3; ++j) a.logits[logit_at(2, 0, 1, 3, j)] = -kInf;  // every key row 3 sees
  const NonFinite f = find_nonfinite(memory_set(a));
  CHECK(f.values == 4);
  CHECK(f.first ==
        "logits[2, 0, 1, 3, 0] = -inf (prompt 2, layer 1, head 2, i 3, j 0) at a key the mask leaves visible");
  CHECK(refusal(memory_set(a)).find("4 non-finite values (0 NaN, 4 infinite) in 1 of 5 prompts") != std::string::npos);
  Arrays one = make_arrays();
  one.logits[logit_at(4, 1, 0, 5, 5)] = -kInf;
  CHECK(refusal(memory_set(one)).find("logits[4, 1, 0, 5, 5] = -inf") != std::string::npos);
  // Under the bidirectional mask every key is visible: the causal -inf are refused too.
  Arrays b = make_arrays();
  const TensorMemory bl{b.logits.data(), NpyType::f32, b.logits_shape};
  CHECK(find_nonfinite(tensors_from_memory(bl, nullptr, nullptr, "bidirectional")).values ==
        std::uint64_t(P) * L * H * T * (T - 1) / 2);
}

TEST_CASE("given weights must sum to 1 over the visible keys of every row") {
  Arrays a = make_arrays();
  std::vector<float> w(a.logits.size());
  for (std::size_t row = 0; row < w.size() / T; ++row) {  // the softmax of each causal row
    const std::size_t i = row % T;
    double sum = 0;
    for (std::size_t j = 0; j <= i; ++j) sum += std::exp(double(a.logits[row * T + j]));
    for (std::size_t j = 0; j < std::size_t(T); ++j)
      w[row * T + j] = j <= i ? float(std::exp(double(a.logits[row * T + j])) / sum) : 0.0f;
  }
  const TensorMemory logits{a.logits.data(), NpyType::f32, a.logits_shape};
  const TensorMemory hidden{a.hidden.data(), NpyType::f32, a.hidden_shape};
  const TensorMemory weights{w.data(), NpyType::f32, a.logits_shape};
  CHECK(refusal(tensors_from_memory(logits, &weights, &hidden, "causal")).empty());
  for (int j = 0; j <= 4; ++j) w[logit_at(3, 1, 1, 4, j)] *= 0.9f;
  const std::string why = refusal(tensors_from_memory(logits, &weights, &hidden, "causal"));
  INFO(why);
  CHECK(why.find(
            "array 'weights': prompt 3, layer 2, head 2, row 4: the weights on the visible keys 0..4 sum to 0.9") == 0);
  for (int j = 0; j <= 4; ++j) w[logit_at(3, 1, 1, 4, j)] /= 0.9f;
  CHECK(refusal(tensors_from_memory(logits, &weights, &hidden, "causal")).empty());
  w[logit_at(0, 0, 0, 2, 1)] += 2e-3f;  // beyond float tolerance
  CHECK(refusal(tensors_from_memory(logits, &weights, &hidden, "causal")).find("row 2: the weights") !=
        std::string::npos);
}

TEST_CASE("hidden values of 1e20 (squares past float's range) give exact norms and cosines") {
  Arrays a = make_arrays();
  // Every token of every layer along one direction v, at scales from 1 to 1e20: every cosine is 1.
  const float v[D] = {0.6f, -0.8f, 0.0f};
  const float scale[T] = {1e20f, 1.0f, 3e19f, 2.0f, 1e-3f, 5e20f};
  for (std::size_t r = 0; r < a.hidden.size() / D; ++r)
    for (int k = 0; k < D; ++k) a.hidden[r * D + std::size_t(k)] = scale[r % T] * v[k];
  const Snapshot snap = analyze_tensors(memory_set(a));
  for (const LayerStats& l : snap.layers) {
    for (int i = 0; i < T; ++i) {
      for (int j = 0; j <= i; ++j) CHECK(std::abs(l.cosine_mean[std::size_t(i) * T + j] - 1.0) < 1e-12);
      // Norms past 2^48 are beyond the exact sums' range (exact_sums.hpp): NaN, never a wrong number.
      if (scale[i] < 1e10f) CHECK(l.norm_mean[std::size_t(i)] == doctest::Approx(double(scale[i])).epsilon(1e-6));
      else CHECK(std::isnan(l.norm_mean[std::size_t(i)]));
    }
  }
  CHECK(std::abs(snap.embeddings[0].cosine_mean[5 * T + 0] - 1.0) < 1e-12);
}

TEST_CASE("bfloat16 in memory reads as the float32 of its bits: the same numbers as those float32 values") {
  const Arrays a = make_arrays();
  std::vector<std::uint16_t> logits16(a.logits.size()), hidden16(a.hidden.size());
  std::vector<float> logits32(a.logits.size()), hidden32(a.hidden.size());
  auto to_bf16 = [](const std::vector<float>& in, std::vector<std::uint16_t>& out, std::vector<float>& back) {
    for (std::size_t e = 0; e < in.size(); ++e) {
      std::uint32_t bits;
      std::memcpy(&bits, &in[e], 4);
      out[e] = std::uint16_t(bits >> 16);  // truncated: the test needs a bfloat16, not its rounding
      const std::uint32_t upper = std::uint32_t(out[e]) << 16;
      std::memcpy(&back[e], &upper, 4);
    }
  };
  to_bf16(a.logits, logits16, logits32);
  to_bf16(a.hidden, hidden16, hidden32);
  const TensorMemory l16{logits16.data(), NpyType::bf16, a.logits_shape};
  const TensorMemory h16{hidden16.data(), NpyType::bf16, a.hidden_shape};
  const TensorMemory l32{logits32.data(), NpyType::f32, a.logits_shape};
  const TensorMemory h32{hidden32.data(), NpyType::f32, a.hidden_shape};
  const nlohmann::json bf16 = snapshot_to_json(analyze_tensors(tensors_from_memory(l16, nullptr, &h16, "causal")));
  const nlohmann::json f32 = snapshot_to_json(analyze_tensors(tensors_from_memory(l32, nullptr, &h32, "causal")));
  CHECK(bf16["layers"] == f32["layers"]);
  CHECK(bf16["embeddings"] == f32["embeddings"]);
  CHECK(weights_sum_tolerance(NpyType::bf16) > weights_sum_tolerance(NpyType::f16));
}
