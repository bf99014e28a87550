#include "platform/topology_placement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "platform/ring_cost.hpp"

namespace platform {
namespace {

namespace cs = cluster_sim;

enum class Order { kMostFreeFirst, kLeastFreeFirst };

// `gpus` free GPUs from the given (pool node, usable mask) pairs, lower node
// first among equals: most free first spans the fewest nodes; least free
// first is best fit by device (it uses up leftovers and keeps roomy nodes
// whole for bigger jobs). nullopt when they hold fewer.
std::optional<cs::Placement> fill(std::vector<std::pair<int, std::uint64_t>> room, int gpus,
                                  Order order) {
  std::stable_sort(room.begin(), room.end(), [order](const auto& a, const auto& b) {
    const int fa = cs::popcount(a.second), fb = cs::popcount(b.second);
    return order == Order::kMostFreeFirst ? fa > fb : fa < fb;
  });
  cs::Placement out;
  int left = gpus;
  for (const auto& [node, mask] : room) {
    if (left == 0) break;
    const std::uint64_t got = cs::lowest_bits(mask, left);
    if (got == 0) continue;
    out.push_back(cs::Slice{node, got, 0});
    left -= cs::popcount(got);
  }
  if (left > 0) return std::nullopt;
  return out;
}

// The same GPUs, whatever the slice order.
bool same_gpus(cs::Placement a, cs::Placement b) {
  const auto by_node = [](const cs::Slice& x, const cs::Slice& y) { return x.node < y.node; };
  std::sort(a.begin(), a.end(), by_node);
  std::sort(b.begin(), b.end(), by_node);
  return std::equal(
      a.begin(), a.end(), b.begin(), b.end(),
      [](const cs::Slice& x, const cs::Slice& y) { return x.node == y.node && x.mask == y.mask; });
}

// Every free GPU of the pool, per node.
std::vector<std::pair<int, std::uint64_t>> all_free(const cs::Cluster& free) {
  std::vector<std::pair<int, std::uint64_t>> out;
  for (int n = 0; n < free.nodes(); ++n) {
    if (const std::uint64_t mask = free.free_mask(n); mask != 0) out.emplace_back(n, mask);
  }
  return out;
}

std::vector<cs::Placement> candidates(const cs::Cluster& free, const PoolView& pool, int gpus) {
  std::vector<cs::Placement> out;
  const auto add = [&](std::optional<cs::Placement> p) {
    if (p && std::none_of(out.begin(), out.end(),
                          [&](const cs::Placement& q) { return same_gpus(*p, q); })) {
      out.push_back(std::move(*p));
    }
  };
  add(cs::place(free, cs::Policy::kBestFit, gpus, 0));
  std::map<std::string, std::vector<std::pair<int, std::uint64_t>>> islands;
  const auto everywhere = all_free(free);
  for (const auto& [n, mask] : everywhere) {
    const auto& devs = pool.devices[static_cast<std::size_t>(n)];
    std::map<std::string, std::uint64_t> here;
    for (std::size_t b = 0; b < devs.size(); ++b) {
      if ((mask >> b & 1U) == 0) continue;
      here[island_of(RankDevice{pool.node_names[static_cast<std::size_t>(n)], devs[b]})] |=
          std::uint64_t{1} << b;
    }
    for (const auto& [island, m] : here) islands[island].emplace_back(n, m);
  }
  for (auto& [island, room] : islands) add(fill(room, gpus, Order::kMostFreeFirst));
  add(fill(everywhere, gpus, Order::kMostFreeFirst));
  add(fill(everywhere, gpus, Order::kLeastFreeFirst));
  return out;
}

}  // namespace

std::vector<RankDevice> ranks_of(const cs::Placement& p, const PoolView& pool) {
  std::vector<RankDevice> out;
  for (const auto& slice : p) {
    const auto n = static_cast<std::size_t>(slice.node);
    for (int bit = 0; bit < 64; ++bit) {
      if ((slice.mask >> bit & 1U) != 0)
        out.push_back(
            RankDevice{pool.node_names[n], pool.devices[n][static_cast<std::size_t>(bit)]});
    }
  }
  return out;
}

std::optional<TopologyChoice> place_by_topology(const cs::Cluster& free, const PoolView& pool,
                                                const JobSpec& spec, int gpus) {
  if (free.total_free() < gpus) return std::nullopt;
  const double bytes = allreduce_bytes(spec);
  if (gpus < 2 || bytes <= 0) {
    // No ring to cost: P06's choice, or any free devices when it has none.
    // (O(G log N) for the common case; the scan only when best fit fails.)
    auto p = cs::place(free, cs::Policy::kBestFit, gpus, 0);
    if (!p && gpus > 1) p = fill(all_free(free), gpus, Order::kMostFreeFirst);
    if (!p) return std::nullopt;
    return TopologyChoice{std::move(*p), {}};
  }
  auto options = candidates(free, pool, gpus);
  if (options.empty()) return std::nullopt;

  std::vector<RingCost> costs;
  for (const auto& p : options) costs.push_back(ring_cost(ranks_of(p, pool), bytes));
  std::size_t best = 0;
  for (std::size_t i = 1; i < options.size(); ++i) {
    if (costs[i].seconds < costs[best].seconds) best = i;
  }
  TopologyEstimate e;
  e.ranks = gpus;
  e.bytes = bytes;
  e.allreduce_s = costs[best].seconds;
  e.bottleneck = gpulab::inventory::link_kind_name(costs[best].bottleneck.kind);
  e.nodes = costs[best].nodes;
  e.islands = costs[best].islands;
  e.considered = static_cast<int>(options.size());
  for (std::size_t i = 0; i < options.size(); ++i) {
    if (i != best && (e.next_best_s < 0 || costs[i].seconds < e.next_best_s))
      e.next_best_s = costs[i].seconds;
  }
  const std::string where =
      fmt::format("{} node{}, {} island{}, over {}", e.nodes, e.nodes == 1 ? "" : "s", e.islands,
                  e.islands == 1 ? "" : "s", e.bottleneck);
  e.reason = e.considered == 1
                 ? fmt::format("the only placement with {} free devices: {}", gpus, where)
                 : fmt::format("cheapest ring of {} placements: {}; the next best {}", e.considered,
                               where, format_seconds(e.next_best_s));
  return TopologyChoice{std::move(options[best]), std::move(e)};
}

}  // namespace platform
