// Topology-aware placement: where in one backend's pool a job's ranks go.
// It is the online scheduler's placement hook (cluster_sim::SchedulerHooks::
// place), so queue order, preemption, DRF and the licence cap stay P06's.
//
// The candidates, all or nothing each: P06's best fit (one node when the job
// fits on one, whole nodes plus the remainder otherwise), each NVLink island
// with room (fullest nodes first), and the whole pool twice: fullest nodes
// first (fewest nodes) and emptiest first (best fit by device, which keeps
// roomy nodes whole) — so a gang that fits on no one node or island still
// places, never partially. A train gang
// takes the one P08's cost model (ring_cost.hpp) says all-reduces fastest,
// the earlier one on a tie; other jobs take the first that fits.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cluster_sim/placement.hpp"
#include "platform/model.hpp"
#include "platform/pool_topology.hpp"
#include "platform/ring_cost.hpp"

namespace platform {

struct TopologyChoice {
  cluster_sim::Placement placement;
  TopologyEstimate estimate;  // ranks 0 for a job without a ring
};

// `free` is the pool's free GPUs now. nullopt: `gpus` free devices do not exist.
// `topology` is the pool's, kept for a pass (it builds its tables on first use).
std::optional<TopologyChoice> place_by_topology(const cluster_sim::Cluster& free,
                                                PoolTopology& topology, const JobSpec& spec,
                                                int gpus);
// The same, with a PoolTopology of its own (one placement, or a test).
std::optional<TopologyChoice> place_by_topology(const cluster_sim::Cluster& free,
                                                const PoolView& pool, const JobSpec& spec,
                                                int gpus);

// The ranks of a placement in rank order (slices in order, bits ascending:
// the order the scheduler numbers ranks in).
std::vector<RankDevice> ranks_of(const cluster_sim::Placement& p, const PoolView& pool);

}  // namespace platform
