// Synthetic request streams: Poisson arrivals (exponential gaps) and uniform
// prompt/output lengths, optionally bimodal prompts or shared system prompts.
// Every draw comes from gpulab::Rng, so a seed gives the same stream on any
// standard library.
#pragma once

#include <cstdint>
#include <vector>

#include "batching/request.hpp"

namespace batching {

struct WorkloadSpec {
  std::size_t requests = 400;
  double rate_per_s = 2.5;
  std::uint32_t prompt_min = 64, prompt_max = 1024;
  std::uint32_t output_min = 10, output_max = 300;
  // Bimodal prompts: this fraction draws from [long_min, long_max] instead.
  double long_fraction = 0;
  std::uint32_t long_min = 4096, long_max = 8192;
  // Shared system prompts: this fraction of requests starts with one of
  // system_prompts prompts of system_tokens tokens (Zipf popularity) followed
  // by a [prompt_min, prompt_max]-token user turn.
  double shared_fraction = 0;
  std::uint32_t system_prompts = 4;
  std::uint32_t system_tokens = 3000;
};

// Throws gpulab::UsageError for an impossible spec (rate <= 0, min > max, ...).
void validate(const WorkloadSpec& w);
std::vector<Request> generate(const WorkloadSpec& w, std::uint64_t seed);

}  // namespace batching
