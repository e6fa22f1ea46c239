// FNV-1a, 64 bits: the checksum of maskscope's own files (.msum parts, the arrays of a tensor folder's
// manifest). Not cryptographic: it finds a truncated, mixed or corrupted file, not a forged one.
#pragma once

#include <cstddef>
#include <cstdint>

namespace maskscope {

constexpr std::uint64_t kFnv1aOffset = 0xcbf29ce484222325ULL;

// The hash of `size` bytes at `data`, continuing from `h` (so a file can be hashed in chunks).
inline std::uint64_t fnv1a(const void* data, std::size_t size, std::uint64_t h = kFnv1aOffset) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace maskscope
