// The parameter-free forward pass (docs/model.md sections 1-4) with 16 or 8 samples across the lanes of
// every vector (lane_kernel.hpp). Built without the compiler's floating-point contraction (the fused
// multiply-adds are written out: fmadd) and with the same body compiled for x86-64-v4 and x86-64-v3,
// chosen at run time: each lane does the same correctly rounded operations in the same order on both,
// so the bits agree. The portable level (baseline x86-64, WebAssembly) compiles it with its
// multiply-adds unfused: its own bits, kernel "lanes-8 unfused".
#include "core/kernel/lane/lane_kernel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>

#include "core/kernel/kernel_args.hpp"
#include "core/model/cost.hpp"
#include "core/kernel/simd.hpp"

namespace maskscope {

namespace {

// n vectors of up to 16 floats on 64-byte boundaries (std::vector would drop a vector type's
// alignment), read as vectors of the batch width in use (at()).
class LaneArray {
 public:
  static constexpr std::size_t kLaneBytes = 64;
  explicit LaneArray(std::size_t n)
      : n_(n), p_(static_cast<float*>(std::aligned_alloc(kLaneBytes, kLaneBytes * std::max<std::size_t>(n, 1)))) {
    if (!p_) throw std::bad_alloc();
    std::fill(p_, p_ + n_ * (kLaneBytes / sizeof(float)), 0.0f);
  }
  ~LaneArray() { std::free(p_); }
  LaneArray(const LaneArray&) = delete;
  LaneArray& operator=(const LaneArray&) = delete;
  std::size_t size() const { return n_; }
  float* raw() const { return p_; }
  friend void swap(LaneArray& a, LaneArray& b) noexcept {
    std::swap(a.n_, b.n_);
    std::swap(a.p_, b.p_);
  }

 private:
  std::size_t n_;
  float* p_;
};

}  // namespace

struct LaneKernel::Buffers {
  LaneArray x, y, q, xn, maps, g, inv_norm, norms, rows_prev, rows_cur;  // maps: S, A, C (n x n each)
  std::size_t nn;                                                        // n * n: the cells of one map
  std::vector<std::uint32_t>
      cells;  // a layer's packed S, A and cosine cells, in AccumLayout order: their vectors in maps
  std::vector<float> ax, av, adraws;       // one sample's draws (kernel_args.hpp draw_inputs)
  std::vector<int> zeros;                  // every row's first key for the cosines: 0
  std::vector<int> width, first_wide_row;  // row_widths(k) and, per coordinate e, the first row wider than e
  explicit Buffers(const KernelArgs& k)
      : x(std::size_t(k.n) * k.d),
        y(x.size()),
        q(x.size()),
        xn(x.size()),
        maps(3 * std::size_t(k.n) * k.n),
        g(std::size_t(k.n) * k.n),
        inv_norm(std::size_t(k.n)),
        norms(std::size_t(k.n)),
        rows_prev(2 * std::size_t(k.n)),
        rows_cur(2 * std::size_t(k.n)),
        nn(std::size_t(k.n) * k.n),
        ax(x.size()),
        av(std::size_t(k.d)),
        adraws(k.basis.normals),
        zeros(std::size_t(k.n), 0),
        width(row_widths(k)),
        first_wide_row(std::size_t(k.d), k.n) {
    const std::size_t n = std::size_t(k.n);
    for (int e = 0; e < k.d; ++e)
      for (int i = k.n - 1; i >= 0 && width[std::size_t(i)] > e; --i) first_wide_row[std::size_t(e)] = i;
    for (std::size_t map = 0; map < 2; ++map)
      for (std::size_t i = 0; i < n; ++i)
        for (int j = k.lo[i]; j <= k.hi[i]; ++j) cells.push_back(std::uint32_t(map * nn + i * n + std::size_t(j)));
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j <= i; ++j) cells.push_back(std::uint32_t(2 * nn + i * n + j));
    if (cells.size() != 2 * k.layout->map_cells + k.layout->triangle())
      throw std::logic_error("lane kernel: map cells");
  }
};

