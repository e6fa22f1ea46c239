// Which kernel runs the parameter-free model (Simulator, lane_kernel.hpp).
#pragma once

namespace maskscope {

// `automatic` takes the lane kernel (lane_kernel.hpp) where it suits the settings and the processor
// has AVX2 or AVX-512, `per_sample` never (the rounding of the per-sample helpers that `analyze`
// shares), `lanes` wherever it suits the settings (tests).
enum class KernelChoice { automatic, per_sample, lanes };

}  // namespace maskscope
