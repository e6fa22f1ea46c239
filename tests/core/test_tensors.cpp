// Real-model tensors: the .npy reader's checks, and the metrics on synthetic tensors with known
// answers (a purely relative map has no leakage; scores rising in j give RP 1; hidden states whose
// cosines fall with distance give adjacency 1).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/formats/npy.hpp"
#include "core/formats/tensor_analysis.hpp"

using namespace maskscope;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("maskscope-tensors-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write_manifest(const fs::path& dir, nlohmann::json extra = nlohmann::json::object()) {
  nlohmann::json m = {{"format", kTensorFormat}, {"model", "synthetic"}, {"mask", "causal"}};
  for (auto it = extra.begin(); it != extra.end(); ++it) m[it.key()] = it.value();
  std::ofstream(dir / "manifest.json") << m.dump();
}

void write_f32(const fs::path& p, const std::vector<std::int64_t>& shape, const std::vector<float>& v) {
  std::string error;
  REQUIRE(write_npy_f32(p.string(), shape, v.data(), error));
}

// A raw .npy with any header (to test what the reader refuses).
void write_raw(const fs::path& p, const std::string& dict, const std::string& payload) {
  std::string header = dict;
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += char(1);
  out += char(0);
  out += char(header.size() & 0xff);
  out += char(header.size() >> 8);
  std::ofstream(p, std::ios::binary) << out << header << payload;
}

std::string refusal(const fs::path& dir) {
  try {
    open_tensors(dir.string());
  } catch (const std::runtime_error& e) { return e.what(); }
  return "";
}

}  // namespace

TEST_CASE("half_to_float: normal, subnormal, zero, infinity") {
  CHECK(half_to_float(0x3c00) == 1.0f);
  CHECK(half_to_float(0xc000) == -2.0f);
  CHECK(half_to_float(0x0001) == std::ldexp(1.0f, -24));
  CHECK(half_to_float(0x0000) == 0.0f);
  CHECK(std::isinf(half_to_float(0x7c00)));
  CHECK(std::isnan(half_to_float(0x7e00)));
  CHECK(half_to_float(0x3555) == doctest::Approx(1.0 / 3).epsilon(1e-3));
}

TEST_CASE(
    "tensors: a purely relative map has no leakage; scores rising in j give RP 1; falling cosines give adjacency 1") {
  const int P = 40, L = 2, H = 3, T = 12, d = 4;
  const fs::path dir = fresh_dir("known");
  std::mt19937 rng(3);
  std::normal_distribution<float> noise(0.0f, 1.0f);
  std::vector<float> logits(std::size_t(P) * L * H * T * T), hidden(std::size_t(P) * (L + 1) * T * d);
  for (int p = 0; p < P; ++p)
    for (int l = 0; l < L; ++l)
      for (int h = 0; h < H; ++h) {
        std::vector<float> g(T);  // this prompt's function of the offset i - j
        for (auto& v : g) v = noise(rng);
        for (int i = 0; i < T; ++i)
          for (int j = 0; j < T; ++j) {
            float v;
            if (l == 0) v = g[std::size_t(i - j + (i < j ? T : 0)) % T];  // layer 1: depends on i - j only
            else v = float(j) + 0.1f * noise(rng);                        // layer 2: rises with j (nearer keys)
            logits[(((std::size_t(p) * L + l) * H + h) * T + i) * T + j] = j <= i ? v : -INFINITY;
          }
      }
  for (int p = 0; p < P; ++p)
    for (int l = 0; l <= L; ++l)
      for (int i = 0; i < T; ++i) {
        // Angle 0.2 i (so cosines fall with distance), norm 1 + i (norms rise).
        float* x = &hidden[((std::size_t(p) * (L + 1) + l) * T + i) * d];
        x[0] = (1.0f + float(i)) * std::cos(0.2f * float(i));
        x[1] = (1.0f + float(i)) * std::sin(0.2f * float(i));
        x[2] = x[3] = 0.0f;
      }
  write_f32(dir / "logits.npy", {P, L, H, T, T}, logits);
  write_f32(dir / "hidden.npy", {P, L + 1, T, d}, hidden);
  write_manifest(dir, {{"hidden", "hidden.npy"}, {"prompts", {"a", "b"}}});
  const TensorSet t = open_tensors(dir.string());
  CHECK(t.P == P);
  CHECK(t.H == H);
  CHECK(t.d == d);
  CHECK(t.weights == nullptr);
  const Snapshot snap = analyze_tensors(t);
  REQUIRE(snap.samples_done == P);
  REQUIRE(snap.layers.size() == 2);
  const LayerStats& l1 = snap.layers[0];
  const LayerStats& l2 = snap.layers[1];
  CHECK(std::fabs(l1.leakage.delta_r2.mean) < 1e-9);  // relative only
  for (const HeadStats& h : l1.heads) CHECK(std::fabs(h.leakage.delta_r2.mean) < 1e-9);
  CHECK(l2.rp.mean == 1.0);
  CHECK(l2.rp.se == 0.0);
  for (const HeadStats& h : l2.heads) CHECK(h.rp.mean == 1.0);
  CHECK(l2.adjacency.mean == 1.0);
  CHECK(l2.norm_adjacency.mean == 1.0);
  REQUIRE(snap.embeddings.size() == 1);
  CHECK(snap.embeddings[0].adjacency.mean == 1.0);
  // Known cosines: cos(0.2 (i - j)).
  CHECK(l2.cosine_mean[5 * T + 2] == doctest::Approx(std::cos(0.6)).epsilon(1e-6));
  CHECK(l2.norm_mean[3] == doctest::Approx(4.0).epsilon(1e-6));
  // Weights: the softmax of the logits under the mask, rows summing to 1.
  double row = 0;
  for (int j = 0; j <= 7; ++j) row += l2.weight_mean[7 * T + j];
  CHECK(row == doctest::Approx(1.0).epsilon(1e-6));
}

