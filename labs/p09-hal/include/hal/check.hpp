// One correctness check of one backend: seeded random inputs, quantized to the
// dtype, run through the backend, compared with the binary64 host reference
// under the dtype's tolerance. What hal-demo's conformance pass and the tests
// use; hal-conformance builds its matrix from the same calls.
#pragma once

#include <cstdint>

#include "hal/backend.hpp"
#include "hal/dtype.hpp"
#include "hal/status.hpp"

namespace gpulab::hal {

struct CheckResult {
  bool declared = false;  // the backend declares this op and dtype (else nothing ran: "n/a")
  bool pass = false;      // ran, returned OK, and every element is within tolerance
  double worst_ratio = 0;  // worst |error| / tolerance (<= 1 passes); infinity for NaN
  Status status;           // what the backend returned
};

// Inputs uniform in [-1, 1) for matmul and [-4, 4) for softmax, from gpulab::Rng(seed).
CheckResult check_matmul(const Backend& b, DType d, std::uint64_t m, std::uint64_t n, std::uint64_t k,
                         std::uint64_t seed);
CheckResult check_softmax(const Backend& b, DType d, std::uint64_t rows, std::uint64_t cols,
                          std::uint64_t seed);

}  // namespace gpulab::hal
