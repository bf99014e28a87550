#include "batching/workload.hpp"

#include <fmt/core.h>

#include <cmath>

#include "gpulab/errors.hpp"
#include "gpulab/rng.hpp"

namespace batching {
namespace {

std::uint32_t draw(gpulab::Rng& rng, std::uint32_t lo, std::uint32_t hi) {
  return static_cast<std::uint32_t>(rng.uniform_int(lo, hi));
}

void check_range(const char* what, std::uint32_t lo, std::uint32_t hi) {
  if (lo == 0 || lo > hi)
    throw gpulab::UsageError(fmt::format("{}: need 1 <= min <= max (got {}..{})", what, lo, hi));
  if (hi > 10'000'000) throw gpulab::UsageError(fmt::format("{}: at most 10,000,000 tokens", what));
}

}  // namespace

void validate(const WorkloadSpec& w) {
  if (w.requests == 0) throw gpulab::UsageError("--requests must be at least 1");
  if (w.requests > 10'000'000) throw gpulab::UsageError("--requests must be at most 10,000,000");
  if (!(w.rate_per_s > 0) || !std::isfinite(w.rate_per_s))
    throw gpulab::UsageError("--rate must be > 0 requests/s");
  check_range("prompt length", w.prompt_min, w.prompt_max);
  check_range("output length", w.output_min, w.output_max);
  if (!(w.long_fraction >= 0 && w.long_fraction <= 1) ||
      !(w.shared_fraction >= 0 && w.shared_fraction <= 1))
    throw gpulab::UsageError("fractions must lie in [0, 1]");
  if (w.long_fraction > 0) check_range("long prompt length", w.long_min, w.long_max);
  if (w.shared_fraction > 0 && (w.system_prompts == 0 || w.system_tokens == 0))
    throw gpulab::UsageError("shared system prompts need a count and a length >= 1");
  if (w.system_prompts > 1000 || w.system_tokens > 1'000'000)
    throw gpulab::UsageError("at most 1000 system prompts of at most 1,000,000 tokens");
}

std::vector<Request> generate(const WorkloadSpec& w, std::uint64_t seed) {
  validate(w);
  gpulab::Rng rng(seed);
  std::vector<double> popularity;
  for (std::uint32_t k = 0; k < w.system_prompts; ++k) popularity.push_back(1.0 / (k + 1.0));
  std::vector<Request> out;
  out.reserve(w.requests);
  double t = 0;
  const double rate_per_ms = w.rate_per_s / 1000.0;
  for (std::size_t i = 0; i < w.requests; ++i) {
    t += rng.exponential(rate_per_ms);
    Request r;
    r.arrival_ms = t;
    const bool is_long = w.long_fraction > 0 && rng.bernoulli(w.long_fraction);
    r.prompt_tokens =
        is_long ? draw(rng, w.long_min, w.long_max) : draw(rng, w.prompt_min, w.prompt_max);
    r.output_tokens = draw(rng, w.output_min, w.output_max);
    if (w.shared_fraction > 0 && rng.bernoulli(w.shared_fraction)) {
      r.system_prompt = static_cast<std::int32_t>(rng.weighted_index(popularity));
      r.system_tokens = w.system_tokens;
      r.prompt_tokens += w.system_tokens;
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace batching
