// The topology-aware placement search against its straightforward form: on
// thousands of random pools (named and unnamed islands, islands shared across
// nodes, declared and missing links, links to devices on other nodes, nodes
// narrower than the pool, repeated node names, any free mask), the search the
// scheduler runs (PoolTopology's tables, islands pruned by free count, one
// counting sort per pool) must choose exactly what the plain one does: the
// same candidates in the same order, the same placement, and the same
// estimate to the last bit of every double.
#include "platform/topology_placement.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>

#include "gpulab/rng.hpp"
#include "platform/inventory.hpp"

namespace {

using namespace platform;
namespace cs = cluster_sim;
namespace inv = gpulab::inventory;

// ---- The straightforward search: what topology_placement.cpp did before it was made cheap. ----

enum class Order { kMostFreeFirst, kLeastFreeFirst };

std::optional<cs::Placement> plain_fill(std::vector<std::pair<int, std::uint64_t>> room, int gpus, Order order) {
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

bool same_gpus(cs::Placement a, cs::Placement b) {
  const auto by_node = [](const cs::Slice& x, const cs::Slice& y) { return x.node < y.node; };
  std::sort(a.begin(), a.end(), by_node);
  std::sort(b.begin(), b.end(), by_node);
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const cs::Slice& x, const cs::Slice& y) { return x.node == y.node && x.mask == y.mask; });
}

std::vector<std::pair<int, std::uint64_t>> plain_all_free(const cs::Cluster& free) {
  std::vector<std::pair<int, std::uint64_t>> out;
  for (int n = 0; n < free.nodes(); ++n) {
    if (const std::uint64_t mask = free.free_mask(n); mask != 0) out.emplace_back(n, mask);
  }
  return out;
}

std::vector<cs::Placement> plain_candidates(const cs::Cluster& free, const PoolView& pool, int gpus) {
  std::vector<cs::Placement> out;
  const auto add = [&](std::optional<cs::Placement> p) {
    if (p && std::none_of(out.begin(), out.end(), [&](const cs::Placement& q) { return same_gpus(*p, q); })) {
      out.push_back(std::move(*p));
    }
  };
  add(cs::place(free, cs::Policy::kBestFit, gpus, 0));
  std::map<std::string, std::vector<std::pair<int, std::uint64_t>>> islands;
  const auto everywhere = plain_all_free(free);
  for (const auto& [n, mask] : everywhere) {
    const auto& devs = pool.devices[static_cast<std::size_t>(n)];
    std::map<std::string, std::uint64_t> here;
    for (std::size_t b = 0; b < devs.size(); ++b) {
      if ((mask >> b & 1U) == 0) continue;
      here[island_of(RankDevice{pool.node_names[static_cast<std::size_t>(n)], devs[b]})] |= std::uint64_t{1} << b;
    }
    for (const auto& [island, m] : here) islands[island].emplace_back(n, m);
  }
  for (auto& [island, room] : islands) add(plain_fill(room, gpus, Order::kMostFreeFirst));
  add(plain_fill(everywhere, gpus, Order::kMostFreeFirst));
  add(plain_fill(everywhere, gpus, Order::kLeastFreeFirst));
  return out;
}

std::optional<TopologyChoice> plain_place(const cs::Cluster& free, const PoolView& pool, const JobSpec& spec,
                                          int gpus) {
  if (free.total_free() < gpus) return std::nullopt;
  const double bytes = allreduce_bytes(spec);
  if (gpus < 2 || bytes <= 0) {
    auto p = cs::place(free, cs::Policy::kBestFit, gpus, 0);
    if (!p && gpus > 1) p = plain_fill(plain_all_free(free), gpus, Order::kMostFreeFirst);
    if (!p) return std::nullopt;
    return TopologyChoice{std::move(*p), {}};
  }
  auto options = plain_candidates(free, pool, gpus);
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
  e.bottleneck = inv::link_kind_name(costs[best].bottleneck.kind);
  e.nodes = costs[best].nodes;
  e.islands = costs[best].islands;
  e.considered = static_cast<int>(options.size());
  for (std::size_t i = 0; i < options.size(); ++i) {
    if (i != best && (e.next_best_s < 0 || costs[i].seconds < e.next_best_s)) e.next_best_s = costs[i].seconds;
  }
  const std::string where = fmt::format("{} node{}, {} island{}, over {}", e.nodes, e.nodes == 1 ? "" : "s",
                                        e.islands, e.islands == 1 ? "" : "s", e.bottleneck);
  e.reason = e.considered == 1 ? fmt::format("the only placement with {} free devices: {}", gpus, where)
                               : fmt::format("cheapest ring of {} placements: {}; the next best {}", e.considered,
                                             where, format_seconds(e.next_best_s));
  return TopologyChoice{std::move(options[best]), std::move(e)};
}

