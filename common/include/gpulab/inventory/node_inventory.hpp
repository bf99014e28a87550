// A node's inventory (its name, CPUs and accelerators) and the checks a
// description must pass before anything schedules on it. A cluster is a list
// of node inventories; links and islands may cross nodes.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/inventory/accelerator.hpp"

namespace gpulab::inventory {

struct NodeInventory {
  std::string node;  // unique in the cluster; no '/' or blanks
  int cpus = 0;      // CPU cores schedulable next to the accelerators; 0 = not reported
  std::vector<Accelerator> accelerators;

  [[nodiscard]] const Accelerator* find(std::string_view id) const;
  [[nodiscard]] Accelerator* find(std::string_view id);
  [[nodiscard]] std::uint64_t total_memory_bytes() const;
  [[nodiscard]] std::size_t healthy_count() const;
  bool operator==(const NodeInventory&) const = default;
};

// "<node>/<id>", the form a link names an accelerator on another node with.
std::string qualified_id(std::string_view node, std::string_view id);

// Every problem with one node's description, each naming its field as
// "node.accelerators[2].links[0].peer: ..." (empty = valid). Peers written
// "<node>/<id>" are checked only by validate_cluster, which sees the other nodes.
std::vector<std::string> validate(const NodeInventory& inv);
// validate() for each node, plus unique node names and cross-node peers.
std::vector<std::string> validate_cluster(std::span<const NodeInventory> nodes);

}  // namespace gpulab::inventory
