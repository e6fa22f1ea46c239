// The safetensors reader and writer (core/formats/safetensors.hpp): a round trip, a file laid out as Hugging
// Face's Python package writes it, F16 / BF16 conversion, and every kind of corrupt file refused with the
// tensor's name and the first bad index.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "core/formats/npy.hpp"
#include "core/formats/safetensors.hpp"
#include "core/model/input_file.hpp"

using namespace maskscope;

namespace {

SafeTensorsFile two_tensors() {
  SafeTensorsFile f;
  f.metadata["format"] = "pt";
  f.tensors.push_back({"a.weight", {2, 3}, {1.0f, -2.0f, 3.5f, 0.0f, 1e-30f, -7.25f}});
  f.tensors.push_back({"b", {4}, {0.5f, 0.25f, -0.125f, 8.0f}});
  return f;
}

std::string refusal(std::string_view bytes) {
  try {
    parse_safetensors(bytes, "f.safetensors");
  } catch (const SafetensorsError& e) { return e.what(); }
  return "";
}

// A file with `header` as its JSON and `data` after it.
std::string with_header(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  const std::uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  return out + header + data;
}

}  // namespace

TEST_CASE("safetensors: a written file reads back bit for bit, header padded to 8 bytes") {
  const SafeTensorsFile f = two_tensors();
  const std::string bytes = safetensors_bytes(f);
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  CHECK(n % 8 == 0);
  CHECK(bytes.size() == 8 + n + 10 * 4);
  const SafeTensorsFile back = parse_safetensors(bytes, "mem");
  REQUIRE(back.tensors.size() == 2);
  CHECK(back.metadata.at("format") == "pt");
  for (const SafeTensor& t : f.tensors) {
    const SafeTensor* b = back.find(t.name);
    REQUIRE(b != nullptr);
    CHECK(b->shape == t.shape);
    CHECK(std::memcmp(b->data.data(), t.data.data(), t.data.size() * 4) == 0);
  }
  // Through a file and the atomic writer.
  const auto path = (std::filesystem::temp_directory_path() / "maskscope_roundtrip.safetensors").string();
  std::string error;
  REQUIRE(write_safetensors(path, f, error));
  const SafeTensorsFile from_file = read_safetensors(path);
  CHECK(from_file.find("b")->data == f.tensors[1].data);
  const SafeTensorsHeader h = read_safetensors_header(path);
  REQUIRE(h.tensors.size() == 2);
  CHECK(h.tensors[0].name == "a.weight");
  CHECK(h.tensors[0].elements == 6);
  // Skipped tensors are checked but not read.
  const SafeTensorsFile skipped = read_safetensors(path, [](const std::string& name) { return name == "a.weight"; });
  CHECK(skipped.find("a.weight")->data.empty());
  CHECK(skipped.find("b")->data.size() == 4);
  // A memory cap below the floats' 40 bytes refuses before reading.
  CHECK_THROWS_WITH_AS(read_safetensors(path, nullptr, 39), doctest::Contains("need 40 bytes"), SafetensorsError);
  std::filesystem::remove(path);
}

TEST_CASE("safetensors: a file laid out by Python (tests/python/make_safetensors_fixture.py) reads back") {
  const SafeTensorsFile f = read_safetensors(std::string(MASKSCOPE_TEST_DATA) + "/python_written.safetensors");
  CHECK(f.metadata.at("format") == "pt");
  REQUIRE(f.tensors.size() == 4);
  const SafeTensor* w = f.find("h.0.weight");
  REQUIRE(w != nullptr);
  CHECK(w->shape == std::vector<std::int64_t>{2, 3});
  CHECK(w->data == std::vector<float>{1.0f, -2.5f, 3.25f, 0.0f, 1e-8f, -7.0f});
  const SafeTensor* scalar = f.find("scalar");
  REQUIRE(scalar != nullptr);
  CHECK(scalar->shape.empty());
  CHECK(scalar->data == std::vector<float>{0.125f});
  const SafeTensor* half = f.find("half");  // F16: subnormal, max, negative, zero, 1/3 rounded to half
  REQUIRE(half != nullptr);
  CHECK(half->data[0] == std::ldexp(1.0f, -24));
  CHECK(half->data[1] == 65504.0f);
  CHECK(half->data[2] == -1.5f);
  CHECK(half->data[3] == 0.0f);
  CHECK(half->data[4] == 0.333251953125f);  // 0x3555
  const SafeTensor* bf = f.find("bf");      // BF16: float32's top 16 bits
  REQUIRE(bf != nullptr);
  CHECK(bf->shape == std::vector<std::int64_t>{2, 2});
  CHECK(bf->data[0] == 1.0f);
  CHECK(bf->data[1] == -2.0f);
  CHECK(bf->data[2] == 0.5f);
  CHECK(bf->data[3] == std::bit_cast<float>(std::bit_cast<std::uint32_t>(3.0e38f) & 0xffff0000u));
}

