// topo-sim's cluster to and from the shared inventory (gpulab/inventory), so
// the platform's real node inventories can be costed, and the cost model's
// clusters described the way every other lab describes GPUs.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "gpulab/expected.hpp"
#include "gpulab/inventory/node_inventory.hpp"
#include "topology/cluster.hpp"

namespace topo {

// What the cost model does not know about a GPU: who made it, its model, its
// memory. The curriculum's cluster is H100 SXM (80 GB, HBM 3.35 TB/s).
gpulab::inventory::Accelerator h100_template();

// Nodes "node<n>" of accelerators "gpu<i>". Each GPU gets an NVLink link to
// every other GPU of its island ("node<m>/gpu<j>" across nodes), a PCIe link
// to the host and an InfiniBand link to the network; islands wider than one
// node are named "island<k>" (one node: no name, the node is the island).
std::vector<gpulab::inventory::NodeInventory> to_inventory(
    const Cluster& c, const gpulab::inventory::Accelerator& gpu = h100_template());

// The cost model's view of an inventory: uniform nodes listed island by
// island; each link class at its slowest (a ring runs at its bottleneck) —
// NVLink from nvlink links, InfiniBand from ib/ethernet links, PCIe from
// pcie links — and HBM from the slowest memory_bandwidth_GBps. Errors say
// which node or field does not fit.
gpulab::Expected<Cluster> cluster_from_inventory(
    std::span<const gpulab::inventory::NodeInventory> nodes, std::string name,
    bool gpudirect_rdma = true);

}  // namespace topo
