// Verification of one link of the matmul chain, C_out = C_in x B (n x n FP32),
// on its own inputs so that rounding never compounds along the chain:
//   - a few seeded rows of C_out against a binary64 reference of the same rows
//     (hal::reference_matmul), and cpu_ref's FP32 result for those rows against
//     the same reference, each under hal::tolerance(FP32);
//   - the sum of all of C_out against sum_k colsum(C_in)_k * rowsum(B)_k in
//     binary64, within the sum of the per-element tolerances, so a gross error
//     (a skipped tile, a wrong row, NaN) outside the sampled rows is caught too.
// O(n^2) per link on the host, against O(n^3) for the matmul itself.
#pragma once

#include <cstdint>
#include <vector>

#include "hal/backend.hpp"

namespace gpulab::platform::task {

struct LinkCheck {
  double sum = 0;              // of every element of C_out (binary64 accumulation)
  std::vector<float> samples;  // a few seeded elements of C_out: the link's checksum
  double worst_ratio = 0;      // C_out's sampled rows and sum: worst error / tolerance
  double cpu_ref_ratio = 0;    // cpu_ref's sampled rows: worst error / tolerance
  [[nodiscard]] bool pass() const { return worst_ratio <= 1.0 && cpu_ref_ratio <= 1.0; }
};

// `seed` and `link` choose the sampled rows. Vectors are n*n row-major.
LinkCheck check_link(const hal::Backend& cpu_ref, std::uint64_t seed, std::uint64_t link,
                     std::uint64_t n, const std::vector<float>& c_in, const std::vector<float>& b,
                     const std::vector<float>& c_out);

// The rows check_link samples (sorted, distinct, at most 4).
std::vector<std::uint64_t> sampled_rows(std::uint64_t seed, std::uint64_t link, std::uint64_t n);

}  // namespace gpulab::platform::task