namespace {

using Buffers = LaneKernel::Buffers;

constexpr int kMaxLaneN = 128;  // use_lane_kernel's largest n

#if MASKSCOPE_TARGET_CLONES && defined(__x86_64__)
#define MASKSCOPE_LANE_FUSED 1
// Sixteen samples per batch: one AVX-512 register per vector.
namespace w16 {
#define MASKSCOPE_LANE_W 16
constexpr int W = MASKSCOPE_LANE_W;
#include "core/kernel/lane/lane_kernel_body.inc"
#undef MASKSCOPE_LANE_W
}  // namespace w16

// Eight samples per batch: one AVX2 register per vector. Its sums equal w16's bit for bit: w16 adds
// a batch's lanes 0-7 and then its lanes 8-15, each as one batch of w8 would.
namespace w8 {
#define MASKSCOPE_LANE_W 8
constexpr int W = MASKSCOPE_LANE_W;
#include "core/kernel/lane/lane_kernel_body.inc"
#undef MASKSCOPE_LANE_W
}  // namespace w8
#undef MASKSCOPE_LANE_FUSED
#endif

// The portable body (baseline x86-64, WebAssembly): eight samples per batch, its multiply-adds
// unfused (kernel "lanes-8 unfused": lane_vectors.inc's fmadd). Its vectors are two 128-bit registers
// (SSE2, wasm SIMD128) instead of four at sixteen: fewer spilled, 1.36x (n 10) and 2.0x (n 50) faster
// natively, and the same bits (the sums' trees of 8, as w8 and w16).
namespace wp {
#define MASKSCOPE_LANE_FUSED 0
#define MASKSCOPE_LANE_W 8
constexpr int W = MASKSCOPE_LANE_W;
#include "core/kernel/lane/lane_kernel_body.inc"
#undef MASKSCOPE_LANE_W
#undef MASKSCOPE_LANE_FUSED
}  // namespace wp

using LaneFn = bool (*)(const KernelArgs&, Buffers&, SampleWork&, std::uint64_t, std::int64_t, BlockSums*,
                        std::vector<SampleTrace>*, const std::atomic<bool>*);

#if MASKSCOPE_TARGET_CLONES && defined(__x86_64__)
[[gnu::target("arch=x86-64-v4")]] bool run_lanes_v4(const KernelArgs& k, Buffers& b, SampleWork& w, std::uint64_t first,
                                                    std::int64_t count, BlockSums* sums,
                                                    std::vector<SampleTrace>* traces, const std::atomic<bool>* cancel) {
  return w16::run_lanes(k, b, w, first, count, sums, traces, cancel);
}
[[gnu::target("arch=x86-64-v3")]] bool run_lanes_v3(const KernelArgs& k, Buffers& b, SampleWork& w, std::uint64_t first,
                                                    std::int64_t count, BlockSums* sums,
                                                    std::vector<SampleTrace>* traces, const std::atomic<bool>* cancel) {
  return w8::run_lanes(k, b, w, first, count, sums, traces, cancel);
}
#endif
bool run_lanes_base(const KernelArgs& k, Buffers& b, SampleWork& w, std::uint64_t first, std::int64_t count,
                    BlockSums* sums, std::vector<SampleTrace>* traces, const std::atomic<bool>* cancel) {
  return wp::run_lanes(k, b, w, first, count, sums, traces, cancel);
}

// The lowest level's name: baseline x86-64, or WebAssembly in the browser build (the same portable
// body, its vectors as wasm SIMD128 with -msimd128; the same bits as baseline x86-64).
#if defined(__wasm_simd128__)
constexpr const char* kPortableLevel = "wasm-simd128";
#elif defined(__wasm__)
constexpr const char* kPortableLevel = "wasm";
#else
constexpr const char* kPortableLevel = "x86-64";
#endif

struct Level {
  const char* name;
  LaneFn fn;
  bool supported;
};

const std::vector<Level>& levels() {
  static const std::vector<Level> v = [] {
    std::vector<Level> l;
#if MASKSCOPE_TARGET_CLONES && defined(__x86_64__)
    __builtin_cpu_init();
    l.push_back({"x86-64-v4", run_lanes_v4, __builtin_cpu_supports("x86-64-v4") != 0});
    l.push_back({"x86-64-v3", run_lanes_v3, __builtin_cpu_supports("x86-64-v3") != 0});
#endif
    l.push_back({kPortableLevel, run_lanes_base, true});
    return l;
  }();
  return v;
}

// The level in use: the best supported unless set_lane_isa chose another.
std::atomic<int>& chosen_level() {
  static std::atomic<int> chosen = [] {
    const auto& v = levels();
    // MASKSCOPE_LANE_ISA=x86-64-v3 (for example) picks a lower level, for benchmarks; the numbers are the same.
    const char* want = std::getenv("MASKSCOPE_LANE_ISA");
    for (std::size_t i = 0; want && i < v.size(); ++i)
      if (v[i].supported && std::string(want) == v[i].name) return int(i);
    for (std::size_t i = 0; i < v.size(); ++i)
      if (v[i].supported) return int(i);
    return int(v.size() - 1);
  }();
  return chosen;
}

}  // namespace

