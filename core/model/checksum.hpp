// The FNV-1a 64 checksum of the files maskscope writes for itself to read back (.msum and .msweep parts,
// the arrays a tensor folder's manifest lists): one function, so that every format guards its bytes the
// same way. Not cryptographic: it finds a truncated, mixed or corrupted file, not a forged one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace maskscope {

constexpr std::uint64_t kFnv1aOffset = 0xcbf29ce484222325ULL;

// FNV-1a 64 of `data`, continued from `h` (the offset basis by default; so a file can be hashed in chunks).
constexpr std::uint64_t fnv1a64(std::string_view data, std::uint64_t h = kFnv1aOffset) {
  for (const char c : data) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}
inline std::uint64_t fnv1a64(const void* data, std::size_t size, std::uint64_t h = kFnv1aOffset) {
  return fnv1a64(std::string_view(static_cast<const char*>(data), size), h);
}
// The published test vectors: the .msum files already written must still check.
static_assert(fnv1a64("") == 0xcbf29ce484222325ULL && fnv1a64("a") == 0xaf63dc4c8601ec8cULL);

}  // namespace maskscope
