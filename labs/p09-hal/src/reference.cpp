#include "hal/reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpulab::hal {

Reference reference_matmul(std::uint64_t m, std::uint64_t n, std::uint64_t k,
                           const std::vector<float>& a, const std::vector<float>& b) {
  Reference r;
  r.value.assign(static_cast<std::size_t>(m * n), 0.0);
  r.magnitude.assign(static_cast<std::size_t>(m * n), 0.0);
  for (std::uint64_t i = 0; i < m; ++i) {
    for (std::uint64_t p = 0; p < k; ++p) {
      const double av = a[i * k + p];
      for (std::uint64_t j = 0; j < n; ++j) {
        const double prod = av * static_cast<double>(b[p * n + j]);
        r.value[i * n + j] += prod;
        r.magnitude[i * n + j] += std::fabs(prod);
      }
    }
  }
  // The output is rounded to the dtype too: make sure a zero-magnitude element
  // still allows for that rounding of its (zero) value.
  for (std::size_t i = 0; i < r.value.size(); ++i)
    r.magnitude[i] = std::max(r.magnitude[i], std::fabs(r.value[i]));
  return r;
}

Reference reference_softmax(std::uint64_t rows, std::uint64_t cols, const std::vector<float>& in) {
  Reference r;
  r.value.assign(static_cast<std::size_t>(rows * cols), 0.0);
  for (std::uint64_t i = 0; i < rows; ++i) {
    double mx = -std::numeric_limits<double>::infinity();
    for (std::uint64_t j = 0; j < cols; ++j) mx = std::max(mx, static_cast<double>(in[i * cols + j]));
    double sum = 0;
    for (std::uint64_t j = 0; j < cols; ++j) {
      const double e = std::exp(static_cast<double>(in[i * cols + j]) - mx);
      r.value[i * cols + j] = e;
      sum += e;
    }
    for (std::uint64_t j = 0; j < cols; ++j) r.value[i * cols + j] /= sum;
  }
  r.magnitude = r.value;
  return r;
}

Tolerance tolerance(DType d) {
  switch (d) {
    case DType::kF32: return {1e-6, 2e-5};
    case DType::kF16: return {1e-6, 2e-3};
    case DType::kBF16: return {1e-6, 1.6e-2};
    case DType::kFP8: return {1e-6, 1.3e-1};
    case DType::kINT8: return {0.5, 0.0};
  }
  return {};
}

double worst_error_ratio(const std::vector<float>& got, const Reference& want, Tolerance tol) {
  if (got.size() != want.value.size()) return std::numeric_limits<double>::infinity();
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(got[i])) return std::numeric_limits<double>::infinity();
    const double err = std::fabs(static_cast<double>(got[i]) - want.value[i]);
    worst = std::max(worst, err / (tol.abs + tol.rel * want.magnitude[i]));
  }
  return worst;
}

}  // namespace gpulab::hal
