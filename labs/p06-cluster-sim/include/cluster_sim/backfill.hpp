// EASY backfill's reservation: when the blocked head of the queue could
// start, assuming running jobs end on time, and on which nodes.
#pragma once

#include <functional>
#include <set>
#include <utility>
#include <vector>

#include "cluster_sim/placement.hpp"

namespace cluster_sim {

struct Reservation {
  bool found = false;
  double time = 0;         // the "shadow time"
  std::vector<int> nodes;  // nodes the head will use then; backfill keeps off them
};

// Replays the running jobs' completions in end-time order (without touching
// the cluster) until a job of `gpus`/`cpus` fits.
Reservation reserve(const Cluster& c, int gpus, int cpus,
                    const std::set<std::pair<double, std::size_t>>& running,
                    const std::function<const Placement&(std::size_t)>& placement_of);

}  // namespace cluster_sim
