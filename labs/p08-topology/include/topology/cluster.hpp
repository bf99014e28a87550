// A cluster as the cost model sees it: nodes of G GPUs, NVLink islands of
// one or more nodes, InfiniBand between islands, PCIe to the host. Read from
// a JSON file (--topology) or the curriculum's built-in default.
#pragma once

#include <cstddef>
#include <string>

#include "gpulab/expected.hpp"
#include "gpulab/json.hpp"
#include "topology/cost_model.hpp"

namespace topo {

struct Cluster {
  std::string name;
  int nodes = 4;
  int gpus_per_node = 8;
  int nodes_per_island = 1;  // NVLink domain size in nodes (1 = NVLink only inside a node)
  Link nvlink{"NVLink", 900e9, 2e-6};
  Link infiniband{"InfiniBand", 50e9, 2e-6};
  Link pcie{"PCIe", 64e9, 2e-6};
  double hbm_bandwidth = 3.35e12;
  bool gpudirect_rdma = true;

  [[nodiscard]] int gpus() const { return nodes * gpus_per_node; }
  [[nodiscard]] int node_of(int gpu) const { return gpu / gpus_per_node; }
  [[nodiscard]] int island_of(int gpu) const { return node_of(gpu) / nodes_per_island; }
  // The link a transfer between two GPUs uses.
  [[nodiscard]] const Link& link_between(int gpu_a, int gpu_b) const;
};

// The curriculum's cluster: 4 nodes x 8 GPUs, NVLink 900 GB/s, IB 50 GB/s,
// PCIe 64 GB/s, HBM 3.35 TB/s, 2 us per hop on every link.
Cluster curriculum_cluster();

// Parses the description (see labs/p08-topology/topologies/); errors name the
// field and what was wrong. YAML goes through the same checks as JSON. A
// document with "inventory" (a list of gpulab::inventory node inventories,
// plus optional "name" and "gpudirect_rdma") is read by cluster_from_inventory().
gpulab::Expected<Cluster> parse_cluster_json(const std::string& text);
gpulab::Expected<Cluster> parse_cluster_yaml(const std::string& text);
gpulab::Expected<Cluster> cluster_from_json(const gpulab::Json& doc);
// A topology file larger than this is refused (so are /dev/zero and a
// directory): an inventory of thousands of nodes is a few MiB.
inline constexpr std::size_t kMaxTopologyBytes = std::size_t{64} << 20;
// JSON, or YAML when the name ends in .yaml/.yml, read under kMaxTopologyBytes.
gpulab::Expected<Cluster> load_cluster(const std::string& path);

}  // namespace topo
