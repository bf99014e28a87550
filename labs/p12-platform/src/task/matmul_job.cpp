#include "platform/task/matmul_job.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "gpulab/errors.hpp"
#include "gpulab/rng.hpp"
#include "gpulab/timing.hpp"
#include "platform/task/hal_backend.hpp"
#include "platform/task/link_check.hpp"
#include "platform/task/seed_streams.hpp"

namespace gpulab::platform::task {

namespace {

std::vector<float> uniform_matrix(std::uint64_t seed, std::uint64_t count, float scale) {
  Rng rng(seed);
  std::vector<float> v(static_cast<std::size_t>(count));
  for (float& x : v) x = scale * static_cast<float>(2.0 * rng.uniform01() - 1.0);
  return v;
}

hal::DeviceBuffer allocate(const hal::Backend& b, std::uint64_t bytes) {
  auto buf = b.allocate(bytes);
  if (!buf)
    throw RunError(
        fmt::format("{}: cannot allocate {} bytes: {}", b.name(), bytes, buf.error().message));
  return std::move(buf.value());
}

void check(const hal::Status& s, const hal::Backend& b, std::string_view what) {
  if (!s.ok()) throw RunError(fmt::format("{} {} failed: {}", b.name(), what, hal::describe(s)));
}

}  // namespace

void validate(const MatmulOptions& o) {
  if (o.n < 1 || o.n > kMaxMatmulN)
    throw UsageError(fmt::format("--n must be 1..{}; got {}", kMaxMatmulN, o.n));
  if (o.chain < 1 || o.chain > kMaxMatmulChain)
    throw UsageError(fmt::format("--chain must be 1..{}; got {}", kMaxMatmulChain, o.chain));
}

MatmulSummary run_matmul_chain(const MatmulOptions& o,
                               const std::function<void(const LinkResult&)>& on_link) {
  validate(o);
  const HalBackend hal_backend(o.backend, {"cpu_ref"});
  const hal::Backend& be = hal_backend.backend();
  const hal::Backend& ref = hal_backend.other("cpu_ref");
  const std::uint64_t n = o.n;
  const hal::Request request{hal::Op::kMatmul, hal::DType::kF32, n, n, n};
  if (!be.accepts(request))
    throw UsageError(fmt::format("backend '{}' cannot run {}: {}", be.name(),
                                 hal::describe(request), be.why_not(request)));
  const std::uint64_t bytes = n * n * sizeof(float);

  std::vector<float> c = uniform_matrix(derive_seed(o.seed, Stream::kMatmulInput), n * n, 1.0f);
  std::vector<float> next(c.size());
  hal::DeviceBuffer d_in = allocate(be, bytes), d_b = allocate(be, bytes),
                    d_out = allocate(be, bytes);
  check(be.upload(d_in, c.data(), bytes), be, "upload");

  MatmulSummary s;
  s.backend = std::string(be.name());
  s.n = n;
  s.chain = o.chain;
  const float b_scale = std::sqrt(3.0f / static_cast<float>(n));  // Var(B) = 1/n
  for (std::uint64_t i = 0; i < o.chain; ++i) {
    const auto b = uniform_matrix(derive_seed(o.seed, Stream::kMatmulLink, i), n * n, b_scale);
    check(be.upload(d_b, b.data(), bytes), be, "upload");
    Stopwatch sw;
    check(be.matmul(hal::DType::kF32, n, n, n, d_in, d_b, d_out), be,
          fmt::format("FP32 matmul {}x{}x{}", n, n, n));
    LinkResult link;
    link.index = i;
    link.seconds = sw.seconds();
    link.gflops =
        link.seconds > 0 ? 2.0 * std::pow(static_cast<double>(n), 3) / link.seconds / 1e9 : 0.0;
    check(be.download(next.data(), d_out, bytes), be, "download");

    LinkCheck check = check_link(ref, o.seed, i, n, c, b, next);
    link.sum = check.sum;
    link.samples = std::move(check.samples);
    link.worst_ratio = check.worst_ratio;
    link.cpu_ref_ratio = check.cpu_ref_ratio;
    link.pass = check.pass();

    s.seconds += link.seconds;
    s.worst_ratio = std::max({s.worst_ratio, link.worst_ratio, link.cpu_ref_ratio});
    if (!link.pass) ++s.failed_links;
    if (on_link) on_link(link);
    std::swap(c, next);
    std::swap(d_in, d_out);
  }
  const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) *
                       static_cast<double>(n) * static_cast<double>(o.chain);
  s.gflops = s.seconds > 0 ? flops / s.seconds / 1e9 : 0.0;
  s.pass = s.failed_links == 0;
  return s;
}

namespace {
gpulab::Json ratio_json(double r) {
  return std::isfinite(r) ? gpulab::Json(r) : gpulab::Json("inf");
}
}  // namespace

gpulab::Json link_event(const LinkResult& r) {
  gpulab::Json j;
  j["event"] = "matmul";
  j["i"] = r.index;
  j["checksum"] = {{"sum", r.sum}, {"samples", r.samples}};
  j["ms"] = r.seconds * 1e3;
  j["gflops"] = r.gflops;
  j["worst_error_ratio"] = ratio_json(r.worst_ratio);
  j["cpu_ref_error_ratio"] = ratio_json(r.cpu_ref_ratio);
  j["pass"] = r.pass;
  return j;
}

gpulab::Json done_event(const MatmulSummary& s) {
  gpulab::Json j;
  j["event"] = "done";
  j["kind"] = "matmul";
  j["backend"] = s.backend;
  j["n"] = s.n;
  j["chain"] = s.chain;
  j["seconds"] = s.seconds;
  j["gflops"] = s.gflops;
  j["worst_error_ratio"] = ratio_json(s.worst_ratio);
  j["failed_links"] = s.failed_links;
  j["pass"] = s.pass;
  return j;
}

}  // namespace gpulab::platform::task
