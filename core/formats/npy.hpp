// NumPy .npy arrays, memory-mapped (so a 5 GB file opens without 5 GB of RAM) and checked:
// format version 1.0-3.0, little-endian float16 / float32 / float64, C order. Anything else is
// refused with the file, the array and what was expected. Writing: float32 arrays (tests, the
// CLI's --save-tensors). An NpyArray may also be a view of memory the caller holds (the Python module's
// NumPy arrays), read by the same code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace maskscope {

// bf16 (bfloat16, the usual dtype of a language model's activations) only in a view of memory: .npy has no
// bfloat16 type, so a file holding one is refused as any other dtype.
enum class NpyType { f16, bf16, f32, f64 };

class NpyArray {
 public:
  // Opens and checks `path`; `name` names the array in messages. Throws std::runtime_error.
  NpyArray(const std::string& path, const std::string& name);
  // A view of the values of `shape`, of `type`, at `data` (C order, little-endian), which the caller keeps
  // alive and unchanged while the array is read; path() is empty. No copy, no check of the values.
  NpyArray(const void* data, NpyType type, std::vector<std::int64_t> shape, const std::string& name);
  ~NpyArray();
  NpyArray(const NpyArray&) = delete;
  NpyArray& operator=(const NpyArray&) = delete;

  const std::vector<std::int64_t>& shape() const { return shape_; }
  NpyType type() const { return type_; }
  std::size_t elements() const { return elements_; }
  // Elements [first, first + count) (flat, C order) converted to float.
  void read(std::size_t first, std::size_t count, float* out) const;
  const std::string& path() const { return path_; }  // empty for a view of memory
  const std::string& name() const { return name_; }

 private:
  std::string path_, name_;
  NpyType type_ = NpyType::f32;
  std::vector<std::int64_t> shape_;
  std::size_t elements_ = 0;
  void* map_ = nullptr;
  std::size_t map_bytes_ = 0;
  const unsigned char* data_ = nullptr;
};

// What write_npy_f32 wrote: the file's size and its FNV-1a 64 (core/model/checksum.hpp), for a manifest.
struct NpyWritten {
  std::uint64_t bytes = 0, fnv1a = 0;
};
// Writes a little-endian float32 C-order array; false with `error` on failure. `written` (optional) gets
// the file's size and checksum.
bool write_npy_f32(const std::string& path, const std::vector<std::int64_t>& shape, const float* data,
                   std::string& error, NpyWritten* written = nullptr);

// Text from a file (a header's dtype, a manifest's name) made safe to print: valid UTF-8 and printable
// ASCII stay, every other byte (control characters, invalid UTF-8) becomes \xNN.
std::string escape_bytes(std::string_view text);

// IEEE half to float (subnormals, infinities and NaN included).
float half_to_float(std::uint16_t h);

}  // namespace maskscope
