#include "platform/task/link_check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

#include "gpulab/rng.hpp"
#include "hal/reference.hpp"
#include "platform/task/hal_backend.hpp"
#include "platform/task/seed_streams.hpp"

namespace gpulab::platform::task {

namespace {

constexpr std::uint64_t kSampledRows = 4;
constexpr std::uint64_t kSampledElements = 4;

// |sum(C_{i+1}) - sum_k colsum(C_i)_k rowsum(B_i)_k| over the sum of the
// per-element tolerances (which bound the error of the sum).
double sum_ratio(std::uint64_t n, const std::vector<float>& c_in, const std::vector<float>& b,
                 double got_sum, hal::Tolerance tol) {
  std::vector<double> col(n, 0.0), col_abs(n, 0.0);
  for (std::uint64_t r = 0; r < n; ++r)
    for (std::uint64_t k = 0; k < n; ++k) {
      const double v = c_in[r * n + k];
      col[k] += v;
      col_abs[k] += std::fabs(v);
    }
  double want = 0, magnitude = 0;
  for (std::uint64_t k = 0; k < n; ++k) {
    double row = 0, row_abs = 0;
    for (std::uint64_t c = 0; c < n; ++c) {
      row += b[k * n + c];
      row_abs += std::fabs(static_cast<double>(b[k * n + c]));
    }
    want += col[k] * row;
    magnitude += col_abs[k] * row_abs;
  }
  if (!std::isfinite(got_sum)) return std::numeric_limits<double>::infinity();
  const double allowed = static_cast<double>(n * n) * tol.abs + tol.rel * magnitude;
  return std::fabs(got_sum - want) / allowed;
}

std::vector<float> rows_of(const std::vector<float>& m, const std::vector<std::uint64_t>& rows,
                           std::uint64_t n) {
  std::vector<float> out;
  out.reserve(rows.size() * n);
  for (const std::uint64_t r : rows)
    out.insert(out.end(), m.begin() + static_cast<std::ptrdiff_t>(r * n),
               m.begin() + static_cast<std::ptrdiff_t>((r + 1) * n));
  return out;
}

}  // namespace

// Distinct row indices in [0, n), seeded per link.
std::vector<std::uint64_t> sampled_rows(std::uint64_t seed, std::uint64_t link, std::uint64_t n) {
  Rng rng(derive_seed(seed, Stream::kMatmulSamples, link));
  std::vector<std::uint64_t> all(static_cast<std::size_t>(n));
  for (std::uint64_t i = 0; i < n; ++i) all[i] = i;
  rng.shuffle(std::span(all));
  all.resize(static_cast<std::size_t>(std::min(n, kSampledRows)));
  std::sort(all.begin(), all.end());
  return all;
}

LinkCheck check_link(const hal::Backend& cpu_ref, std::uint64_t seed, std::uint64_t link,
                     std::uint64_t n, const std::vector<float>& c_in, const std::vector<float>& b,
                     const std::vector<float>& c_out) {
  const hal::Tolerance tol = hal::tolerance(hal::DType::kF32);
  const auto rows = sampled_rows(seed, link, n);
  const auto m = static_cast<std::uint64_t>(rows.size());
  const std::vector<float> rows_in = rows_of(c_in, rows, n);
  const std::vector<float> rows_got = rows_of(c_out, rows, n);
  const hal::Reference want = hal::reference_matmul(m, n, n, rows_in, b);
  std::vector<float> rows_ref(rows_got.size());
  matmul_f32(cpu_ref, m, n, n, rows_in.data(), b.data(), rows_ref.data());

  LinkCheck c;
  for (const float v : c_out) c.sum += v;
  c.cpu_ref_ratio = hal::worst_error_ratio(rows_ref, want, tol);
  c.worst_ratio =
      std::max(hal::worst_error_ratio(rows_got, want, tol), sum_ratio(n, c_in, b, c.sum, tol));
  // Spread over the sampled rows: element e of row e, wrapping.
  for (std::uint64_t e = 0; e < kSampledElements && e < rows_got.size(); ++e)
    c.samples.push_back(rows_got[static_cast<std::size_t>((e * (n + 1)) % rows_got.size())]);
  return c;
}

}  // namespace gpulab::platform::task
