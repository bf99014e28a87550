#include "platform/scheduler.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cluster_sim/placement.hpp"

namespace platform {
namespace {

bool usable(const Node& n, const Device& d, std::string_view backend) {
  return n.state == NodeState::kReady && !n.draining && d.backend == backend && d.healthy &&
         std::find(d.dtypes.begin(), d.dtypes.end(), kJobDtype) != d.dtypes.end();
}

// One backend's devices as a cluster_sim::Cluster: node i of the cluster is
// nodes[members[i]], GPU bit b is the b-th device of that backend on it.
struct BackendCluster {
  std::string backend;
  std::vector<int> members;                      // cluster node -> index into nodes
  std::vector<std::vector<std::string>> device;  // cluster node -> bit -> device id
  std::optional<cluster_sim::Cluster> cluster;
  int capacity = 0;  // schedulable devices, allocated or not (for "larger than the cluster")
};

BackendCluster build(const std::vector<Node>& nodes, std::string_view backend,
                     const std::set<std::string>& allocated) {
  BackendCluster bc;
  bc.backend = backend;
  int g = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    std::vector<std::string> ids;
    for (const auto& d : nodes[i].devices) {
      if (d.backend == backend) ids.push_back(d.id);
    }
    if (ids.empty()) continue;
    bc.members.push_back(static_cast<int>(i));
    g = std::max(g, static_cast<int>(ids.size()));
    bc.device.push_back(std::move(ids));
  }
  if (bc.members.empty()) return bc;
  bc.capacity = schedulable_devices(nodes, backend);
  bc.cluster.emplace(static_cast<int>(bc.members.size()), std::min(g, 64));
  for (std::size_t c = 0; c < bc.members.size(); ++c) {
    const Node& n = nodes[static_cast<std::size_t>(bc.members[c])];
    std::uint64_t taken = 0;
    for (int bit = 0; bit < g; ++bit) {
      const auto b = static_cast<std::size_t>(bit);
      bool free = b < bc.device[c].size();
      if (free) {
        const auto& id = bc.device[c][b];
        const auto it = std::find_if(n.devices.begin(), n.devices.end(), [&](const Device& d) { return d.id == id; });
        free = usable(n, *it, backend) && allocated.count(n.name + "/" + id) == 0;
      }
      if (!free) taken |= std::uint64_t{1} << bit;
    }
    if (taken != 0) bc.cluster->take(cluster_sim::Slice{static_cast<int>(c), taken, 0});
  }
  return bc;
}

}  // namespace

int schedulable_devices(const std::vector<Node>& nodes, std::string_view backend) {
  int n = 0;
  for (const auto& node : nodes) {
    for (const auto& d : node.devices) n += usable(node, d, backend) ? 1 : 0;
  }
  return n;
}

std::vector<Decision> schedule(const SchedulerInput& in, const std::vector<const Job*>& queue) {
  const auto& nodes = *in.nodes;
  std::map<std::string, BackendCluster, std::less<>> clusters;
  auto cluster_for = [&](std::string_view backend) -> BackendCluster& {
    auto it = clusters.find(backend);
    if (it == clusters.end()) it = clusters.emplace(std::string(backend), build(nodes, backend, in.allocated)).first;
    return it->second;
  };
  int allocated = static_cast<int>(in.allocated.size());

  std::vector<Decision> out;
  for (const Job* job : queue) {
    Decision d;
    d.job = job->id;
    const int want = job->spec.gpus;
    if (in.device_cap >= 0 && allocated + want > in.device_cap) {
      d.reason = fmt::format("licence allows {} devices in use; {} in use, job needs {}", in.device_cap, allocated,
                             want);
      out.push_back(std::move(d));
      continue;
    }
    std::vector<std::string_view> backends;
    if (job->spec.backend == "auto") {
      backends.assign(std::begin(kAutoBackendOrder), std::end(kAutoBackendOrder));
    } else {
      backends.push_back(job->spec.backend);
    }
    int best_capacity = 0;
    std::string best_backend;
    for (auto backend : backends) {
      auto& bc = cluster_for(backend);
      if (!bc.cluster) continue;
      const int capacity = bc.capacity;
      if (capacity > best_capacity) {
        best_capacity = capacity;
        best_backend = backend;
      }
      const auto placed = cluster_sim::place(*bc.cluster, cluster_sim::Policy::kBestFit, want, 0);
      if (!placed) continue;
      std::vector<Slot> slots;
      for (const auto& slice : *placed) {
        bc.cluster->take(slice);
        const Node& n = nodes[static_cast<std::size_t>(bc.members[static_cast<std::size_t>(slice.node)])];
        for (int bit = 0; bit < 64; ++bit) {
          if ((slice.mask >> bit & 1U) == 0) continue;
          const auto& id = bc.device[static_cast<std::size_t>(slice.node)][static_cast<std::size_t>(bit)];
          slots.push_back(Slot{static_cast<int>(slots.size()), n.name, id, std::string(backend)});
        }
      }
      allocated += want;
      d.placement = std::move(slots);
      break;
    }
    if (!d.placement) {
      const std::string what = job->spec.backend == "auto" ? "any one backend" : job->spec.backend;
      if (best_capacity < want) {
        d.reason = fmt::format("needs {} devices of {}; the cluster has {} schedulable", want, what, best_capacity);
      } else {
        d.reason = fmt::format("waiting for {} free devices of {} ({} schedulable, busy now)", want,
                               best_backend.empty() ? what : best_backend, best_capacity);
      }
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace platform
