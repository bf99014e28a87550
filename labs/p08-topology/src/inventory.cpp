#include "topology/inventory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace topo {
namespace {

namespace inv = gpulab::inventory;

// The slowest link of one class across the cluster, and its worst latency.
struct Slowest {
  std::optional<double> gbps;
  double latency_us = 0;
  void add(const inv::Link& l) {
    gbps = gbps ? std::min(*gbps, l.bandwidth_gbps) : l.bandwidth_gbps;
    latency_us = std::max(latency_us, l.latency_us);
  }
  [[nodiscard]] Link as(const std::string& link_name) const {
    return {link_name, *gbps * 1e9, latency_us * 1e-6};
  }
};

inv::Link link_of(const std::string& peer, inv::LinkKind kind, const Link& l) {
  return {peer, kind, l.bandwidth / 1e9, l.latency * 1e6};
}

}  // namespace

inv::Accelerator h100_template() {
  inv::Accelerator a;
  a.vendor = "nvidia";
  a.backend = "cuda";
  a.model = "NVIDIA H100 80GB HBM3";
  a.memory_bytes = std::uint64_t{80} << 30;
  return a;
}

std::vector<inv::NodeInventory> to_inventory(const Cluster& c, const inv::Accelerator& gpu) {
  std::vector<inv::NodeInventory> out(static_cast<std::size_t>(c.nodes));
  for (int n = 0; n < c.nodes; ++n) {
    inv::NodeInventory& node = out[static_cast<std::size_t>(n)];
    node.node = fmt::format("node{}", n);
    for (int i = 0; i < c.gpus_per_node; ++i) {
      const int g = n * c.gpus_per_node + i;
      inv::Accelerator a = gpu;
      a.id = fmt::format("gpu{}", i);
      a.index = i;
      a.memory_bandwidth_gbps = c.hbm_bandwidth / 1e9;
      a.domain.island = c.nodes_per_island > 1 ? fmt::format("island{}", c.island_of(g)) : "";
      for (int peer = c.island_of(g) * c.nodes_per_island * c.gpus_per_node;
           peer < (c.island_of(g) + 1) * c.nodes_per_island * c.gpus_per_node; ++peer) {
        if (peer == g) continue;
        const int pn = c.node_of(peer), pi = peer % c.gpus_per_node;
        const std::string id =
            pn == n ? fmt::format("gpu{}", pi) : fmt::format("node{}/gpu{}", pn, pi);
        a.links.push_back(link_of(id, inv::LinkKind::kNvlink, c.nvlink));
      }
      a.links.push_back(link_of(std::string(inv::kHostPeer), inv::LinkKind::kPcie, c.pcie));
      a.links.push_back(
          link_of(std::string(inv::kNetworkPeer), inv::LinkKind::kInfiniband, c.infiniband));
      node.accelerators.push_back(std::move(a));
    }
  }
  return out;
}

gpulab::Expected<Cluster> cluster_from_inventory(std::span<const inv::NodeInventory> nodes,
                                                 std::string name, bool gpudirect_rdma) {
  if (const auto problems = inv::validate_cluster(nodes); !problems.empty())
    return gpulab::Error{problems.front()};
  if (nodes.empty()) return gpulab::Error{"the inventory has no nodes"};
  Cluster c;
  c.name = std::move(name);
  c.gpudirect_rdma = gpudirect_rdma;
  c.nodes = static_cast<int>(nodes.size());
  c.gpus_per_node = static_cast<int>(nodes[0].accelerators.size());
  Slowest nvlink, ib, pcie;
  std::optional<double> hbm;
  std::vector<std::string> islands;  // per node
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    const auto& accs = nodes[n].accelerators;
    if (accs.empty() || static_cast<int>(accs.size()) != c.gpus_per_node)
      return gpulab::Error{
          fmt::format("nodes[{}]: {} accelerators, but nodes[0] has {} (the cost model needs "
                      "uniform nodes)",
                      n, accs.size(), c.gpus_per_node)};
    for (std::size_t i = 0; i < accs.size(); ++i) {
      const inv::Accelerator& a = accs[i];
      if (a.domain.island != accs[0].domain.island)
        return gpulab::Error{
            fmt::format("nodes[{}].accelerators[{}].domain.island: '{}', but the node's first GPU "
                        "is in '{}' (an island holds whole nodes)",
                        n, i, a.domain.island, accs[0].domain.island)};
      if (a.memory_bandwidth_gbps <= 0)
        return gpulab::Error{fmt::format(
            "nodes[{}].accelerators[{}].memory_bandwidth_GBps: needed by the cost model", n, i)};
      hbm = hbm ? std::min(*hbm, a.memory_bandwidth_gbps) : a.memory_bandwidth_gbps;
      for (const inv::Link& l : a.links) {
        switch (l.kind) {
          case inv::LinkKind::kNvlink:
            nvlink.add(l);
            break;
          case inv::LinkKind::kPcie:
            pcie.add(l);
            break;
          case inv::LinkKind::kInfiniband:
          case inv::LinkKind::kEthernet:
            ib.add(l);
            break;
        }
      }
    }
    islands.push_back(accs[0].domain.island);
  }
  // Islands: runs of equal names; an unnamed island is its node alone.
  std::vector<int> sizes;
  std::vector<std::string> seen;
  for (std::size_t n = 0; n < islands.size(); ++n) {
    if (n > 0 && !islands[n].empty() && islands[n] == islands[n - 1]) {
      ++sizes.back();
      continue;
    }
    if (!islands[n].empty() && std::find(seen.begin(), seen.end(), islands[n]) != seen.end())
      return gpulab::Error{
          fmt::format("nodes[{}]: island '{}' again after other islands (list nodes island by "
                      "island)",
                      n, islands[n])};
    seen.push_back(islands[n]);
    sizes.push_back(1);
  }
  if (std::adjacent_find(sizes.begin(), sizes.end(), std::not_equal_to<>()) != sizes.end())
    return gpulab::Error{
        fmt::format("islands hold {} to {} nodes; the cost model needs equal islands",
                    *std::min_element(sizes.begin(), sizes.end()),
                    *std::max_element(sizes.begin(), sizes.end()))};
  c.nodes_per_island = sizes.front();
  const auto missing = [](const char* what) {
    return gpulab::Error{
        fmt::format("no {} link in the inventory; the cost model needs NVLink, InfiniBand (peer "
                    "'network') and PCIe (peer 'host') bandwidths",
                    what)};
  };
  if (!nvlink.gbps) return missing("nvlink");
  if (!ib.gbps) return missing("ib or ethernet");
  if (!pcie.gbps) return missing("pcie");
  c.nvlink = nvlink.as("NVLink");
  c.infiniband = ib.as("InfiniBand");
  c.pcie = pcie.as("PCIe");
  c.hbm_bandwidth = *hbm * 1e9;
  return c;
}

}  // namespace topo
