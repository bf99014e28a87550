// What a gang's ring all-reduce costs on a placement, by P08's topo-sim cost
// model (topology/cost_model.hpp): a ring runs at its slowest link, so the
// estimate is topo::ring_allreduce_time over the ring's bottleneck. The link
// between two ranks comes from the inventory: the link one device declares to
// the other; across nodes without one, a shared named island's NVLink
// fabric, else the slower of the two devices' network rails.
#pragma once

#include <span>
#include <string>

#include "gpulab/inventory/accelerator.hpp"
#include "platform/job_spec.hpp"

namespace platform {

// One rank's device and the node it is on.
struct RankDevice {
  std::string node;
  const gpulab::inventory::Accelerator* device = nullptr;
};

// The island a device is in: its named island, or its node's when unnamed.
std::string island_of(const RankDevice& r);

// The link a transfer between the two ranks' devices crosses.
gpulab::inventory::Link link_between(const RankDevice& a, const RankDevice& b);

struct RingCost {
  double seconds = 0;  // 0 for fewer than 2 ranks
  gpulab::inventory::Link bottleneck;
  int nodes = 0;
  int islands = 0;
};

// Ranks in ring order: rank i sends to rank i+1, the last to the first.
RingCost ring_cost(std::span<const RankDevice> ranks, double bytes);

// Bytes one all-reduce of a train job moves per rank: its MLP's gradients
// (f32); 0 for job kinds whose ranks do not talk.
double allreduce_bytes(const JobSpec& spec);

// "12.3 us", "4.56 ms", "1.23 s".
std::string format_seconds(double s);

}  // namespace platform
