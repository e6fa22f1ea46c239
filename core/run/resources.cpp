// Cost estimates for a run (see resources.hpp).
#include "core/run/resources.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/stats/accumulator.hpp"
#include "core/model/cost.hpp"

namespace maskscope {

namespace {
std::uint64_t sums_bytes(const Settings& s) {  // one BlockSums or RunMoments: sum and sum of squares
  return 2 * sizeof(double) * std::uint64_t(accum_layout(s).total());
}
}  // namespace

std::uint64_t network_bytes(const Settings& s) {
  if (!s.random_weights() || s.weights != WeightsMode::fixed) return 0;
  const std::uint64_t d = std::uint64_t(s.d);
  return sizeof(float) * (std::uint64_t(s.vocab) * d + std::uint64_t(s.layers) * (s.mlp ? 12 : 4) * d * d);
}

std::int64_t merge_lookahead(const Settings& s, int threads) {
  // Two blocks per worker keep both cores busy; above 16 MB per buffer (n >= 300 at 4 layers),
  // where one sample is a block and takes milliseconds, one is enough and memory stays bounded.
  return sums_bytes(s) > (std::uint64_t(16) << 20) ? threads : 2 * threads;
}

std::uint64_t moments_bytes(const Settings& s) { return sums_bytes(s); }

std::uint64_t worker_bytes(const Settings& s) {
  const std::uint64_t nn = std::uint64_t(s.n) * std::uint64_t(s.n);
  const std::uint64_t nd = std::uint64_t(s.n) * s.d;
  // A fixed random-weight network's worker holds the rows of a batch of B samples (14 B n d floats)
  // and its heads' maps, plus Eigen's packed panels (under 2 MB); per-sample weights hold one sample.
  const bool batched = s.random_weights() && s.weights == WeightsMode::fixed;
  const std::uint64_t B = batched ? std::uint64_t(fixed_batch_samples(s)) : 1;
  return s.random_weights() ? sizeof(float) * (std::max<std::uint64_t>(22, 14 * B + 3) * nd +
                                               (2 * B * std::uint64_t(s.heads) + 5) * nn) +
                                  2 * sizeof(double) * nn + (batched ? std::uint64_t(2) << 20 : 0)
                            : sizeof(float) * (6 * nd + 3 * nn);
}

RunCost estimate_cost(const Settings& s, int threads) {
  RunCost c;
  const std::uint64_t nn = std::uint64_t(s.n) * std::uint64_t(s.n);
  // Each sums_bytes: the open segment (1), the exact sums (48 bytes a value: 3), and snapshots (each
  // keeps its moments, snapshot.hpp): the published one, the one being built, and an older one a
  // reader such as the window may still hold (3).
  const std::uint64_t buffers = 1 + 3 + 3;
  const std::uint64_t work = std::uint64_t(threads) * worker_bytes(s);
  // Block buffers: one per block in flight (a worker takes one only with a block), at most the
  // lookahead. One-sample blocks of the parameter-free model hold no squares
  // (BlockSums::squares_implied): those are half size.
  const std::uint64_t blocks = std::uint64_t(merge_lookahead(s, threads));
  const std::uint64_t block_bytes =
      !s.random_weights() && samples_per_block(s) == 1 ? sums_bytes(s) / 2 : sums_bytes(s);
  c.memory_bytes = buffers * sums_bytes(s) + blocks * block_bytes + work + network_bytes(s);  // the network is shared
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

std::string memory_shortfall(std::uint64_t need) {
  const std::uint64_t available = available_memory_bytes();
  if (available == 0 || need <= available / 10 * 8) return "";
  return "about " + bytes_text(need) + "; this machine has " + bytes_text(available) + " available" +
         (std::getenv("MASKSCOPE_MEMORY_LIMIT") ? " (MASKSCOPE_MEMORY_LIMIT)" : "");
}

RunMemoryPlan plan_run_memory(const Settings& s, int wanted, std::uint64_t extra) {
  RunMemoryPlan plan;
  plan.threads = std::max(1, wanted);
  plan.bytes = estimate_cost(s, plan.threads).memory_bytes + extra;
  while (plan.threads > 1 && !memory_shortfall(plan.bytes).empty())
    plan.bytes = estimate_cost(s, --plan.threads).memory_bytes + extra;
  const std::string why = memory_shortfall(plan.bytes);
  if (why.empty()) return plan;
  const bool net = network_bytes(s) > 0;
  plan.refusal = "n = " + std::to_string(s.n) + ", layers = " + std::to_string(s.layers) +
                 (net ? ", d = " + std::to_string(s.d) + ", vocab = " + std::to_string(s.vocab) +
                            " (a fixed network of " + bytes_text(network_bytes(s)) + ", its embedding table included)"
                      : "") +
                 " needs " + why + " even with 1 thread. Lower " + (net ? "d, vocab, " : "") + "n or layers.";
  return plan;
}

std::string bytes_text(std::uint64_t bytes) {
  char buf[32];
  if (bytes >= (std::uint64_t(1) << 30)) std::snprintf(buf, sizeof buf, "%.1f GB", double(bytes) / double(1 << 30));
  else std::snprintf(buf, sizeof buf, "%.0f MB", double(bytes) / double(1 << 20));
  return buf;
}

double peak_resident_mib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) / 1024.0;
  return 0.0;
}

bool reset_peak_resident() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";  // resets the peak resident set size (proc(5))
  out.flush();
  return bool(out);
}

}  // namespace maskscope
