#include "cluster_sim/placement.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "gpulab/errors.hpp"

namespace cluster_sim {

std::string_view policy_name(Policy p) {
  switch (p) {
    case Policy::kSpread: return "spread";
    case Policy::kFirstFit: return "first_fit";
    case Policy::kBestFit: return "best_fit";
    case Policy::kTopologyAware: return "topology_aware";
  }
  return "?";
}

Policy parse_policy(std::string_view name) {
  for (Policy p : kAllPolicies) {
    if (policy_name(p) == name) return p;
  }
  throw gpulab::UsageError(fmt::format(
      "unknown policy '{}' (use spread, first_fit, best_fit or topology_aware)", name));
}

namespace {

int cpus_for(int cpus, int slice_gpus, int gpus) {
  // A gang's CPUs follow its GPUs, rounded up so no slice gets zero of a non-zero demand.
  return cpus == 0 ? 0 : (cpus * slice_gpus + gpus - 1) / gpus;
}

// GPUs on `node` for a job of `gpus`, keeping it inside as few NVLink islands
// as possible: the tightest island that holds it, else whole free islands
// first and then the fullest partial ones.
std::uint64_t island_aware_gpus(const Cluster& c, int node, int gpus) {
  const int islands = c.islands_per_node();
  std::vector<int> order(static_cast<std::size_t>(islands));
  for (int i = 0; i < islands; ++i) order[static_cast<std::size_t>(i)] = i;
  if (gpus <= c.island_size()) {
    int best = -1;
    for (int i : order) {
      const int f = c.island_free(node, i);
      if (f >= gpus && (best < 0 || f < c.island_free(node, best))) best = i;
    }
    if (best >= 0) return lowest_bits(c.free_mask(node) & c.island_mask(best), gpus);
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return c.island_free(node, a) > c.island_free(node, b);
  });
  std::uint64_t out = 0;
  int left = gpus;
  for (int i : order) {
    const std::uint64_t got = lowest_bits(c.free_mask(node) & c.island_mask(i), left);
    out |= got;
    left -= popcount(got);
    if (left == 0) break;
  }
  return out;
}

std::optional<int> choose_node(const Cluster& c, Policy p, int gpus, int cpus,
                               std::span<const int> exclude) {
  switch (p) {
    case Policy::kSpread: return c.worst_fit(gpus, cpus, exclude);
    case Policy::kFirstFit: return c.first_fit(gpus, cpus, exclude);
    case Policy::kBestFit:
    case Policy::kTopologyAware: return c.best_fit(gpus, cpus, exclude);
  }
  return std::nullopt;
}

std::optional<Slice> place_on_one_node(const Cluster& c, Policy p, int gpus, int cpus,
                                       std::span<const int> exclude) {
  if (p == Policy::kTopologyAware && c.islands_per_node() > 1) {
    if (const auto isl = c.best_fit_island(gpus, cpus, exclude)) {
      return Slice{isl->node, lowest_bits(c.free_mask(isl->node) & c.island_mask(isl->island), gpus),
                   cpus};
    }
  }
  const auto node = choose_node(c, p, gpus, cpus, exclude);
  if (!node) return std::nullopt;
  const std::uint64_t mask = p == Policy::kTopologyAware ? island_aware_gpus(c, *node, gpus)
                                                         : lowest_bits(c.free_mask(*node), gpus);
  return Slice{*node, mask, cpus};
}

}  // namespace

std::optional<Placement> place(const Cluster& c, Policy p, int gpus, int cpus,
                               std::span<const int> exclude) {
  const int g = c.gpus_per_node();
  if (gpus <= g) {
    auto s = place_on_one_node(c, p, gpus, cpus, exclude);
    if (!s) return std::nullopt;
    return Placement{*s};
  }
  // A gang: whole free nodes first, then the remainder; all or nothing.
  const int whole = gpus / g;
  const int rest = gpus % g;
  std::vector<int> used(exclude.begin(), exclude.end());
  Placement out;
  for (int i = 0; i < whole; ++i) {
    const auto node = c.first_fit(g, cpus_for(cpus, g, gpus), used);
    if (!node) return std::nullopt;
    used.push_back(*node);
    out.push_back(Slice{*node, c.free_mask(*node), cpus_for(cpus, g, gpus)});
  }
  if (rest > 0) {
    auto s = place_on_one_node(c, p, rest, cpus_for(cpus, rest, gpus), used);
    if (!s) return std::nullopt;
    out.push_back(*s);
  }
  return out;
}

std::optional<Slice> grab_from_next_node(const Cluster& c, int& cursor, int need) {
  for (int k = 0; k < c.nodes(); ++k) {
    const int node = (cursor + k) % c.nodes();
    if (c.free_gpus(node) > 0) {
      cursor = (node + 1) % c.nodes();
      return Slice{node, lowest_bits(c.free_mask(node), need), 0};
    }
  }
  return std::nullopt;
}

Span span_of(const Cluster& c, const Placement& p) {
  Span s;
  for (const Slice& sl : p) {
    ++s.nodes;
    for (int i = 0; i < c.islands_per_node(); ++i) {
      if ((sl.mask & c.island_mask(i)) != 0) ++s.islands;
    }
  }
  return s;
}

}  // namespace cluster_sim
