// A serving request and what happened to it in a simulation. Times are in
// milliseconds of simulated time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace batching {

struct Request {
  double arrival_ms = 0;
  std::uint32_t prompt_tokens = 0;
  std::uint32_t output_tokens = 0;  // >= 1; the first comes out of prefill
  std::int32_t system_prompt = -1;  // which shared system prompt starts the prompt (-1: none)
  std::uint32_t system_tokens = 0;  // its length (part of prompt_tokens)
};

struct Outcome {
  bool served = false;              // false: shed by admission control or never fitted
  double first_token_ms = 0;        // TTFT = first_token_ms - arrival
  double finish_ms = 0;             // time of the last token
  double worst_gap_ms = 0;          // longest wait between two consecutive tokens
  std::uint32_t cached_tokens = 0;  // prompt tokens served from a prefix cache
};

[[nodiscard]] inline double ttft_ms(const Request& r, const Outcome& o) {
  return o.first_token_ms - r.arrival_ms;
}
// Time per output token after the first; 0 for one-token outputs.
[[nodiscard]] inline double tpot_ms(const Request& r, const Outcome& o) {
  return r.output_tokens > 1 ? (o.finish_ms - o.first_token_ms) / (r.output_tokens - 1) : 0.0;
}
[[nodiscard]] inline double e2e_ms(const Request& r, const Outcome& o) {
  return o.finish_ms - r.arrival_ms;
}

}  // namespace batching
