// CPU references every GPU result is checked against, and the seeded inputs
// both sides use. Matrices are row-major n x n floats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace kernels {

// `count` values uniform in [0, 1) from gpulab::Rng(seed). Non-negative inputs
// keep matmul sums free of cancellation, so a relative tolerance is meaningful.
std::vector<float> random_values(std::size_t count, std::uint64_t seed);

// c[i] = a[i] + b[i] for i < n.
std::vector<float> cpu_vec_add(std::span<const float> a, std::span<const float> b, std::size_t n);

// The rows a run is verified on: all of them up to `full_limit`, otherwise
// `sample` rows spread evenly (first and last included). A full CPU reference
// at n = 4096 is 137 GFLOP, minutes on one core; 64 rows of it take seconds.
std::vector<std::size_t> rows_to_verify(std::size_t n, std::size_t full_limit = 1024,
                                        std::size_t sample = 64);

// Rows `rows` of C = A * B (double accumulation), packed rows.size() x n.
std::vector<float> cpu_matmul_rows(std::span<const float> a, std::span<const float> b,
                                   std::size_t n, std::span<const std::size_t> rows);

// The same rows picked out of a full n x n result.
std::vector<float> gather_rows(std::span<const float> c, std::size_t n,
                               std::span<const std::size_t> rows);

}  // namespace kernels
