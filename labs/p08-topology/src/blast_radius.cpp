#include "topology/blast_radius.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace topo {

int blast_radius(const Cluster& c, const std::vector<Group>& groups, int failed_gpu) {
  std::vector<bool> stalled(groups.size(), false);
  std::set<int> drained_nodes;
  for (std::size_t i = 0; i < groups.size(); ++i)
    if (std::find(groups[i].begin(), groups[i].end(), failed_gpu) != groups[i].end()) {
      stalled[i] = true;
      for (int g : groups[i]) drained_nodes.insert(c.node_of(g));
    }
  // Spread the stall until no group touches a drained node without being stalled.
  for (bool grew = true; grew;) {
    grew = false;
    for (std::size_t i = 0; i < groups.size(); ++i) {
      if (stalled[i]) continue;
      const bool touches = std::any_of(groups[i].begin(), groups[i].end(),
                                       [&](int g) { return drained_nodes.count(c.node_of(g)) > 0; });
      if (!touches) continue;
      stalled[i] = grew = true;
      for (int g : groups[i]) drained_nodes.insert(c.node_of(g));
    }
  }
  int gpus = 0;
  for (std::size_t i = 0; i < groups.size(); ++i)
    if (stalled[i]) gpus += static_cast<int>(groups[i].size());
  return gpus;
}

int worst_blast_radius(const Cluster& c, const std::vector<Group>& groups) {
  int worst = 0;
  for (const auto& g : groups)
    for (int gpu : g) worst = std::max(worst, blast_radius(c, groups, gpu));
  return worst;
}

PlacementSearch search_min_blast_radius(const Cluster& c, int tp, double bytes, int layers) {
  PlacementSearch s;
  for (int spread = 1; spread <= std::min(tp, c.nodes); ++spread) {
    std::vector<Group> groups;
    try {
      groups = tp_groups(c, tp, spread);
    } catch (const std::invalid_argument&) {
      continue;  // this spread does not tile the cluster
    }
    PlacementOption o;
    o.spread = spread;
    o.island_ok = std::all_of(groups.begin(), groups.end(), [&](const Group& g) { return within_one_island(c, g); });
    o.blast_radius = worst_blast_radius(c, groups);
    o.tp_step_seconds = tp_step_time(c, groups.front(), bytes, layers);
    o.link = bottleneck_link(c, groups.front()).name;
    s.options.push_back(o);
  }
  for (std::size_t i = 0; i < s.options.size(); ++i) {
    const auto& o = s.options[i];
    if (!o.island_ok) continue;
    if (s.best < 0) {
      s.best = static_cast<int>(i);
      continue;
    }
    const auto& b = s.options[static_cast<std::size_t>(s.best)];
    if (o.blast_radius < b.blast_radius || (o.blast_radius == b.blast_radius && o.tp_step_seconds < b.tp_step_seconds))
      s.best = static_cast<int>(i);
  }
  return s;
}

}  // namespace topo
