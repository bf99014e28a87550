#include "conformance/reference.hpp"

#include <algorithm>
#include <cmath>

#include "conformance/tolerance.hpp"
#include "gpulab/rng.hpp"

namespace conformance {
namespace {

// Signed values spread over several binades (2^-3 .. 2), rounded into the
// dtype: small enough that no matmul of the matrix overflows FP8 (max 448).
std::vector<double> random_values(gpulab::Rng& rng, DType t, std::uint64_t count) {
  std::vector<double> v(count);
  for (auto& x : v) {
    const double mag =
        (0.5 + 0.5 * rng.uniform01()) * std::ldexp(1.0, static_cast<int>(rng.uniform_int(-3, 1)));
    x = round_to(t, rng.bernoulli(0.5) ? -mag : mag);
  }
  return v;
}

}  // namespace

std::vector<double> reference_matmul(const std::vector<double>& a, const std::vector<double>& b,
                                     std::uint64_t m, std::uint64_t n, std::uint64_t k) {
  std::vector<double> c(m * n, 0.0);
  for (std::uint64_t i = 0; i < m; ++i)
    for (std::uint64_t j = 0; j < n; ++j) {
      double s = 0;
      for (std::uint64_t p = 0; p < k; ++p) s += a[i * k + p] * b[p * n + j];
      c[i * n + j] = s;
    }
  return c;
}

std::vector<double> reference_softmax(const std::vector<double>& in, std::uint64_t rows,
                                      std::uint64_t cols) {
  std::vector<double> out(rows * cols);
  for (std::uint64_t r = 0; r < rows; ++r) {
    const double* x = in.data() + r * cols;
    const double mx = *std::max_element(x, x + cols);
    double sum = 0;
    for (std::uint64_t j = 0; j < cols; ++j) sum += std::exp(x[j] - mx);
    for (std::uint64_t j = 0; j < cols; ++j) out[r * cols + j] = std::exp(x[j] - mx) / sum;
  }
  return out;
}

CaseData make_case_data(const Case& c) {
  gpulab::Rng rng(c.seed);
  CaseData d;
  const std::uint64_t m = c.shape.m, n = c.shape.n, k = c.shape.k;
  switch (c.op) {
    case Op::kBuffer: {
      std::vector<double> bytes(m);
      for (auto& b : bytes) b = static_cast<double>(rng.uniform_int(0, 255));
      d.inputs = {bytes};
      d.exact = bytes;
      d.bound.assign(m, 0.0);  // bit-exact
      break;
    }
    case Op::kMatmul: {
      d.inputs = {random_values(rng, c.dtype, m * k), random_values(rng, c.dtype, k * n)};
      const auto& a = d.inputs[0];
      const auto& b = d.inputs[1];
      d.exact = reference_matmul(a, b, m, n, k);
      d.bound.resize(m * n);
      for (std::uint64_t i = 0; i < m; ++i)
        for (std::uint64_t j = 0; j < n; ++j) {
          double mag = 0;
          for (std::uint64_t p = 0; p < k; ++p) mag += std::fabs(a[i * k + p] * b[p * n + j]);
          d.bound[i * n + j] =
              element_bound(c.dtype, d.exact[i * n + j], static_cast<double>(k), mag);
        }
      break;
    }
    case Op::kSoftmax: {
      std::vector<double> in(m * n);
      for (std::uint64_t r = 0; r < m; ++r) {
        const double shift = kSoftmaxRowShift * static_cast<double>(static_cast<int>(r % 3) - 1);
        for (std::uint64_t j = 0; j < n; ++j)
          in[r * n + j] = round_to(c.dtype, shift + 8.0 * rng.uniform01() - 4.0);
      }
      d.exact = reference_softmax(in, m, n);
      d.bound.resize(m * n);
      for (std::uint64_t r = 0; r < m; ++r) {
        const double* x = in.data() + r * n;
        const double mx = *std::max_element(x, x + n);
        for (std::uint64_t j = 0; j < n; ++j) {
          // Relative error of a binary32 softmax: the row sum (n terms), x - max
          // rounded then exponentiated (|x - max| units), exp and the divide
          // (a few ulps; OpenCL allows exp 3 ulp): n + |x - max| + 16 units.
          const double y = d.exact[r * n + j];
          const double terms = static_cast<double>(n) + std::fabs(x[j] - mx) + 16.0;
          d.bound[r * n + j] = element_bound(c.dtype, y, terms, y);
        }
      }
      d.inputs = {std::move(in)};
      break;
    }
  }
  return d;
}

}  // namespace conformance
