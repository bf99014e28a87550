#include "serving/trace_workload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gpulab/errors.hpp"
#include "gpulab/rng.hpp"

namespace serving {

TraceWorkload shape_trace(std::vector<batching::Request> reqs, const TraceShaping& o,
                          std::size_t context, const char* trace_name) {
  if (!(o.speed > 0) || !std::isfinite(o.speed))
    throw gpulab::UsageError("--speed must be a finite number > 0");
  if (o.max_requests > 0 && reqs.size() > o.max_requests) reqs.resize(o.max_requests);
  if (reqs.empty()) throw gpulab::UsageError(fmt::format("{}: no requests", trace_name));
  if (o.shared_prefix + 4 > context)
    throw gpulab::UsageError(fmt::format("--shared-prefix must be at most {} for a context of {}",
                                         context - 4, context));

  TraceWorkload w;
  gpulab::Rng rng(o.seed);
  std::vector<TokenId> prefix(o.shared_prefix);
  for (TokenId& id : prefix) id = static_cast<TokenId>(rng.uniform_int(32, 126));
  auto room = static_cast<std::uint32_t>((context - o.shared_prefix) / 2);
  if (o.max_prompt > 0)
    room = std::min<std::uint32_t>(room, static_cast<std::uint32_t>(o.max_prompt));
  for (auto& r : reqs) {
    // The shared prefix comes on top of the trace's own prompt.
    const auto own = std::clamp<std::uint32_t>(r.prompt_tokens, 1, room);
    const auto prompt = static_cast<std::uint32_t>(o.shared_prefix) + own;
    std::uint32_t output = std::clamp<std::uint32_t>(
        r.output_tokens, 1, static_cast<std::uint32_t>(context) - prompt - 1);
    if (o.max_output > 0)
      output = std::min<std::uint32_t>(output, static_cast<std::uint32_t>(o.max_output));
    if (own != r.prompt_tokens || output != r.output_tokens) ++w.clipped;
    r.prompt_tokens = prompt;
    // batching-sim's prefix cache sees the shared prefix as one system prompt.
    r.system_prompt = o.shared_prefix > 0 ? 0 : -1;
    r.system_tokens = static_cast<std::uint32_t>(o.shared_prefix);
    r.output_tokens = output;
    r.arrival_ms /= o.speed;
    std::vector<TokenId> ids = prefix;
    for (std::uint32_t k = 0; k < own; ++k)
      ids.push_back(static_cast<TokenId>(rng.uniform_int(32, 126)));
    w.prompts.push_back(std::move(ids));
  }
  w.requests = std::move(reqs);
  return w;
}

}  // namespace serving
