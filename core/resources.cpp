// Cost estimates for a run (see resources.hpp).
#include "resources.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "accumulator.hpp"

namespace maskscope {

namespace {
std::uint64_t sums_bytes(const Settings& s) {  // one BlockSums or RunMoments: sum and sum of squares
  return 2 * sizeof(double) * std::uint64_t(AccumLayout(s.n, s.layers).total());
}
}  // namespace

double sample_cost(const Settings& s) { return double(s.n) * s.d * (1.0 + s.layers * (s.n + 4.0)); }

std::int64_t merge_lookahead(const Settings& s, int threads) {
  // Two blocks per worker keep both cores busy; above 16 MB per buffer (n >= 300 at 4 layers),
  // where one sample is a block and takes milliseconds, one is enough and memory stays bounded.
  return sums_bytes(s) > (std::uint64_t(16) << 20) ? threads : 2 * threads;
}

RunCost estimate_cost(const Settings& s, int threads) {
  RunCost c;
  const std::uint64_t nn = std::uint64_t(s.n) * std::uint64_t(s.n);
  const std::uint64_t buffers = std::uint64_t(threads) + std::uint64_t(merge_lookahead(s, threads)) + 2;  // + moments + copy
  const std::uint64_t snapshot = 7 * sizeof(double) * nn * std::uint64_t(s.layers) * 2;  // published + being built
  const std::uint64_t work = std::uint64_t(threads) * sizeof(float) * (6 * std::uint64_t(s.n) * s.d + 3 * nn);
  c.memory_bytes = buffers * sums_bytes(s) + snapshot + work;
  // JSON: six n x n matrices per layer at about 22 characters a number, plus the vectors.
  c.json_bytes = std::uint64_t(s.layers) * (6 * nn + 2 * std::uint64_t(s.n)) * 22 + 4096;
  return c;
}

std::uint64_t available_memory_bytes() {
  // A cap of the user's (or a test's): MASKSCOPE_MEMORY_LIMIT in bytes, if smaller.
  std::uint64_t cap = 0;
  if (const char* env = std::getenv("MASKSCOPE_MEMORY_LIMIT")) cap = std::strtoull(env, nullptr, 10);
  std::uint64_t available = 0;
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream is(line);
    std::string key;
    std::uint64_t kb = 0;
    if (is >> key >> kb && key == "MemAvailable:") available = kb * 1024;
  }
  if (cap > 0 && (available == 0 || cap < available)) return cap;
  return available;
}

std::string bytes_text(std::uint64_t bytes) {
  char buf[32];
  if (bytes >= (std::uint64_t(1) << 30)) std::snprintf(buf, sizeof buf, "%.1f GB", double(bytes) / double(1 << 30));
  else std::snprintf(buf, sizeof buf, "%.0f MB", double(bytes) / double(1 << 20));
  return buf;
}

}  // namespace maskscope
