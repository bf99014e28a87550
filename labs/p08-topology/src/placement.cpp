#include "topology/placement.hpp"

#include <fmt/core.h>

#include <set>
#include <stdexcept>

namespace topo {

std::vector<Group> tp_groups(const Cluster& c, int tp, int spread) {
  if (tp < 1 || spread < 1 || tp % spread != 0)
    throw std::invalid_argument(fmt::format("a TP group of {} cannot be spread evenly over {} nodes", tp, spread));
  const int per_node = tp / spread;
  if (per_node > c.gpus_per_node || c.gpus_per_node % per_node != 0)
    throw std::invalid_argument(fmt::format("{} GPUs of a TP group per node do not tile a node of {} GPUs", per_node,
                                            c.gpus_per_node));
  // Blocks of `spread` consecutive nodes; each block holds gpus_per_node/per_node
  // groups. Blocks stay inside an NVLink island when they fit in one (nodes
  // left over at an island's end stay idle: spares); wider blocks must tile the cluster.
  std::vector<int> block_starts;
  if (spread <= c.nodes_per_island) {
    for (int island = 0; island < c.nodes / c.nodes_per_island; ++island)
      for (int b = 0; b + spread <= c.nodes_per_island; b += spread) block_starts.push_back(island * c.nodes_per_island + b);
  } else {
    if (c.nodes % spread != 0)
      throw std::invalid_argument(fmt::format("blocks of {} nodes do not tile {} nodes", spread, c.nodes));
    for (int b = 0; b < c.nodes; b += spread) block_starts.push_back(b);
  }
  std::vector<Group> groups;
  for (const int first : block_starts) {
    for (int j = 0; j < c.gpus_per_node / per_node; ++j) {
      Group g;
      for (int k = 0; k < spread; ++k)
        for (int s = 0; s < per_node; ++s) g.push_back((first + k) * c.gpus_per_node + j * per_node + s);
      groups.push_back(std::move(g));
    }
  }
  return groups;
}

const Link& bottleneck_link(const Cluster& c, const Group& group) {
  const Link* worst = &c.nvlink;
  for (std::size_t i = 0; i < group.size(); ++i) {
    const Link& l = c.link_between(group[i], group[(i + 1) % group.size()]);
    if (l.bandwidth < worst->bandwidth) worst = &l;
  }
  return *worst;
}

int nodes_spanned(const Cluster& c, const Group& group) {
  std::set<int> nodes;
  for (int g : group) nodes.insert(c.node_of(g));
  return static_cast<int>(nodes.size());
}

bool within_one_island(const Cluster& c, const Group& group) {
  for (int g : group)
    if (c.island_of(g) != c.island_of(group.front())) return false;
  return true;
}

double tp_step_time(const Cluster& c, const Group& group, double bytes, int layers) {
  return layers * ring_allreduce_time(static_cast<int>(group.size()), bytes, bottleneck_link(c, group));
}

}  // namespace topo
