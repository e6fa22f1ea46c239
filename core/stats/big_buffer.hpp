// Memory for the run's large arrays (block sums, moments, exact sums): straight from the kernel,
// zeroed lazily, and advised to use transparent huge pages where the system allows (Linux
// "madvise" mode). At n 512 these arrays take tens of megabytes each; with 4 KiB pages a fresh one
// costs thousands of page faults (tens of milliseconds in a virtual machine) before its first
// sample or snapshot, with 2 MiB pages a few dozen. Small arrays use malloc as usual.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

namespace maskscope {

// Zeroed memory of `bytes` bytes (nullptr for 0); throws std::bad_alloc.
void* big_zeroed_alloc(std::size_t bytes);
void big_free(void* p, std::size_t bytes) noexcept;

// For a program's main(): malloc serves every request of 1 MiB or more with its own mapping, freed
// to the system when freed. glibc otherwise raises that threshold (up to 32 MiB) after the first
// such block is freed, and from then on keeps freed blocks in its per-thread arenas: at n 512
// (2 MiB maps, built on two threads) the command-line tool held about 30 MiB more than the
// snapshots in use. The window does not call it: its panels allocate several 2 MiB temporaries per
// snapshot on the UI thread, and fresh mappings' page faults raised its CPU time per frame (p95
// 22-25 ms -> 29-31 ms at n 512 under Xvfb).
void return_large_blocks_to_system();

// An allocator over big_zeroed_alloc, for std::vector<T, BigAllocator<T>>.
template <class T>
struct BigAllocator {
  using value_type = T;
  BigAllocator() noexcept = default;
  template <class U>
  BigAllocator(const BigAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    if (n > std::size_t(-1) / sizeof(T)) throw std::bad_alloc();
    return static_cast<T*>(big_zeroed_alloc(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { big_free(p, n * sizeof(T)); }
  // A value-initialised element (vector(n), resize(n)) is constructed by writing nothing: in memory
  // fresh from big_zeroed_alloc it is zero already, which is the value of a zero-initialised double
  // or integer. So a new array's pages stay untouched (not faulted in) until something writes them.
  // Growing a vector that was shrunk or cleared would expose the old values: use assign there.
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class A, class... Args>
  void construct(U* p, A&& a, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a), std::forward<Args>(args)...);
  }
  template <class U>
  bool operator==(const BigAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace maskscope
