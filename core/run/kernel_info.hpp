// What the front ends (CLI, window, web page, Python) know of the kernels: the name of the kernel that a run
// with given settings uses, as results, .msum and .msweep files record it. The kernels' headers stay internal
// to core/.
#pragma once

#include <string>

#include "core/kernel/kernel_choice.hpp"
#include "core/model/settings.hpp"

namespace maskscope {

// The kernel a run with these settings uses on this processor: "lanes-8" (the lane kernel on AVX2 and
// AVX-512: both levels and batch widths give the same bits), "lanes-8 unfused" (its portable level: baseline
// x86-64 when chosen, WebAssembly), "per-sample x86-64-v3" (AVX2 and FMA) or "per-sample x86-64" (no FMA);
// random weights: "batched x86-64-v3" (a fixed network on AVX2; "batched x86-64" in builds without target
// clones, the sanitizers'; with ", products x86-64-v4" where its products run on AVX-512, eigen_gemm.hpp), and
// per-sample weights the per-sample names with " triangular" (their draws' products) or " triangular bartlett"
// (Bartlett attention, random_weights_bartlett.hpp). Runs agree bit for bit only within one kernel name.
std::string kernel_name(const Settings& s, KernelChoice kernel = KernelChoice::automatic);

// The training engine's kernel on this processor (core/train/): "products x86-64-v4" (Eigen's GEMM on AVX-512),
// "products x86-64-v3" (AVX2 + FMA) or "products none" (plain loops). Checkpoints agree bit for bit within one.
std::string training_kernel_name();

}  // namespace maskscope
