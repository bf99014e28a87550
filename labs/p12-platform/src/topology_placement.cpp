#include "platform/topology_placement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "platform/ring_cost.hpp"

namespace platform {
namespace {

namespace cs = cluster_sim;

// A node of the pool with free GPUs, and those GPUs (or the part of them in one island).
struct Room {
  int node = 0;
  std::uint64_t mask = 0;
};

// Room in the two orders fill() takes it in: most free first spans the fewest
// nodes; least free first is best fit by device (it uses up leftovers and
// keeps roomy nodes whole for bigger jobs). Lower node first among equals (a
// stable order): a counting sort by free count, done once for both orders.
class RoomOrder {
 public:
  explicit RoomOrder(const std::vector<Room>& room) : room_(&room) {
    std::array<int, 66> start{};
    for (const Room& r : room) ++start[static_cast<std::size_t>(cs::popcount(r.mask)) + 1];
    for (std::size_t f = 1; f < start.size(); ++f) start[f] += start[f - 1];
    bucket_ = start;
    by_free_.resize(room.size());
    for (std::size_t i = 0; i < room.size(); ++i) {
      by_free_[static_cast<std::size_t>(start[static_cast<std::size_t>(cs::popcount(room[i].mask))]++)] =
          static_cast<int>(i);
    }
  }

  // `gpus` GPUs, nodes in the order: the lowest free bits of each until done.
  // nullopt when the room holds fewer.
  [[nodiscard]] std::optional<cs::Placement> fill(int gpus, bool most_free_first) const {
    cs::Placement out;
    int left = gpus;
    const auto take = [&](int i) {
      const Room& r = (*room_)[static_cast<std::size_t>(i)];
      const std::uint64_t got = cs::lowest_bits(r.mask, left);
      out.push_back(cs::Slice{r.node, got, 0});
      left -= cs::popcount(got);
    };
    for (int k = 0; k < 65 && left > 0; ++k) {
      const int f = most_free_first ? 64 - k : k;
      if (f == 0) continue;
      const auto b = static_cast<std::size_t>(f);
      for (int j = bucket_[b]; j < bucket_[b + 1] && left > 0; ++j) take(by_free_[static_cast<std::size_t>(j)]);
    }
    if (left > 0) return std::nullopt;
    return out;
  }

 private:
  const std::vector<Room>* room_;
  std::array<int, 66> bucket_{};  // [f] .. [f + 1]: the room with f free GPUs, in by_free_
  std::vector<int> by_free_;
};

// Every node with free GPUs, lowest first.
std::vector<Room> free_room(const cs::Cluster& free) {
  std::vector<Room> out;
  out.reserve(static_cast<std::size_t>(free.nodes()));
  for (int n = 0; n < free.nodes(); ++n) {
    if (const std::uint64_t mask = free.free_mask(n); mask != 0) out.push_back(Room{n, mask});
  }
  return out;
}

// A placement's GPUs in node order: two placements of the same GPUs have the same key.
using GpuKey = std::vector<std::pair<int, std::uint64_t>>;
GpuKey key_of(const cs::Placement& p) {
  GpuKey k;
  k.reserve(p.size());
  for (const auto& s : p) k.emplace_back(s.node, s.mask);
  std::sort(k.begin(), k.end());
  return k;
}

// The candidates, in the order the cost model sees them (its first wins a
// tie), each a set of GPUs at most once: P06's best fit, each island that
// holds `gpus` free GPUs (by island name), then the whole pool most free
// first and least free first. An island with fewer free GPUs than the job
// needs is skipped before any placement is built, and two islands' candidates
// are never compared (their GPUs are disjoint).
std::vector<cs::Placement> candidates(const cs::Cluster& free, PoolTopology& topo, int gpus) {
  std::vector<cs::Placement> out;
  std::vector<GpuKey> keys;
  std::size_t first_island = 0;
  const auto add = [&](std::optional<cs::Placement> p, bool from_island) {
    if (!p) return;
    GpuKey k = key_of(*p);
    // An island's candidate can only repeat the best fit, the one before every island's.
    const std::size_t compare = from_island ? std::min(keys.size(), first_island) : keys.size();
    for (std::size_t i = 0; i < compare; ++i) {
      if (keys[i] == k) return;
    }
    keys.push_back(std::move(k));
    out.push_back(std::move(*p));
  };
  add(cs::place(free, cs::Policy::kBestFit, gpus, 0), false);
  first_island = keys.size();

  const std::vector<Room> everywhere = free_room(free);
  // Free GPUs per island; only islands with enough are searched.
  std::vector<int> in_island(static_cast<std::size_t>(topo.islands()), 0);
  bool any = false;
  for (const Room& r : everywhere) {
    for (const auto& isl : topo.islands_on(r.node)) {
      int& f = in_island[static_cast<std::size_t>(isl.island)];
      f += cs::popcount(r.mask & isl.mask);
      any = any || f >= gpus;
    }
  }
  if (any) {
    std::vector<std::vector<Room>> rooms(in_island.size());
    for (const Room& r : everywhere) {
      for (const auto& isl : topo.islands_on(r.node)) {
        const std::uint64_t m = r.mask & isl.mask;
        if (m != 0 && in_island[static_cast<std::size_t>(isl.island)] >= gpus) {
          rooms[static_cast<std::size_t>(isl.island)].push_back(Room{r.node, m});
        }
      }
    }
    for (const auto& room : rooms) {
      if (!room.empty()) add(RoomOrder(room).fill(gpus, true), true);
    }
  }
  const RoomOrder whole(everywhere);
  add(whole.fill(gpus, true), false);
  add(whole.fill(gpus, false), false);
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
  PoolTopology topology(pool);
  return place_by_topology(free, topology, spec, gpus);
}

std::optional<TopologyChoice> place_by_topology(const cs::Cluster& free, PoolTopology& topology,
                                                const JobSpec& spec, int gpus) {
  if (free.total_free() < gpus) return std::nullopt;
  const double bytes = allreduce_bytes(spec);
  if (gpus < 2 || bytes <= 0) {
    // No ring to cost: P06's choice, or any free devices when it has none.
    // (O(G log N) for the common case; the scan only when best fit fails.)
    auto p = cs::place(free, cs::Policy::kBestFit, gpus, 0);
    if (!p && gpus > 1) p = RoomOrder(free_room(free)).fill(gpus, true);
    if (!p) return std::nullopt;
    return TopologyChoice{std::move(*p), {}};
  }
  auto options = candidates(free, topology, gpus);
  if (options.empty()) return std::nullopt;

  std::vector<RingEstimate> costs;
  costs.reserve(options.size());
  for (const auto& p : options) costs.push_back(topology.cost(p, bytes));
  std::size_t best = 0;
  for (std::size_t i = 1; i < options.size(); ++i) {
    if (costs[i].seconds < costs[best].seconds) best = i;
  }
  TopologyEstimate e;
  e.ranks = gpus;
  e.bytes = bytes;
  e.allreduce_s = costs[best].seconds;
  e.bottleneck = gpulab::inventory::link_kind_name(costs[best].bottleneck);
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
