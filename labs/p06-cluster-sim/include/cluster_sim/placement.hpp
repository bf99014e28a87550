// Placement policies: where a job's GPUs go. Policies differ only in this
// choice; the simulator's queueing and accounting are the same for all.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cluster_sim/cluster.hpp"

namespace cluster_sim {

enum class Policy { kSpread, kFirstFit, kBestFit, kTopologyAware };

std::string_view policy_name(Policy p);
// Throws gpulab::UsageError listing the valid names.
Policy parse_policy(std::string_view name);
inline constexpr Policy kAllPolicies[] = {Policy::kSpread, Policy::kFirstFit, Policy::kBestFit,
                                          Policy::kTopologyAware};

using Placement = std::vector<Slice>;

// Atomic placement of a whole job, or nothing. A job of at most G GPUs stays on
// one node (NVLink co-location); a larger gang takes gpus/G whole free nodes
// plus its remainder on one more node chosen by the policy.
//   spread         = the emptiest node (worst fit)
//   first_fit      = the lowest-numbered node that fits
//   best_fit       = the node left with the fewest free GPUs
//   topology_aware = best fit at the level of NVLink islands, then nodes
std::optional<Placement> place(const Cluster& c, Policy p, int gpus, int cpus,
                               std::span<const int> exclude = {});

// Naive incremental grabbing (no gang scheduling): take every free GPU on the
// first node at or after `cursor` that has any, up to `need`. Empty when the
// cluster is full. This is how a partial-allocation deadlock forms.
std::optional<Slice> grab_from_next_node(const Cluster& c, int& cursor, int need);

// How many nodes and islands a placement spans (for the topology penalty).
struct Span {
  int nodes = 0;
  int islands = 0;
};
Span span_of(const Cluster& c, const Placement& p);

}  // namespace cluster_sim
