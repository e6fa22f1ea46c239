// The parameter-free kernel with samples across SIMD lanes (structure of arrays): sixteen samples
// at a time with AVX-512, eight with AVX2 and at the portable level, each in its own lane of every vector, so that no
// step needs a horizontal sum and rows as short as n = 10 fill whole registers. Used where it is faster (small n and
// width, `use_lane_kernel`); the per-sample kernel of simulator.cpp serves the rest. Internal to core/.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/stats/accumulator.hpp"
#include "core/model/settings.hpp"
#include "core/kernel/kernel_choice.hpp"
#include "core/model/input_basis.hpp"
#include "core/model/trace.hpp"

namespace maskscope {

struct SampleWork;

struct KernelArgs;  // kernel_args.hpp

// Whether settings with this input basis suit the lane kernel (small n and width).
bool use_lane_kernel(const Settings& s, const InputBasis& basis);

// Whether runs use the lane kernel where it suits the settings: on processors with AVX-512
// (x86-64-v4, 16 samples per batch) or AVX2 (x86-64-v3, 8 per batch; measured 1.3-2.7x the
// per-sample kernel on one AMD EPYC core at n 10-96). Baseline x86-64 keeps the per-sample kernel.
bool lane_kernel_native();

// Whether a Simulator with this choice runs these settings in lanes (KernelChoice).
bool runs_in_lanes(const Settings& s, const InputBasis& basis, KernelChoice kernel);

// The level the kernels' target clones run at on this processor: "x86-64-v3" (AVX2 and FMA), "wasm", or
// "x86-64" (no fused multiply-adds; also every build without target clones, the sanitizers'). Named in
// kernel_name (core/run/kernel_info.hpp).
const char* kernel_clone_level();
// Whether the lane kernel runs at the portable level (lane_isa() is baseline x86-64 or WebAssembly): its
// multiply-adds are then rounded twice, other bits (kernel_name "lanes-8 unfused").
bool lane_isa_portable();

class LaneKernel {
 public:
  explicit LaneKernel(const KernelArgs& k);
  ~LaneKernel();
  LaneKernel(const LaneKernel&) = delete;
  LaneKernel& operator=(const LaneKernel&) = delete;

  // Samples first_sample .. first_sample + count - 1, in batches of 16 or 8 from first_sample. Adds
  // to `sums` when given (each quantity's lanes in fixed trees of 8, in sample order: the same bits
  // for either batch width), and records sample first_sample + t into (*traces)[t] when given (`w`
  // is the scratch for it).
  // A lane's numbers depend only on its sample: the batch it shares does not change them.
  // Returns false if cancelled (checked every batch and layer).
  bool run(const KernelArgs& k, SampleWork& w, std::uint64_t first_sample, std::int64_t count, BlockSums* sums,
           std::vector<SampleTrace>* traces, const std::atomic<bool>* cancel);

  struct Buffers;

 private:
  std::unique_ptr<Buffers> b_;
};

// The instruction set the lane kernel runs with: "x86-64-v4" (AVX-512), "x86-64-v3" (AVX2) or
// "x86-64" (baseline; "wasm-simd128" in the browser), the best the processor has. v4 and v3 give the
// same bits: the lane kernel is compiled without the compiler's contraction and uses only lane-wise,
// correctly rounded operations, its fused multiply-adds written out (vfmadd). The baseline runs them
// as a multiply and an add: other bits (kernel_name "lanes-8 unfused"), the same in the browser.
// set_lane_isa (for tests and benchmarks) returns false for a level the processor lacks.
std::string lane_isa();
bool set_lane_isa(const std::string& level);
std::vector<std::string> lane_isas_available();

}  // namespace maskscope
