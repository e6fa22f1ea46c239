// The safetensors format (Hugging Face): an 8-byte little-endian header length N, N bytes of a JSON header
// ({"NAME": {"dtype", "shape", "data_offsets": [begin, end]}, ..., optional "__metadata__": {str: str}}) and
// the tensors' bytes, little-endian, C order, offsets relative to the end of the header. maskscope writes
// F32 and reads F32, F16 and BF16 into float; checkpoints (core/train/checkpoint.hpp) are such files.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace maskscope {

// Caps: the file (a GPT-2 XL checkpoint in F32 is 6.4 GB), its JSON header (the reference implementation's
// 100 MB), and the floats one read may hold in memory (the caller may set a smaller one).
constexpr std::uint64_t kMaxSafetensorsFileBytes = 64ull << 30;
constexpr std::uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;
constexpr std::uint64_t kMaxSafetensorsMemoryBytes = 16ull << 30;

// A corrupt, truncated or unreadable file: what() names the file, and the tensor and first bad index where
// one is at fault.
struct SafetensorsError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class SafetensorsDtype { f32, f16, bf16 };

struct SafeTensor {
  std::string name;
  std::vector<std::int64_t> shape;  // [] for a scalar (one element)
  std::vector<float> data;          // C order; empty when the reader skipped it (see read_safetensors)
  std::size_t elements() const;
};

struct SafeTensorsFile {
  std::vector<SafeTensor> tensors;                      // in the order of their data offsets (reading) or as given
  std::map<std::string, std::string> metadata;          // "__metadata__" (string values only, as the format says)
  const SafeTensor* find(std::string_view name) const;  // nullptr if absent
};

// One tensor's entry in a header, before its data is read: for estimating memory and checking names.
struct SafeTensorInfo {
  std::string name;
  SafetensorsDtype dtype = SafetensorsDtype::f32;
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0, end = 0;  // data offsets (bytes after the header)
  std::size_t elements = 0;
};
struct SafeTensorsHeader {
  std::vector<SafeTensorInfo> tensors;  // sorted by begin
  std::map<std::string, std::string> metadata;
  std::uint64_t data_start = 0;  // 8 + N
};

// The file's bytes as write_safetensors writes them: every tensor F32, in the given order, the header padded
// with spaces to a multiple of 8 bytes (as the Python library does). Throws SafetensorsError for a tensor whose
// data size differs from its shape's product, a duplicate or empty name, or a non-finite value (naming the
// tensor and the index).
std::string safetensors_bytes(const SafeTensorsFile& file);
// Writes `path` through the atomic writer (atomic_file.hpp). False and `error` set on failure.
bool write_safetensors(const std::string& path, const SafeTensorsFile& file, std::string& error);

// Parses and checks a header (the first bytes of a file, at least 8 + N of them): the JSON, every entry's
// dtype (F32, F16, BF16), shape and offsets, offsets that neither overlap nor leave a hole nor pass
// `data_bytes` (the bytes after the header). `name` names the file in messages. Throws SafetensorsError.
SafeTensorsHeader parse_safetensors_header(std::string_view bytes, std::uint64_t file_bytes, const std::string& name);

// Reads a file opened through input_file.hpp (a regular file within kMaxSafetensorsFileBytes). Tensors for which
// `skip` returns true are checked in the header but not read (data left empty; e.g. GPT-2's causal-mask
// buffers). Refuses, before reading the data, a file whose floats would exceed `max_memory_bytes`. Every value
// read is checked to be finite. Throws SafetensorsError (and InputFileError for an unreadable path).
SafeTensorsFile read_safetensors(const std::string& path, const std::function<bool(const std::string&)>& skip = nullptr,
                                 std::uint64_t max_memory_bytes = kMaxSafetensorsMemoryBytes);
// The same on bytes in memory (tests, fuzzing); `name` names them in messages.
SafeTensorsFile parse_safetensors(std::string_view bytes, const std::string& name,
                                  const std::function<bool(const std::string&)>& skip = nullptr);
// Only the header of a file (no tensor data read).
SafeTensorsHeader read_safetensors_header(const std::string& path);

// bfloat16 to float (exact; IEEE half: half_to_float in npy.hpp).
float bfloat16_to_float(std::uint16_t b);

}  // namespace maskscope
