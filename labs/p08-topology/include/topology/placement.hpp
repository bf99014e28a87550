// Placements: which GPUs each tensor-parallel group gets, which link its ring
// crosses, and what that costs per training step.
#pragma once

#include <string>
#include <vector>

#include "topology/cluster.hpp"

namespace topo {

using Group = std::vector<int>;  // global GPU ids (node * gpus_per_node + local), in ring order

// The cluster's GPUs in TP groups of `tp`, each spread evenly over `spread`
// consecutive nodes (tp/spread GPUs on each). Blocks that fit in an NVLink
// island stay inside one (an island's leftover nodes are spares); wider ones
// tile the whole cluster. Throws std::invalid_argument when the shape cannot.
std::vector<Group> tp_groups(const Cluster& c, int tp, int spread);

// The slowest link a ring over `group` crosses (rings run at their bottleneck).
const Link& bottleneck_link(const Cluster& c, const Group& group);

// Number of distinct nodes / islands a group touches.
int nodes_spanned(const Cluster& c, const Group& group);
bool within_one_island(const Cluster& c, const Group& group);

// Per-step TP cost: `layers` ring all-reduces of `bytes` over the group's bottleneck link.
double tp_step_time(const Cluster& c, const Group& group, double bytes, int layers);

}  // namespace topo