// ---- Random pools. ----

// A pool of one backend as the scheduler builds it, with a free mask per node.
struct RandomPool {
  std::deque<Device> devices;  // stable addresses for the view
  PoolView view;
  std::optional<cs::Cluster> free;
};

inv::LinkKind random_kind(gpulab::Rng& rng) {
  static constexpr inv::LinkKind kKinds[] = {inv::LinkKind::kNvlink, inv::LinkKind::kPcie,
                                             inv::LinkKind::kInfiniband, inv::LinkKind::kEthernet};
  return kKinds[rng.uniform_int(0, 3)];
}

// Bandwidths and latencies from a few values, so that ties (the first wins) happen.
double random_gbps(gpulab::Rng& rng) {
  static constexpr double kGbps[] = {12.5, 25, 64, 400, 900};
  return kGbps[rng.uniform_int(0, 4)];
}
double random_us(gpulab::Rng& rng) {
  static constexpr double kUs[] = {0, 1, 2, 10};
  return kUs[rng.uniform_int(0, 3)];
}

RandomPool random_pool(gpulab::Rng& rng) {
  RandomPool p;
  const int nodes = static_cast<int>(rng.uniform_int(1, 12));
  const int width = static_cast<int>(rng.uniform_int(1, 8));
  const bool repeat_names = rng.bernoulli(0.1);
  for (int n = 0; n < nodes; ++n) {
    const std::string name = repeat_names && n > 0 && rng.bernoulli(0.3) ? p.view.node_names.back()
                                                                         : fmt::format("n{}", n);
    p.view.node_names.push_back(name);
    auto& devs = p.view.devices.emplace_back();
    const int count = rng.bernoulli(0.7) ? width : static_cast<int>(rng.uniform_int(1, width));
    // Islands: the node's own (unnamed), a rack shared with other nodes, or per device.
    const auto scheme = rng.uniform_int(0, 3);
    std::vector<Device> made;
    for (int b = 0; b < count; ++b) {
      Device d;
      d.id = fmt::format("fast:{}", b);
      d.backend = "fast";
      if (scheme == 1) d.domain.island = fmt::format("rack-{}", n % 3);
      if (scheme == 2) d.domain.island = rng.bernoulli(0.5) ? "rack-0" : "";
      if (scheme == 3) d.domain.island = fmt::format("isl-{}", rng.uniform_int(0, 2));
      made.push_back(std::move(d));
    }
    if (rng.bernoulli(0.8)) link_devices(made);  // the agent's nominal links
    for (auto& d : made) {
      // Then some declared differently: rails, NVLink speeds, links to other nodes' devices.
      for (auto& l : d.links) {
        if (rng.bernoulli(0.2)) l.bandwidth_gbps = random_gbps(rng);
        if (rng.bernoulli(0.2)) l.latency_us = random_us(rng);
        if (rng.bernoulli(0.1)) l.kind = random_kind(rng);
      }
      if (rng.bernoulli(0.2)) d.links.push_back(inv::Link{"", inv::LinkKind::kNvlink, random_gbps(rng), random_us(rng)});
      if (rng.bernoulli(0.15)) {
        d.links.push_back(inv::Link{fmt::format("n{}/fast:{}", rng.uniform_int(0, nodes - 1), rng.uniform_int(0, width - 1)),
                                    random_kind(rng), random_gbps(rng), random_us(rng)});
      }
      if (rng.bernoulli(0.1) && !d.links.empty()) d.links.erase(d.links.begin());
      if (rng.bernoulli(0.1)) d.links.insert(d.links.begin(), inv::Link{std::string(inv::kNetworkPeer), random_kind(rng),
                                                                        random_gbps(rng), random_us(rng)});
    }
    for (auto& d : made) devs.push_back(&p.devices.emplace_back(std::move(d)));
  }
  p.free.emplace(nodes, width);
  const double busy = 0.9 * rng.uniform01();
  for (int n = 0; n < nodes; ++n) {
    std::uint64_t taken = 0;
    for (int b = 0; b < width; ++b) {
      const bool past = static_cast<std::size_t>(b) >= p.view.devices[static_cast<std::size_t>(n)].size();
      if (past || rng.bernoulli(busy)) taken |= std::uint64_t{1} << b;
    }
    if (taken != 0) p.free->take(cs::Slice{n, taken, 0});
  }
  return p;
}

