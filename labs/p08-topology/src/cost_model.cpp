#include "topology/cost_model.hpp"

#include <cmath>

namespace topo {

double ring_allreduce_time(int n, double bytes, const Link& link) {
  if (n < 2) return 0;
  return 2.0 * (n - 1) / n * bytes / link.bandwidth + 2.0 * (n - 1) * link.latency;
}

double reduce_scatter_time(int n, double bytes, const Link& link) {
  if (n < 2) return 0;
  return static_cast<double>(n - 1) / n * bytes / link.bandwidth + (n - 1) * link.latency;
}

double all_gather_time(int n, double bytes, const Link& link) { return reduce_scatter_time(n, bytes, link); }

double tree_allreduce_time(int n, double bytes, const Link& link) {
  if (n < 2) return 0;
  const double levels = std::ceil(std::log2(static_cast<double>(n)));
  return 2.0 * levels * (bytes / link.bandwidth + link.latency);
}

double hierarchical_allreduce_time(int per_node, int nodes, double bytes, const Link& intra, const Link& inter) {
  return reduce_scatter_time(per_node, bytes, intra) + ring_allreduce_time(nodes, bytes / per_node, inter) +
         all_gather_time(per_node, bytes, intra);
}

}  // namespace topo
