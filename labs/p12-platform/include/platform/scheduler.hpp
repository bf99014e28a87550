// The online scheduler: one pass over the pending queue places what fits.
//
// Placement itself is P06's (cluster_sim::place, best fit, gangs atomic: whole
// nodes first, then the remainder on one node) over one cluster_sim::Cluster
// per HAL backend, built from the live inventory: a device that is missing,
// unhealthy, not certified by conformance for the job's dtype, on a lost or
// draining node, or already allocated is simply a taken GPU bit. A pass costs
// O(nodes) to build plus O(G log N) per job.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "platform/model.hpp"

namespace platform {

// The order a job with `backend: auto` tries backends in (fastest first).
inline constexpr std::string_view kAutoBackendOrder[] = {"cuda", "blas", "fast", "opencl", "cpu_ref"};

// The dtype every job kind of this platform computes in.
inline constexpr std::string_view kJobDtype = "f32";

struct SchedulerInput {
  const std::vector<Node>* nodes = nullptr;
  std::set<std::string> allocated;  // "<node>/<device>" held by running tasks
  int device_cap = -1;              // licence cap on allocated devices; -1 = none
};

struct Decision {
  std::string job;
  std::optional<std::vector<Slot>> placement;  // nullopt: stays pending
  std::string reason;                          // why it stays pending
};

// `queue` is the pending jobs in the order they should be served (priority,
// then submission). Jobs earlier in the queue get devices first; a job that
// does not fit does not block later ones that do (no reservation).
std::vector<Decision> schedule(const SchedulerInput& in, const std::vector<const Job*>& queue);

// Devices of `backend` on nodes that are ready, healthy and certified: what
// the cluster could ever give one job (for "larger than the cluster" reasons).
int schedulable_devices(const std::vector<Node>& nodes, std::string_view backend);

}  // namespace platform
