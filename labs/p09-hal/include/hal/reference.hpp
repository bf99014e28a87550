// Host reference results for conformance checks. Inputs are binary32 values
// already representable in the dtype under test (see quantize()); the
// arithmetic is binary64. Each element also carries its magnitude — for matmul
// sum_k |a_ik * b_kj|, the scale rounding errors grow with — so one tolerance
// formula serves every shape: |got - want| <= abs + rel * magnitude.
#pragma once

#include <cstdint>
#include <vector>

#include "hal/dtype.hpp"
#include "hal/layer_ops.hpp"

namespace gpulab::hal {

struct Reference {
  std::vector<double> value;
  std::vector<double> magnitude;
};

// C = A * B, A m x k and B k x n row-major.
Reference reference_matmul(std::uint64_t m, std::uint64_t n, std::uint64_t k,
                           const std::vector<float>& a, const std::vector<float>& b);
// Row-wise, max-subtracted softmax (magnitude = the value itself).
Reference reference_softmax(std::uint64_t rows, std::uint64_t cols, const std::vector<float>& in);

// ABI 2.2 decoder-layer ops, as gpulab_hal.h defines them. Magnitudes: the
// sum of |terms| of the last reduction (rmsnorm: |x * w| / rms; rope:
// |u cos| + |v sin|; silu_mul: |value|; attention: sum_t w_t |V_t| scaled
// by 1 + the largest |score| term sum, since an error in a score moves every
// weight by that much).
Reference reference_rmsnorm(std::uint64_t rows, std::uint64_t cols, float eps, const std::vector<float>& in,
                            const std::vector<float>& weight);
// All rows x row_stride elements of x after the rotation (the ones outside
// the heads unchanged: a backend must not touch them).
Reference reference_rope(const RopeShape& s, const std::vector<float>& x, const std::vector<std::int32_t>& positions,
                         const std::vector<float>& cos_table, const std::vector<float>& sin_table);
Reference reference_silu_mul(std::uint64_t rows, std::uint64_t cols, const std::vector<float>& in);
Reference reference_paged_attention(const AttentionShape& s, const std::vector<float>& q,
                                    const std::vector<float>& k_cache, const std::vector<float>& v_cache,
                                    const std::vector<std::int32_t>& block_table,
                                    const std::vector<std::int32_t>& seq_ids,
                                    const std::vector<std::int32_t>& positions);

struct Tolerance {
  double abs = 0;
  double rel = 0;
};
// Per dtype: F32 rel 2e-5, F16 rel 2e-3, BF16 rel 1.6e-2, FP8 rel 1.3e-1
// (a few units of the output format's rounding), abs 1e-6 for all.
Tolerance tolerance(DType d);

// max over elements of |got - want| / (abs + rel * magnitude); <= 1 passes.
// Infinity when sizes differ or any element is NaN.
double worst_error_ratio(const std::vector<float>& got, const Reference& want, Tolerance tol);

}  // namespace gpulab::hal
