// The kernel a run uses (kernel_info.hpp).
#include "core/run/kernel_info.hpp"

#include "core/kernel/lane/lane_kernel.hpp"
#include "core/kernel/network/eigen_gemm.hpp"
#include "core/kernel/network/random_weights.hpp"
#include "core/kernel/network/random_weights_bartlett.hpp"
#include "core/model/input_basis.hpp"

namespace maskscope {

std::string kernel_name(const Settings& s, KernelChoice kernel) {
  // "lanes-8": sums in trees of eight lanes (the 16-lane kernel's "lanes" summed a batch in one tree
  // of 16 pairs, so its parts must not be merged with these); "lanes-8 unfused": the portable level's
  // multiply-adds rounded twice (lane_vectors.inc), other bits.
  if (runs_in_lanes(s, input_basis(s), kernel)) return lane_isa_portable() ? "lanes-8 unfused" : "lanes-8";
  // A fixed random-weight network on AVX2: Eigen's products on batches of samples (random_weights_batched.hpp),
  // named by the level of the steps between the products (baseline in builds without target clones: other bits),
  // and by the products' level when it is AVX-512's (eigen_gemm.hpp: they round differently from AVX2's).
  if (s.random_weights() && kernel != KernelChoice::per_sample && RandomWeightsModel::batched(s)) {
    const std::string products = rw::eigen_gemm_level();
    return std::string("batched ") + kernel_clone_level() + (products == "x86-64-v3" ? "" : ", products " + products);
  }
  // Per-sample weights: the draws' triangular factors times their normals (random_weights_math.hpp), and at
  // mean 0 without RoPE the heads from Bartlett factors (random_weights_bartlett.hpp).
  const char* bartlett = "";
  if (s.random_weights() && s.weights == WeightsMode::per_sample)
    bartlett = rw::bartlett_exact(s) ? " triangular bartlett" : " triangular";
  return std::string("per-sample ") + kernel_clone_level() + bartlett;
}

std::string training_kernel_name() { return std::string("products ") + rw::eigen_gemm_level(); }

}  // namespace maskscope
