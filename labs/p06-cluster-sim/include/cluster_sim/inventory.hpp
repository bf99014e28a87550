// The simulated cluster as the shared inventory (gpulab/inventory) and back.
// The inventory is the description; Cluster stays the bucket index the
// simulator builds from its shape (nodes x GPUs x islands x CPUs), so a run
// over ten million nodes never materialises eighty million accelerators.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "cluster_sim/cluster.hpp"
#include "cluster_sim/simulator.hpp"
#include "gpulab/expected.hpp"
#include "gpulab/inventory/node_inventory.hpp"

namespace cluster_sim {

struct Shape {
  int nodes = 0;
  int gpus_per_node = 0;
  int island_size = 0;  // 0 = no islands inside a node
  int cpus_per_node = 0;
  bool operator==(const Shape&) const = default;
};

Shape shape_of(const Cluster& c);

// What the simulator does not know about a GPU; its own modelled H100.
gpulab::inventory::Accelerator simulated_gpu();

// Nodes "node<n>" of GPUs "gpu<i>"; islands inside a node are named
// "node<n>-island<k>" (none when the node is one island). No links: the
// simulator models where GPUs are, not how fast they talk.
std::vector<gpulab::inventory::NodeInventory> to_inventory(
    const Shape& s, const gpulab::inventory::Accelerator& gpu = simulated_gpu());

// The shape of an inventory: uniform nodes of 1-64 GPUs and equal CPUs,
// islands equal-sized runs of GPUs (by index) inside each node. Errors name
// the node or field that does not fit. Health is not simulated: a trace
// replays on every GPU.
gpulab::Expected<Shape> shape_from_inventory(
    std::span<const gpulab::inventory::NodeInventory> nodes);

// Sets the cluster fields of `cfg` (nodes, GPUs, islands, CPUs).
void apply(const Shape& s, SimConfig& cfg);

// `run --inventory FILE`: the cluster as a JSON list of node inventories, as
// the platform's agents report them. Throws gpulab::UsageError naming the file.
Shape load_inventory_shape(const std::string& path);

}  // namespace cluster_sim
