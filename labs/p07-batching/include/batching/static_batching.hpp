// Static batching: take the next max_batch requests in arrival order, wait
// until the last of them has arrived (formation delay), prefill them all, and
// decode until the longest is done (head-of-line blocking) before the next
// batch may start.
#pragma once

#include <span>
#include <vector>

#include "batching/cost_model.hpp"
#include "batching/request.hpp"

namespace batching {

std::vector<Outcome> simulate_static(std::span<const Request> reqs, std::size_t max_batch,
                                     const CostModel& cost);

}  // namespace batching
