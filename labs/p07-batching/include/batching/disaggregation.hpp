// Prefill/decode disaggregation (DistServe, Splitwise): one GPU only runs
// prefills, another only decodes, and each request's KV cache crosses a link
// in between. Decodes never stall behind a prompt, at the price of a second
// GPU and a hand-off of kv_bytes_per_token x prompt bytes per request.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "batching/cost_model.hpp"
#include "batching/request.hpp"

namespace batching {

struct DisaggOptions {
  std::size_t max_batch = 16;            // decode GPU batch width
  std::uint64_t kv_bytes_per_token = 0;  // from paged-kv's KV math
  double link_gb_per_s = 50;             // 1e9 bytes/s; the link is used one transfer at a time
};

[[nodiscard]] double handoff_ms(const DisaggOptions& o, std::uint32_t prompt_tokens);
// A request reserves a decode slot before its prefill starts (queueing shows
// in TTFT, as in the colocated case); the first token streams from the
// prefill GPU, and the second waits for the hand-off, so the transfer shows
// in TPOT.
std::vector<Outcome> simulate_disaggregated(std::span<const Request> reqs, const DisaggOptions& opt,
                                            const CostModel& cost);

}  // namespace batching