bool use_lane_kernel(const Settings& s, const InputBasis& basis) {
  // Measured on AVX-512 (one thread, whole batches) against the per-sample kernel: 1.9x at n 10-64,
  // d 64; 1.7x at n 96-128, d 64; 1.2-1.4x with RoPE at n 32-64, d 128-1024; even at n 16, d 2048.
  // With AVX2 (8 lanes): 2.7x at n 10, 1.5-1.65x at n 32-64, 1.3x at n 96 (d 64) and with RoPE at
  // n 32, d 128.
  // Blocks must hold whole batches (a block of 4 samples would leave 12 lanes idle), and a batch's
  // buffers stay under 16 MiB per thread.
  if (s.random_weights() || s.n > kMaxLaneN || samples_per_block(s) < 16) return false;
  const std::size_t bytes = LaneArray::kLaneBytes * (6 * std::size_t(s.n) * basis.dim + 4 * std::size_t(s.n) * s.n);
  return bytes <= (std::size_t(16) << 20);
}

bool lane_kernel_native() {
#if MASKSCOPE_TARGET_CLONES && defined(__x86_64__)
  static const bool native = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("x86-64-v4") != 0 || __builtin_cpu_supports("x86-64-v3") != 0;
  }();
  return native;
#elif defined(__wasm__)
  return true;  // the browser build: the lanes in wasm beat its per-sample kernel (docs/web.md)
#else
  return false;
#endif
}

bool runs_in_lanes(const Settings& s, const InputBasis& basis, KernelChoice kernel) {
  const bool wanted = kernel == KernelChoice::lanes || (kernel == KernelChoice::automatic && lane_kernel_native());
  return wanted && use_lane_kernel(s, basis);
}

const char* kernel_clone_level() {
#if MASKSCOPE_TARGET_CLONES && defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v3")) return "x86-64-v3";  // target_clones' resolver picks the same
#endif
#if defined(__wasm__)
  return "wasm";  // no fused multiply-adds, as baseline x86-64 (docs/web.md)
#else
  return "x86-64";
#endif
}

bool lane_isa_portable() { return lane_isa() == kPortableLevel; }

LaneKernel::LaneKernel(const KernelArgs& k) : b_(std::make_unique<Buffers>(k)) {}
LaneKernel::~LaneKernel() = default;

bool LaneKernel::run(const KernelArgs& k, SampleWork& w, std::uint64_t first_sample, std::int64_t count,
                     BlockSums* sums, std::vector<SampleTrace>* traces, const std::atomic<bool>* cancel) {
  const auto& v = levels();
  return v[std::size_t(chosen_level().load())].fn(k, *b_, w, first_sample, count, sums, traces, cancel);
}

std::string lane_isa() { return levels()[std::size_t(chosen_level().load())].name; }

bool set_lane_isa(const std::string& level) {
  const auto& v = levels();
  for (std::size_t i = 0; i < v.size(); ++i)
    if (level == v[i].name && v[i].supported) {
      chosen_level().store(int(i));
      return true;
    }
  return false;
}

std::vector<std::string> lane_isas_available() {
  std::vector<std::string> names;
  for (const Level& l : levels())
    if (l.supported) names.push_back(l.name);
  return names;
}

}  // namespace maskscope
