// One backend pool's topology in the form the placement search asks about it
// many times per pass: each device's island as a small integer (numbered in
// the order of the islands' names, so candidates come in the order
// island_of()'s strings give), the islands on each node as bit masks, and the
// ring cost of a placement from link facts looked up once per device.
//
// It answers what ring_cost(ranks_of(p, pool), bytes) answers (ring_cost.hpp)
// — the same bottleneck, the same seconds, the same node and island counts —
// without building a "<node>/<device>" or "node <name>" string per rank or a
// std::set per ring. pool_topology_test.cpp checks the two agree on random
// pools. Built lazily (the first gang that needs it) and for one pass: it
// points into the PoolView, and the inventory may change between passes.
// Not thread-safe: cost() reuses scratch arrays.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cluster_sim/placement.hpp"
#include "gpulab/inventory/accelerator.hpp"
#include "platform/model.hpp"

namespace platform {

// One backend's devices as a cluster_sim::Cluster: node i of the pool is
// node_names[i], GPU bit b on it is devices[i][b].
struct PoolView {
  std::vector<std::string> node_names;
  std::vector<std::vector<const Device*>> devices;
};

// A ring's cost without the bottleneck link's peer name (placement needs its kind only).
struct RingEstimate {
  double seconds = 0;
  gpulab::inventory::LinkKind bottleneck = gpulab::inventory::LinkKind::kNvlink;
  double bottleneck_gbps = 0;
  double bottleneck_us = 0;
  int nodes = 0;
  int islands = 0;
};

class PoolTopology {
 public:
  explicit PoolTopology(const PoolView& pool) : pool_(&pool) {}

  struct IslandBits {
    int island = 0;
    std::uint64_t mask = 0;  // the node's devices in that island
  };
  // Islands of the pool, numbered 0.. in the order of their names.
  [[nodiscard]] int islands();
  // The islands the devices of pool node `node` are in, by island number.
  [[nodiscard]] std::span<const IslandBits> islands_on(int node);
  // ring_cost(ranks_of(p, pool), bytes) (ring_cost.hpp, topology_placement.hpp).
  [[nodiscard]] RingEstimate cost(const cluster_sim::Placement& p, double bytes);

 private:
  // What link_between() reads from one device, looked up once.
  struct LinkFacts {
    gpulab::inventory::LinkKind kind = gpulab::inventory::LinkKind::kNvlink;
    double gbps = 0;
    double us = 0;
  };
  struct DeviceFacts {
    bool ready = false;
    bool remote_links = false;  // declares a link to "<node>/<id>": the by-name lookup is needed
    int named_island = -1;      // domain.island interned; -1 = unnamed
    LinkFacts host, network, nvlink;
  };
  struct Rank {
    int node = 0;  // pool node
    int bit = 0;
  };
  void build();
  const DeviceFacts& facts(int node, int bit);
  [[nodiscard]] LinkFacts link(const Rank& a, const Rank& b);

  const PoolView* pool_;
  bool built_ = false;
  int islands_ = 0;
  std::vector<int> name_id_;                          // pool node -> its name, interned (for the node count)
  std::vector<std::vector<int>> island_of_;           // [node][bit] -> island number
  std::vector<std::vector<IslandBits>> node_islands_;  // [node] -> its islands
  std::vector<std::vector<DeviceFacts>> facts_;       // [node][bit], filled on first use
  std::vector<std::string> named_islands_;            // interned domain.island names
  // cost()'s scratch: the ranks, and "seen in this ring" stamps per name and island.
  std::vector<Rank> ranks_;
  std::vector<std::uint32_t> name_seen_, island_seen_;
  std::uint32_t stamp_ = 0;
};

}  // namespace platform