std::string text(const std::optional<TopologyChoice>& c) {
  if (!c) return "none";
  std::string out;
  for (const auto& s : c->placement) out += fmt::format("{}:{:x}:{} ", s.node, s.mask, s.cpus);
  const auto& e = c->estimate;
  // Every double in hex float: equal text means equal bits.
  out += fmt::format("| {} {:a} {:a} {} {} {} {} {:a} | {}", e.ranks, e.bytes, e.allreduce_s, e.bottleneck, e.nodes,
                     e.islands, e.considered, e.next_best_s, e.reason);
  return out;
}

TEST(TopologyPlacementOracle, TheSearchChoosesExactlyWhatThePlainSearchChooses) {
  gpulab::Rng rng(20261202);
  int placed = 0, several = 0, via_island = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    RandomPool pool = random_pool(rng);
    PoolTopology topology(pool.view);  // shared by the jobs of one pool, as in a pass
    for (int job = 0; job < 4; ++job) {
      JobSpec spec;
      spec.kind = rng.bernoulli(0.85) ? JobKind::kTrain : JobKind::kMatmul;
      spec.train.hidden = static_cast<int>(rng.uniform_int(1, 256));
      const int gpus = static_cast<int>(rng.uniform_int(1, pool.free->total_gpus() + 1));
      const auto want = plain_place(*pool.free, pool.view, spec, gpus);
      const auto got = place_by_topology(*pool.free, topology, spec, gpus);
      ASSERT_EQ(text(got), text(want)) << "trial " << trial << " job " << job << " gpus " << gpus;
      if (!got) continue;
      ++placed;
      several += got->estimate.considered > 1 ? 1 : 0;
      via_island += got->estimate.islands == 1 && got->estimate.nodes > 1 ? 1 : 0;
      for (const auto& s : got->placement) pool.free->take(s);  // the next job sees a fuller pool
    }
  }
  // The walk reached the interesting cases, not only "nothing fits".
  EXPECT_GT(placed, 3000);
  EXPECT_GT(several, 1000);
  EXPECT_GT(via_island, 50);
}

TEST(TopologyPlacementOracle, ThePoolsRingCostIsRingCost) {
  gpulab::Rng rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    RandomPool pool = random_pool(rng);
    PoolTopology topology(pool.view);
    // Any set of devices in slice order (a placement's ranks).
    cs::Placement p;
    for (int n = 0; n < pool.free->nodes(); ++n) {
      const auto devs = pool.view.devices[static_cast<std::size_t>(n)].size();
      const std::uint64_t all = devs == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << devs) - 1;
      const std::uint64_t mask = static_cast<std::uint64_t>(rng.uniform_int(0, 255)) & all;
      if (mask != 0) p.push_back(cs::Slice{n, mask, 0});
    }
    std::reverse(p.begin(), p.end());  // slices need not come in node order
    const double bytes = 1e3 + 1e8 * rng.uniform01();
    const RingCost want = ring_cost(ranks_of(p, pool.view), bytes);
    const RingEstimate got = topology.cost(p, bytes);
    ASSERT_EQ(fmt::format("{:a}", got.seconds), fmt::format("{:a}", want.seconds)) << "trial " << trial;
    if (want.seconds > 0) {  // two ranks or more: a bottleneck
      EXPECT_EQ(got.bottleneck, want.bottleneck.kind) << "trial " << trial;
      EXPECT_EQ(got.bottleneck_gbps, want.bottleneck.bandwidth_gbps) << "trial " << trial;
      EXPECT_EQ(got.bottleneck_us, want.bottleneck.latency_us) << "trial " << trial;
    }
    EXPECT_EQ(got.nodes, want.nodes) << "trial " << trial;
    EXPECT_EQ(got.islands, want.islands) << "trial " << trial;
  }
}

}  // namespace
