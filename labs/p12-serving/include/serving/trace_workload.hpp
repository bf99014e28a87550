// A P07 trace turned into requests this model can serve: the trace's lengths
// are written for big models, so each prompt is clipped to half of what the
// context leaves after a shared system prompt and each output to what is
// left, arrivals are compressed by `speed`, and every prompt gets seeded
// token ids. loadgen (over HTTP) and the in-process replay of compare-sim and
// batching-sweep read the same trace the same way through this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "batching/request.hpp"
#include "serving/tokenizer.hpp"

namespace serving {

struct TraceShaping {
  std::size_t max_requests = 0;   // 0: the whole trace
  double speed = 1;               // arrivals come `speed` times faster than the trace says
  std::uint64_t seed = 1;         // the prompts' token ids
  std::size_t shared_prefix = 0;  // every prompt starts with the same this many tokens
  std::size_t max_output = 0;     // cap on each request's output tokens (0: the trace's)
  std::size_t max_prompt =
      0;  // cap on each prompt's own tokens, after the prefix (0: half the context)
};

struct TraceWorkload {
  std::vector<batching::Request> requests;  // arrival_ms scaled; prompt_tokens includes the prefix
  std::vector<std::vector<TokenId>> prompts;
  std::size_t clipped = 0;  // requests whose prompt or output was shortened
};

// Throws gpulab::UsageError for a speed <= 0, an empty result, or a shared
// prefix that leaves no room in `context`.
TraceWorkload shape_trace(std::vector<batching::Request> trace, const TraceShaping& shaping,
                          std::size_t context, const char* trace_name);

}  // namespace serving
