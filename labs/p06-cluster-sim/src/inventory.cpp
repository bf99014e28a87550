#include "cluster_sim/inventory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>

#include "gpulab/errors.hpp"
#include "gpulab/file.hpp"
#include "gpulab/inventory/inventory_json.hpp"

namespace cluster_sim {

namespace inv = gpulab::inventory;

Shape shape_of(const Cluster& c) {
  return {c.nodes(), c.gpus_per_node(), c.islands_per_node() > 1 ? c.island_size() : 0,
          c.cpus_per_node()};
}

inv::Accelerator simulated_gpu() {
  inv::Accelerator a;
  a.vendor = "gpulab";
  a.backend = "simulated";
  a.model = "Simulated H100 80GB HBM3";
  a.memory_bytes = std::uint64_t{80} << 30;
  return a;
}

std::vector<inv::NodeInventory> to_inventory(const Shape& s, const inv::Accelerator& gpu) {
  std::vector<inv::NodeInventory> out(static_cast<std::size_t>(s.nodes));
  for (int n = 0; n < s.nodes; ++n) {
    inv::NodeInventory& node = out[static_cast<std::size_t>(n)];
    node.node = fmt::format("node{}", n);
    node.cpus = s.cpus_per_node;
    for (int i = 0; i < s.gpus_per_node; ++i) {
      inv::Accelerator a = gpu;
      a.id = fmt::format("gpu{}", i);
      a.index = i;
      if (s.island_size > 0 && s.island_size < s.gpus_per_node)
        a.domain.island = fmt::format("node{}-island{}", n, i / s.island_size);
      node.accelerators.push_back(std::move(a));
    }
  }
  return out;
}

gpulab::Expected<Shape> shape_from_inventory(std::span<const inv::NodeInventory> nodes) {
  if (const auto problems = inv::validate_cluster(nodes); !problems.empty())
    return gpulab::Error{problems.front()};
  if (nodes.empty()) return gpulab::Error{"the inventory has no nodes"};
  Shape s;
  s.nodes = static_cast<int>(nodes.size());
  s.gpus_per_node = static_cast<int>(nodes[0].accelerators.size());
  s.cpus_per_node = nodes[0].cpus;
  if (s.gpus_per_node < 1 || s.gpus_per_node > 64)
    return gpulab::Error{fmt::format(
        "nodes[0]: {} accelerators; the simulator takes 1 to 64 per node", s.gpus_per_node)};
  std::map<std::string, std::size_t> island_node;  // island -> the node it was seen on
  std::vector<int> runs;
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    const inv::NodeInventory& node = nodes[n];
    if (static_cast<int>(node.accelerators.size()) != s.gpus_per_node)
      return gpulab::Error{fmt::format(
          "nodes[{}]: {} accelerators, but nodes[0] has {} (the simulator needs uniform "
          "nodes)",
          n, node.accelerators.size(), s.gpus_per_node)};
    if (node.cpus != s.cpus_per_node)
      return gpulab::Error{
          fmt::format("nodes[{}].cpus: {}, but nodes[0] has {} (the simulator needs uniform nodes)",
                      n, node.cpus, s.cpus_per_node)};
    std::vector<const inv::Accelerator*> by_index;
    for (const auto& a : node.accelerators) by_index.push_back(&a);
    std::sort(by_index.begin(), by_index.end(),
              [](auto* x, auto* y) { return x->index < y->index; });
    for (std::size_t i = 0; i < by_index.size(); ++i) {
      const std::string& island = by_index[i]->domain.island;
      if (i > 0 && island == by_index[i - 1]->domain.island) {
        ++runs.back();
        continue;
      }
      runs.push_back(1);
      if (island.empty()) continue;
      if (const auto [it, fresh] = island_node.emplace(island, n); !fresh)
        return gpulab::Error{fmt::format(
            "nodes[{}]: island '{}' {}; the simulator's islands are runs of GPUs inside "
            "one node",
            n, island,
            it->second == n ? "is split by another island"
                            : fmt::format("also holds GPUs of nodes[{}]", it->second))};
    }
  }
  if (std::adjacent_find(runs.begin(), runs.end(), std::not_equal_to<>()) != runs.end())
    return gpulab::Error{fmt::format(
        "islands hold {} to {} GPUs; the simulator needs equal islands",
        *std::min_element(runs.begin(), runs.end()), *std::max_element(runs.begin(), runs.end()))};
  s.island_size = runs.front() == s.gpus_per_node ? 0 : runs.front();
  return s;
}

void apply(const Shape& s, SimConfig& cfg) {
  cfg.nodes = s.nodes;
  cfg.gpus_per_node = s.gpus_per_node;
  cfg.island_size = s.island_size;
  cfg.cpus_per_node = s.cpus_per_node;
}

Shape load_inventory_shape(const std::string& path) {
  constexpr std::size_t kMaxInventoryBytes = std::size_t{256} << 20;
  const auto text = gpulab::read_text_file(path, kMaxInventoryBytes);
  if (!text) throw gpulab::UsageError(text.error().message);
  const auto nodes = gpulab::inventory::parse_cluster(text.value());
  if (!nodes) throw gpulab::UsageError(fmt::format("{}: {}", path, nodes.error().message));
  const auto shape = shape_from_inventory(nodes.value());
  if (!shape) throw gpulab::UsageError(fmt::format("{}: {}", path, shape.error().message));
  return shape.value();
}

}  // namespace cluster_sim
