// eigen_gemm.hpp on processors other than x86-64: no batched products, so fixed random-weight networks
// take the per-sample path (random_weights.cpp).
#include "core/kernel/network/eigen_gemm.hpp"

#include <cstdlib>

namespace maskscope::rw {

bool eigen_gemm_available() { return false; }
const char* eigen_gemm_level() { return "none"; }

void eigen_gemm(const float*, int, int, const float*, int, float*) { std::abort(); }
void eigen_gemm_nt(const float*, int, int, const float*, int, float*, bool) { std::abort(); }
void eigen_gemm_tn_add(const float*, int, int, const float*, int, float*) { std::abort(); }

}  // namespace maskscope::rw
