#include "cluster_sim/cluster.hpp"

#include <algorithm>
#include <bit>

#include "gpulab/errors.hpp"

namespace cluster_sim {

int popcount(std::uint64_t m) { return std::popcount(m); }

std::uint64_t lowest_bits(std::uint64_t mask, int count) {
  std::uint64_t out = 0;
  for (int i = 0; i < count && mask != 0; ++i) {
    const std::uint64_t low = mask & (~mask + 1);  // lowest set bit
    out |= low;
    mask &= ~low;
  }
  return out;
}

Cluster::Cluster(int nodes, int gpus_per_node, int island_size, int cpus_per_node)
    : nodes_(nodes),
      gpus_per_node_(gpus_per_node),
      island_size_(island_size == 0 ? gpus_per_node : island_size),
      cpus_per_node_(cpus_per_node),
      total_free_(nodes * gpus_per_node) {
  if (nodes < 1 || nodes > 10'000'000) throw gpulab::UsageError("--nodes must be in [1, 10000000]");
  if (gpus_per_node < 1 || gpus_per_node > 64)
    throw gpulab::UsageError("--gpus-per-node must be in [1, 64]");
  if (island_size_ < 1 || gpus_per_node % island_size_ != 0)
    throw gpulab::UsageError("--island-size must divide --gpus-per-node");
  if (cpus_per_node < 0) throw gpulab::UsageError("--cpus-per-node must be >= 0");
  const std::uint64_t full =
      gpus_per_node == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << gpus_per_node) - 1;
  free_mask_.assign(static_cast<std::size_t>(nodes), full);
  free_cpus_.assign(static_cast<std::size_t>(nodes), cpus_per_node);
  by_free_.resize(static_cast<std::size_t>(gpus_per_node + 1));
  if (islands_per_node() > 1) islands_by_free_.resize(static_cast<std::size_t>(island_size_ + 1));
  for (int n = 0; n < nodes; ++n) index_add(n);
}

int Cluster::free_gpus(int node) const { return popcount(free_mask_[static_cast<std::size_t>(node)]); }
int Cluster::free_cpus(int node) const { return free_cpus_[static_cast<std::size_t>(node)]; }
std::uint64_t Cluster::free_mask(int node) const { return free_mask_[static_cast<std::size_t>(node)]; }

std::uint64_t Cluster::island_mask(int island) const {
  const std::uint64_t one =
      island_size_ == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << island_size_) - 1;
  return one << (island * island_size_);
}

int Cluster::island_free(int node, int island) const {
  return popcount(free_mask(node) & island_mask(island));
}

void Cluster::index_remove(int node) {
  by_free_[static_cast<std::size_t>(free_gpus(node))].erase(node);
  if (!islands_by_free_.empty()) {
    for (int i = 0; i < islands_per_node(); ++i)
      islands_by_free_[static_cast<std::size_t>(island_free(node, i))].erase(node * islands_per_node() + i);
  }
}

void Cluster::index_add(int node) {
  by_free_[static_cast<std::size_t>(free_gpus(node))].insert(node);
  if (!islands_by_free_.empty()) {
    for (int i = 0; i < islands_per_node(); ++i)
      islands_by_free_[static_cast<std::size_t>(island_free(node, i))].insert(node * islands_per_node() + i);
  }
}

void Cluster::take(const Slice& s) {
  auto& mask = free_mask_[static_cast<std::size_t>(s.node)];
  if ((mask & s.mask) != s.mask) throw std::logic_error("take: GPUs already in use");
  index_remove(s.node);
  mask &= ~s.mask;
  free_cpus_[static_cast<std::size_t>(s.node)] -= s.cpus;
  total_free_ -= popcount(s.mask);
  index_add(s.node);
}

void Cluster::give(const Slice& s) {
  auto& mask = free_mask_[static_cast<std::size_t>(s.node)];
  if ((mask & s.mask) != 0) throw std::logic_error("give: GPUs already free");
  index_remove(s.node);
  mask |= s.mask;
  free_cpus_[static_cast<std::size_t>(s.node)] += s.cpus;
  total_free_ += popcount(s.mask);
  index_add(s.node);
}

bool Cluster::fits(int node, int cpus, std::span<const int> exclude) const {
  if (cpus > 0 && free_cpus(node) < cpus) return false;
  return std::find(exclude.begin(), exclude.end(), node) == exclude.end();
}

// Without CPU demand or exclusions this is the bucket's first element: O(log N).
// With them it walks the bucket until a node qualifies.
std::optional<int> Cluster::first_in_bucket(int f, int cpus, std::span<const int> exclude) const {
  for (int node : by_free_[static_cast<std::size_t>(f)]) {
    if (fits(node, cpus, exclude)) return node;
  }
  return std::nullopt;
}

std::optional<int> Cluster::first_fit(int gpus, int cpus, std::span<const int> exclude) const {
  std::optional<int> best;
  for (int f = std::max(gpus, 1); f <= gpus_per_node_; ++f) {
    const auto n = first_in_bucket(f, cpus, exclude);
    if (n && (!best || *n < *best)) best = n;
  }
  return best;
}

std::optional<int> Cluster::best_fit(int gpus, int cpus, std::span<const int> exclude) const {
  for (int f = std::max(gpus, 1); f <= gpus_per_node_; ++f) {
    if (const auto n = first_in_bucket(f, cpus, exclude)) return n;
  }
  return std::nullopt;
}

std::optional<int> Cluster::worst_fit(int gpus, int cpus, std::span<const int> exclude) const {
  for (int f = gpus_per_node_; f >= std::max(gpus, 1); --f) {
    if (const auto n = first_in_bucket(f, cpus, exclude)) return n;
  }
  return std::nullopt;
}

std::optional<IslandRef> Cluster::best_fit_island(int gpus, int cpus,
                                                  std::span<const int> exclude) const {
  if (islands_by_free_.empty() || gpus > island_size_) return std::nullopt;
  for (int f = std::max(gpus, 1); f <= island_size_; ++f) {
    for (int key : islands_by_free_[static_cast<std::size_t>(f)]) {
      const int node = key / islands_per_node();
      if (fits(node, cpus, exclude)) return IslandRef{node, key % islands_per_node()};
    }
  }
  return std::nullopt;
}

std::vector<int> Cluster::some_nodes_with_free(int f, std::size_t limit) const {
  std::vector<int> out;
  for (int node : by_free_[static_cast<std::size_t>(f)]) {
    if (out.size() == limit) break;
    out.push_back(node);
  }
  return out;
}

int Cluster::free_on_nodes_below(int below) const {
  int sum = 0;
  for (int f = 1; f < std::min(below, gpus_per_node_ + 1); ++f)
    sum += f * static_cast<int>(by_free_[static_cast<std::size_t>(f)].size());
  return sum;
}

}  // namespace cluster_sim
