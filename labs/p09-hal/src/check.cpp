#include "hal/check.hpp"

#include <limits>
#include <vector>

#include "gpulab/rng.hpp"
#include "hal/reference.hpp"

namespace gpulab::hal {

namespace {
// Random values already representable in `d`, so the reference sees exactly
// what the backend sees and input rounding is not counted as error.
std::vector<float> random_values(Rng& rng, DType d, std::uint64_t count, float lo, float hi) {
  std::vector<float> v(static_cast<std::size_t>(count));
  for (float& x : v) x = quantize(d, lo + (hi - lo) * static_cast<float>(rng.uniform01()));
  return v;
}

CheckResult finish(Status s, DType d, const std::vector<std::uint8_t>& out, std::uint64_t count,
                   const Reference& want) {
  CheckResult r;
  r.declared = true;
  r.status = std::move(s);
  if (!r.status.ok()) {
    r.worst_ratio = std::numeric_limits<double>::infinity();
    return r;
  }
  r.worst_ratio = worst_error_ratio(decode(d, out.data(), count), want, tolerance(d));
  r.pass = r.worst_ratio <= 1.0;
  return r;
}
}  // namespace

CheckResult check_matmul(const Backend& b, DType d, std::uint64_t m, std::uint64_t n, std::uint64_t k,
                         std::uint64_t seed) {
  if (!b.declares(Op::kMatmul) || !b.declares(d)) return {};
  Rng rng(seed);
  const auto a = random_values(rng, d, m * k, -1.0f, 1.0f);
  const auto bm = random_values(rng, d, k * n, -1.0f, 1.0f);
  const auto ea = encode(d, a), eb = encode(d, bm);
  // Pre-fill C with a pattern: a backend that skips writing (k == 0) is caught.
  std::vector<std::uint8_t> c = encode(d, std::vector<float>(static_cast<std::size_t>(m * n), 7.0f));
  Status s = b.matmul_host(d, m, n, k, ea.data(), eb.data(), c.data());
  return finish(std::move(s), d, c, m * n, reference_matmul(m, n, k, a, bm));
}

CheckResult check_softmax(const Backend& b, DType d, std::uint64_t rows, std::uint64_t cols,
                          std::uint64_t seed) {
  if (!b.declares(Op::kSoftmax) || !b.declares(d)) return {};
  Rng rng(seed);
  const auto in = random_values(rng, d, rows * cols, -4.0f, 4.0f);
  const auto ein = encode(d, in);
  std::vector<std::uint8_t> out(ein.size(), 0);
  Status s = b.softmax_host(d, rows, cols, ein.data(), out.data());
  return finish(std::move(s), d, out, rows * cols, reference_softmax(rows, cols, in));
}

}  // namespace gpulab::hal
