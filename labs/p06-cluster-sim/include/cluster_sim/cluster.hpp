// The resource model: nodes of G GPUs (optionally split into NVLink islands)
// and C CPUs. Free capacity is indexed in buckets — the set of nodes with
// exactly f free GPUs, for every f — so a placement query costs O(G log N),
// not a scan over N nodes.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <vector>

namespace cluster_sim {

// The GPUs one job holds on one node (a bit per GPU) and the CPUs with them.
struct Slice {
  int node = 0;
  std::uint64_t mask = 0;
  int cpus = 0;
};

struct IslandRef {
  int node = 0;
  int island = 0;
};

class Cluster {
 public:
  // island_size 0 = one island per node (no topology inside nodes).
  // cpus_per_node 0 = CPUs not modelled.
  Cluster(int nodes, int gpus_per_node, int island_size = 0, int cpus_per_node = 0);

  [[nodiscard]] int nodes() const { return nodes_; }
  [[nodiscard]] int gpus_per_node() const { return gpus_per_node_; }
  [[nodiscard]] int island_size() const { return island_size_; }
  [[nodiscard]] int islands_per_node() const { return gpus_per_node_ / island_size_; }
  [[nodiscard]] int cpus_per_node() const { return cpus_per_node_; }
  [[nodiscard]] int total_gpus() const { return nodes_ * gpus_per_node_; }
  [[nodiscard]] int total_free() const { return total_free_; }
  [[nodiscard]] int free_gpus(int node) const;
  [[nodiscard]] int free_cpus(int node) const;
  [[nodiscard]] std::uint64_t free_mask(int node) const;
  [[nodiscard]] int island_free(int node, int island) const;
  [[nodiscard]] std::uint64_t island_mask(int island) const;

  void take(const Slice& s);
  void give(const Slice& s);

  // Index queries. `exclude` lists nodes not to consider (a gang's other
  // nodes, a backfill reservation); `cpus` is the CPU demand on that node.
  [[nodiscard]] std::optional<int> first_fit(int gpus, int cpus, std::span<const int> exclude) const;
  [[nodiscard]] std::optional<int> best_fit(int gpus, int cpus, std::span<const int> exclude) const;
  [[nodiscard]] std::optional<int> worst_fit(int gpus, int cpus, std::span<const int> exclude) const;
  // The island with the fewest free GPUs that still holds `gpus` (needs islands).
  [[nodiscard]] std::optional<IslandRef> best_fit_island(int gpus, int cpus,
                                                         std::span<const int> exclude) const;
  // Nodes with exactly f free GPUs, f in [0, G].
  [[nodiscard]] std::size_t nodes_with_free(int f) const { return by_free_[static_cast<std::size_t>(f)].size(); }
  // Up to `limit` of those nodes, lowest-numbered first.
  [[nodiscard]] std::vector<int> some_nodes_with_free(int f, std::size_t limit) const;
  // Free GPUs on nodes whose free count is in [1, below): capacity no job needing
  // `below` GPUs on one node can use.
  [[nodiscard]] int free_on_nodes_below(int below) const;

 private:
  [[nodiscard]] bool fits(int node, int cpus, std::span<const int> exclude) const;
  [[nodiscard]] std::optional<int> first_in_bucket(int f, int cpus, std::span<const int> exclude) const;
  void index_remove(int node);
  void index_add(int node);

  int nodes_;
  int gpus_per_node_;
  int island_size_;
  int cpus_per_node_;
  int total_free_;
  std::vector<std::uint64_t> free_mask_;
  std::vector<int> free_cpus_;
  std::vector<std::set<int>> by_free_;          // [f] -> nodes with f free GPUs
  std::vector<std::set<int>> islands_by_free_;  // [f] -> node*islands+island, only with islands
};

int popcount(std::uint64_t m);
// The `count` lowest set bits of `mask`.
std::uint64_t lowest_bits(std::uint64_t mask, int count);

}  // namespace cluster_sim
