#include "cluster_sim/backfill.hpp"

#include <algorithm>
#include <map>

namespace cluster_sim {

Reservation reserve(const Cluster& c, int gpus, int cpus,
                    const std::set<std::pair<double, std::size_t>>& running,
                    const std::function<const Placement&(std::size_t)>& placement_of) {
  const int g = c.gpus_per_node();
  struct Freed {
    int gpus = 0;
    int cpus = 0;
  };
  std::map<int, Freed> freed;  // only the nodes touched by the replayed completions
  auto free_then = [&](int n) { return c.free_gpus(n) + freed[n].gpus; };
  std::vector<int> now_full;   // touched nodes that become entirely free

  for (const auto& [end, job] : running) {
    std::vector<int> touched;
    for (const Slice& s : placement_of(job)) {
      freed[s.node].gpus += popcount(s.mask);
      freed[s.node].cpus += s.cpus;
      touched.push_back(s.node);
      if (free_then(s.node) == g) now_full.push_back(s.node);
    }
    if (gpus <= g) {
      for (int n : touched) {
        if (free_then(n) >= gpus && c.free_cpus(n) + freed[n].cpus >= cpus) return {true, end, {n}};
      }
      continue;
    }
    // A gang: gpus/g whole nodes plus a node for the remainder.
    const auto whole = static_cast<std::size_t>(gpus / g);
    const int rest = gpus % g;
    std::vector<int> full = now_full;
    for (int n : c.some_nodes_with_free(g, whole + 1)) full.push_back(n);
    if (full.size() < whole) continue;
    std::vector<int> nodes(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(whole));
    if (rest > 0) {
      int rest_node = -1;
      if (full.size() > whole) rest_node = full[whole];
      for (const auto& [n, f] : freed) {
        if (rest_node < 0 && free_then(n) >= rest && std::find(nodes.begin(), nodes.end(), n) == nodes.end())
          rest_node = n;
      }
      if (rest_node < 0) {
        std::vector<int> skip = nodes;
        for (const auto& [n, f] : freed) skip.push_back(n);
        if (const auto n = c.best_fit(rest, 0, skip)) rest_node = *n;
      }
      if (rest_node < 0) continue;
      nodes.push_back(rest_node);
    }
    return {true, end, nodes};
  }
  return {};
}

}  // namespace cluster_sim
