// The FNV-1a 64 checksum of the files maskscope writes for itself to read back (.msum and .msweep parts):
// one function, so that both formats guard their bytes the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace maskscope {

// FNV-1a 64 of `data`, continued from `h` (the offset basis by default).
constexpr std::uint64_t fnv1a64(std::string_view data, std::uint64_t h = 0xcbf29ce484222325ULL) {
  for (const char c : data) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}
// The published test vectors: the .msum files already written must still check.
static_assert(fnv1a64("") == 0xcbf29ce484222325ULL && fnv1a64("a") == 0xaf63dc4c8601ec8cULL);

}  // namespace maskscope