TEST_CASE("safetensors: half and bfloat16 conversions are exact") {
  CHECK(half_to_float(0x3c00) == 1.0f);
  CHECK(half_to_float(0xc000) == -2.0f);
  CHECK(half_to_float(0x0001) == std::ldexp(1.0f, -24));
  CHECK(half_to_float(0x03ff) == std::ldexp(1023.0f, -24));  // the largest subnormal
  CHECK(half_to_float(0x0400) == std::ldexp(1.0f, -14));     // the smallest normal
  CHECK(std::isinf(half_to_float(0x7c00)));
  CHECK(std::isnan(half_to_float(0x7e00)));
  CHECK(std::signbit(half_to_float(0x8000)));
  CHECK(bfloat16_to_float(0x3f80) == 1.0f);
  CHECK(bfloat16_to_float(0xc040) == -3.0f);
}

TEST_CASE("safetensors: corrupt, truncated and inconsistent files are refused naming the tensor") {
  const std::string good = safetensors_bytes(two_tensors());
  CHECK(refusal(good.substr(0, 5)).find("too short") != std::string::npos);
  CHECK(refusal(good.substr(0, 20)).find("truncated") != std::string::npos);
  // Cut inside the data: the header's offsets pass the end.
  const std::string cut = refusal(good.substr(0, good.size() - 3));
  CHECK(cut.find("tensor 'b'") != std::string::npos);
  CHECK(cut.find("out of range") != std::string::npos);
  // A header length of 2^40.
  std::string huge = good;
  const std::uint64_t big = 1ull << 40;
  std::memcpy(huge.data(), &big, 8);
  CHECK(refusal(huge).find("header length") != std::string::npos);
  CHECK(refusal(with_header("[1, 2]", "")).find("not a JSON object") != std::string::npos);
  CHECK(refusal(with_header("{\"x\": ", "")).find("not a JSON object") != std::string::npos);
  // Unknown dtype, bad shape, wrong byte count.
  const std::string i64 =
      refusal(with_header(R"({"ids":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})", std::string(8, '\0')));
  CHECK(i64.find("tensor 'ids' has dtype 'I64'") != std::string::npos);
  CHECK(refusal(with_header(R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", std::string(4, '\0')))
            .find("tensor 'w': shape") != std::string::npos);
  CHECK(refusal(with_header(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", std::string(8, '\0')))
            .find("span 8 bytes, its shape and dtype 12") != std::string::npos);
  CHECK(refusal(with_header(R"({"w":{"dtype":"F32","shape":[1]}})", std::string(4, '\0'))).find("tensor 'w' lacks") !=
        std::string::npos);
  // Overlapping offsets, a hole, bytes after the last tensor.
  const std::string overlap = refusal(with_header(
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
      std::string(12, '\0')));
  CHECK(overlap.find("tensor 'b'") != std::string::npos);
  CHECK(overlap.find("overlap") != std::string::npos);
  CHECK(refusal(with_header(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", std::string(8, '\0')))
            .find("tensor 'a': data_offsets begin at 4") != std::string::npos);
  CHECK(refusal(with_header(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", std::string(8, '\0')))
            .find("belong to no tensor") != std::string::npos);
  // A non-finite value: the tensor and its first bad index, as [row, column].
  SafeTensorsFile f = two_tensors();
  std::string bytes = safetensors_bytes(f);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::memcpy(bytes.data() + bytes.size() - 40 + 4 * 4, &nan, 4);  // a.weight[1, 1]
  std::memcpy(bytes.data() + bytes.size() - 40 + 5 * 4, &inf, 4);  // a.weight[1, 2]
  const std::string bad = refusal(bytes);
  CHECK(bad.find("tensor 'a.weight'") != std::string::npos);
  CHECK(bad.find("index [1, 1] (flat 4)") != std::string::npos);
  // F16 infinity.
  std::string half_data(2, '\0');
  const std::uint16_t h_inf = 0x7c00;
  std::memcpy(half_data.data(), &h_inf, 2);
  CHECK(refusal(with_header(R"({"h":{"dtype":"F16","shape":[1],"data_offsets":[0,2]}})", half_data))
            .find("tensor 'h' holds a non-finite value (inf) at index [0]") != std::string::npos);
  // The writer refuses what it could not read back.
  f.tensors[1].data[2] = inf;
  CHECK_THROWS_WITH_AS(safetensors_bytes(f),
                       doctest::Contains("tensor 'b' holds a non-finite value (inf) at index [2]"), SafetensorsError);
  f = two_tensors();
  f.tensors[1].shape = {5};
  CHECK_THROWS_WITH_AS(safetensors_bytes(f), doctest::Contains("has 4 values, its shape 5"), SafetensorsError);
  f = two_tensors();
  f.tensors[1].name = "a.weight";
  CHECK_THROWS_AS(safetensors_bytes(f), SafetensorsError);
  // Not a regular file; a missing one.
  CHECK_THROWS_AS(read_safetensors(std::filesystem::temp_directory_path().string()), InputFileError);
  CHECK_THROWS_AS(read_safetensors("/nonexistent/x.safetensors"), InputFileError);
}
