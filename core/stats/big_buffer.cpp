// Large zeroed allocations (big_buffer.hpp).
#include "core/stats/big_buffer.hpp"

#include <cstdlib>

#if defined(__linux__)
#include <sys/mman.h>
#endif
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace maskscope {

namespace {
constexpr std::size_t kBig = std::size_t(1) << 21;  // 2 MiB: one huge page; below it, malloc
}

void* big_zeroed_alloc(std::size_t bytes) {
  if (bytes == 0) return nullptr;
#if defined(__linux__)
  if (bytes >= kBig) {
    // Anonymous memory is zero until written, so nothing is touched here. Aligned to 2 MiB (map
    // one huge page more and trim) so that every 2 MiB of the array can be one page.
    const std::size_t span = bytes + kBig;
    void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    const std::uintptr_t start = reinterpret_cast<std::uintptr_t>(raw);
    const std::uintptr_t aligned = (start + kBig - 1) & ~(std::uintptr_t(kBig) - 1);
    if (aligned > start) munmap(raw, aligned - start);
    const std::uintptr_t end = start + span, used = aligned + ((bytes + 4095) & ~std::size_t(4095));
    if (end > used) munmap(reinterpret_cast<void*>(used), end - used);
    void* p = reinterpret_cast<void*>(aligned);
#if defined(MADV_HUGEPAGE)
    madvise(p, bytes, MADV_HUGEPAGE);  // advice only: without huge pages the memory works the same
#endif
    return p;
  }
#endif
  void* p = std::calloc(bytes, 1);
  if (!p) throw std::bad_alloc();
  return p;
}

void return_large_blocks_to_system() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 1 << 20);  // a fixed threshold: glibc's dynamic one stays off
#endif
}

void big_free(void* p, std::size_t bytes) noexcept {
  if (!p) return;
#if defined(__linux__)
  if (bytes >= kBig) {
    munmap(p, (bytes + 4095) & ~std::size_t(4095));
    return;
  }
#endif
  std::free(p);
}

}  // namespace maskscope
