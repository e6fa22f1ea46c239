// bench's GEMM reference (gemm_reference.hpp).
#include "core/kernel/network/gemm_reference.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "core/kernel/network/eigen_gemm.hpp"

namespace maskscope {

double gemm_reference_gflops(int rows, int inner, int cols, int threads, double seconds) {
  if (!rw::eigen_gemm_available()) return 0.0;
  std::atomic<std::int64_t> products{0};
  const auto start = std::chrono::steady_clock::now();
  auto work = [&](int t) {
    std::vector<float> a(std::size_t(rows) * inner), b(std::size_t(inner) * cols), c(std::size_t(rows) * cols);
    for (std::size_t e = 0; e < a.size(); ++e) a[e] = float((e * 7 + std::size_t(t)) % 13) / 13.0f - 0.5f;
    for (std::size_t e = 0; e < b.size(); ++e) b[e] = float((e * 5) % 11) / 11.0f - 0.5f;
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds) {
      rw::eigen_gemm(a.data(), rows, inner, b.data(), cols, c.data());
      products.fetch_add(1, std::memory_order_relaxed);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (auto& t : pool) t.join();
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return 2.0 * rows * inner * double(cols) * double(products.load()) / elapsed / 1e9;
}

}  // namespace maskscope
