#include "kernels/reference.hpp"

#include <algorithm>
#include <gpulab/rng.hpp>
#include <stdexcept>

namespace kernels {

std::vector<float> random_values(std::size_t count, std::uint64_t seed) {
  gpulab::Rng rng(seed);
  std::vector<float> v(count);
  for (auto& x : v) x = static_cast<float>(rng.uniform01());
  return v;
}

std::vector<float> cpu_vec_add(std::span<const float> a, std::span<const float> b, std::size_t n) {
  if (a.size() < n || b.size() < n)
    throw std::invalid_argument("cpu_vec_add: inputs shorter than n");
  std::vector<float> c(n);
  for (std::size_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
  return c;
}

std::vector<std::size_t> rows_to_verify(std::size_t n, std::size_t full_limit, std::size_t sample) {
  std::vector<std::size_t> rows;
  if (n == 0) return rows;
  if (n <= full_limit || sample >= n || sample < 2) {
    rows.resize(n);
    for (std::size_t i = 0; i < n; ++i) rows[i] = i;
    return rows;
  }
  for (std::size_t k = 0; k < sample; ++k) rows.push_back(k * (n - 1) / (sample - 1));
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

std::vector<float> cpu_matmul_rows(std::span<const float> a, std::span<const float> b,
                                   std::size_t n, std::span<const std::size_t> rows) {
  if (a.size() != n * n || b.size() != n * n)
    throw std::invalid_argument("cpu_matmul_rows: A and B must be n x n");
  std::vector<float> out(rows.size() * n);
  std::vector<double> acc(n);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const std::size_t i = rows[r];
    if (i >= n) throw std::invalid_argument("cpu_matmul_rows: row out of range");
    std::fill(acc.begin(), acc.end(), 0.0);
    // i-k-j order: the inner loop streams a row of B, which the compiler vectorises.
    for (std::size_t k = 0; k < n; ++k) {
      const double aik = a[i * n + k];
      const float* brow = &b[k * n];
      for (std::size_t j = 0; j < n; ++j) acc[j] += aik * brow[j];
    }
    for (std::size_t j = 0; j < n; ++j) out[r * n + j] = static_cast<float>(acc[j]);
  }
  return out;
}

std::vector<float> gather_rows(std::span<const float> c, std::size_t n,
                               std::span<const std::size_t> rows) {
  if (c.size() != n * n) throw std::invalid_argument("gather_rows: C must be n x n");
  std::vector<float> out;
  out.reserve(rows.size() * n);
  for (std::size_t i : rows) {
    if (i >= n) throw std::invalid_argument("gather_rows: row out of range");
    out.insert(out.end(), c.begin() + static_cast<std::ptrdiff_t>(i * n),
               c.begin() + static_cast<std::ptrdiff_t>((i + 1) * n));
  }
  return out;
}

}  // namespace kernels
