// Host reference results for conformance checks. Inputs are binary32 values
// already representable in the dtype under test (see quantize()); the
// arithmetic is binary64. Each element also carries its magnitude — for matmul
// sum_k |a_ik * b_kj|, the scale rounding errors grow with — so one tolerance
// formula serves every shape: |got - want| <= abs + rel * magnitude.
#pragma once

#include <cstdint>
#include <vector>

#include "hal/dtype.hpp"

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