TEST_CASE("tensors: float16 and float64 give the float32 numbers; without hidden states cosines are NaN") {
  const int P = 5, L = 1, H = 1, T = 6;
  std::vector<float> logits(std::size_t(P) * L * H * T * T);
  std::mt19937 rng(9);
  std::uniform_int_distribution<int> small(-8, 8);  // exactly representable in float16
  for (auto& v : logits) v = float(small(rng)) / 4.0f;
  const fs::path d32 = fresh_dir("f32"), d16 = fresh_dir("f16"), d64 = fresh_dir("f64");
  write_f32(d32 / "logits.npy", {P, L, H, T, T}, logits);
  std::string half, dbl;
  for (float v : logits) {
    const double x = v;
    dbl.append(reinterpret_cast<const char*>(&x), 8);
    // float -> half for these exact quarters: sign, exponent, 10-bit mantissa.
    std::uint32_t b;
    std::memcpy(&b, &v, 4);
    std::uint16_t h = std::uint16_t((b >> 16) & 0x8000);
    if (v != 0.0f) h |= std::uint16_t((((b >> 23) & 0xff) - 127 + 15) << 10 | ((b >> 13) & 0x3ff));
    half.append(reinterpret_cast<const char*>(&h), 2);
  }
  const std::string shape = "(5, 1, 1, 6, 6)";
  write_raw(d16 / "logits.npy", "{'descr': '<f2', 'fortran_order': False, 'shape': " + shape + ", }", half);
  write_raw(d64 / "logits.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': " + shape + ", }", dbl);
  for (const auto& dir : {d32, d16, d64}) write_manifest(dir);
  const Snapshot a = analyze_tensors(open_tensors(d32.string())), b = analyze_tensors(open_tensors(d16.string())),
                 c = analyze_tensors(open_tensors(d64.string()));
  CHECK(a.layers[0].rp.mean == b.layers[0].rp.mean);
  CHECK(a.layers[0].rp.mean == c.layers[0].rp.mean);
  for (std::size_t e = 0; e < a.layers[0].score_mean.size(); ++e) {
    CHECK(std::isnan(a.layers[0].score_mean[e]) == std::isnan(b.layers[0].score_mean[e]));
    if (!std::isnan(a.layers[0].score_mean[e])) CHECK(a.layers[0].score_mean[e] == b.layers[0].score_mean[e]);
  }
  CHECK(std::isnan(a.layers[0].adjacency.mean));
  CHECK(std::isnan(a.layers[0].cosine_mean[0]));
  CHECK(a.embeddings.empty());
}

