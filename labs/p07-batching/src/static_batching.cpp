#include "batching/static_batching.hpp"

#include <algorithm>
#include <stdexcept>

namespace batching {

std::vector<Outcome> simulate_static(std::span<const Request> reqs, std::size_t max_batch,
                                     const CostModel& cost) {
  if (max_batch == 0) throw std::invalid_argument("max_batch must be at least 1");
  std::vector<Outcome> out(reqs.size());
  const double iter = cost.iteration_ms(max_batch);
  double free_at = 0;  // when the previous batch released the GPU
  for (std::size_t begin = 0; begin < reqs.size(); begin += max_batch) {
    const std::size_t end = std::min(reqs.size(), begin + max_batch);
    double start = free_at, prompt = 0;
    std::uint32_t longest = 0;
    for (std::size_t i = begin; i < end; ++i) {
      start = std::max(start, reqs[i].arrival_ms);  // the batch forms when its last member arrives
      prompt += reqs[i].prompt_tokens;
      longest = std::max(longest, reqs[i].output_tokens);
    }
    const double first = start + cost.prefill_ms(prompt);
    for (std::size_t i = begin; i < end; ++i) {
      out[i].served = true;
      out[i].first_token_ms = first;
      out[i].finish_ms = first + (reqs[i].output_tokens - 1) * iter;
      out[i].worst_gap_ms = reqs[i].output_tokens > 1 ? iter : 0;
    }
    free_at = first + (longest - 1) * iter;  // short members' slots idle until the longest finishes
  }
  return out;
}

}  // namespace batching
