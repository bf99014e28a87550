// `cluster-sim scale`: simulated jobs per CPU-second as the cluster grows with
// the load per node held fixed. If placement scanned every node, the cost per
// job would grow with the node count; the check wants it far below that.
#pragma once

#include <cstdint>
#include <vector>

#include "cluster_sim/scenarios.hpp"

namespace cluster_sim {

Report scale_report(const std::vector<int>& node_counts, int jobs_per_node, std::uint64_t seed);

}  // namespace cluster_sim