TEST_CASE(
    "tensors: wrong dtype, byte order, order, shape, truncation and manifests are refused, naming file and array") {
  const int P = 2, L = 1, H = 1, T = 4;
  std::vector<float> logits(std::size_t(P) * L * H * T * T, 0.5f);
  const std::string payload(reinterpret_cast<const char*>(logits.data()), logits.size() * 4);
  struct Case {
    std::string name, dict, payload, expect;
  };
  const std::string shape = "'shape': (2, 1, 1, 4, 4), }";
  const Case cases[] = {
      {"int", "{'descr': '<i4', 'fortran_order': False, " + shape, payload, "dtype '<i4' is not supported"},
      {"big", "{'descr': '>f4', 'fortran_order': False, " + shape, payload, "dtype '>f4'"},
      {"fortran", "{'descr': '<f4', 'fortran_order': True, " + shape, payload, "Fortran order"},
      {"shape4", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1, 4, 4), }", payload,
       "expected [P, L, H, T, T]"},
      {"trunc", "{'descr': '<f4', 'fortran_order': False, " + shape, payload.substr(0, 40), "truncated"},
      {"long", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1, 1, 600, 600), }",
       std::string(2 * 600 * 600 * 4, '\0'), "at most 512"},
      // 2^31 x 2^31 x 2^4 elements: the byte count would overflow 64 bits.
      {"huge", "{'descr': '<f4', 'fortran_order': False, 'shape': (2147483648, 1, 1, 2147483648, 16), }", payload,
       "is too large"},
  };
  for (const Case& c : cases) {
    const fs::path dir = fresh_dir(c.name);
    write_raw(dir / "logits.npy", c.dict, c.payload);
    write_manifest(dir);
    const std::string why = refusal(dir);
    INFO(c.name << ": " << why);
    CHECK(why.find(c.expect) != std::string::npos);
    CHECK(why.find("logits.npy") != std::string::npos);
    CHECK(why.find("logits") != std::string::npos);
  }
  {  // not .npy at all
    const fs::path dir = fresh_dir("magic");
    std::ofstream(dir / "logits.npy") << "PK\x03\x04 a zip, not an npy";
    write_manifest(dir);
    CHECK(refusal(dir).find("not a NumPy .npy file") != std::string::npos);
  }
  const fs::path ok = fresh_dir("ok");
  write_f32(ok / "logits.npy", {P, L, H, T, T}, logits);
  {  // weights and hidden of the wrong shape
    write_f32(ok / "weights.npy", {P, L, H, T, T + 1}, std::vector<float>(std::size_t(P) * L * H * T * (T + 1)));
    write_manifest(ok, {{"weights", "weights.npy"}});
    CHECK(refusal(ok).find("array 'weights' has shape [2, 1, 1, 4, 5]") != std::string::npos);
    write_f32(ok / "hidden.npy", {P, L, T, 3}, std::vector<float>(std::size_t(P) * L * T * 3));
    write_manifest(ok, {{"hidden", "hidden.npy"}});
    CHECK(refusal(ok).find("expected [P, L+1, T, d]") != std::string::npos);
  }
  {  // manifests
    std::ofstream(ok / "manifest.json") << "{\"format\": \"maskscope-tensors 1\", \"mask\": \"causal\"";
    CHECK(refusal(ok).find("not valid JSON") != std::string::npos);
    std::ofstream(ok / "manifest.json") << "{\"format\": \"other\"}";
    CHECK(refusal(ok).find("\"format\" must be") != std::string::npos);
    write_manifest(ok, {{"mask", "diagonal"}});
    CHECK(refusal(ok).find("\"mask\" 'diagonal'") != std::string::npos);
    write_manifest(ok, {{"logits", "../elsewhere.npy"}});
    CHECK(refusal(ok).find("inside the folder") != std::string::npos);
    fs::remove(ok / "manifest.json");
    CHECK(refusal(ok).find("manifest.json: missing") != std::string::npos);
    write_manifest(ok);
    CHECK(refusal(ok).empty());
  }
}
