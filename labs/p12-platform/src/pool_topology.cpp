#include "platform/pool_topology.hpp"

#include <algorithm>
#include <bit>
#include <unordered_map>

#include "gpulab/inventory/node_inventory.hpp"
#include "platform/inventory.hpp"
#include "topology/cost_model.hpp"

namespace platform {
namespace {

namespace inv = gpulab::inventory;

}  // namespace

void PoolTopology::build() {
  built_ = true;
  const auto& names = pool_->node_names;
  const auto& devices = pool_->devices;
  const std::size_t n = names.size();
  // Names interned: ring_cost() counts distinct node names.
  name_id_.resize(n);
  std::unordered_map<std::string_view, int> ids;
  ids.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    name_id_[i] = ids.emplace(names[i], static_cast<int>(ids.size())).first->second;
  }
  // island_of(): a device's named island, or "node <name>" when it has none.
  std::vector<std::string> own(n);  // "node <name>" for a node with an unnamed device
  std::vector<std::string_view> sorted;
  for (std::size_t i = 0; i < n; ++i) {
    for (const Device* d : devices[i]) {
      if (!d->domain.island.empty()) {
        sorted.emplace_back(d->domain.island);
      } else if (own[i].empty()) {
        own[i] = "node " + names[i];
      }
    }
    if (!own[i].empty()) sorted.emplace_back(own[i]);
  }
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  islands_ = static_cast<int>(sorted.size());
  // An island's number is its name's rank.
  const auto number = [&](std::string_view s) {
    return static_cast<int>(std::lower_bound(sorted.begin(), sorted.end(), s) - sorted.begin());
  };
  island_of_.assign(n, {});
  node_islands_.assign(n, {});
  facts_.assign(n, {});
  for (std::size_t i = 0; i < n; ++i) {
    const int unnamed = own[i].empty() ? -1 : number(own[i]);
    island_of_[i].resize(devices[i].size());
    facts_[i].resize(devices[i].size());
    auto& on = node_islands_[i];
    for (std::size_t b = 0; b < devices[i].size(); ++b) {
      const std::string& isl = devices[i][b]->domain.island;
      const int k = isl.empty() ? unnamed : number(isl);
      island_of_[i][b] = k;
      const auto it = std::find_if(on.begin(), on.end(), [k](const IslandBits& x) { return x.island == k; });
      if (it == on.end()) {
        on.push_back(IslandBits{k, std::uint64_t{1} << b});
      } else {
        it->mask |= std::uint64_t{1} << b;
      }
    }
    std::sort(on.begin(), on.end(), [](const IslandBits& a, const IslandBits& b) { return a.island < b.island; });
  }
  name_seen_.assign(ids.size(), 0);
  island_seen_.assign(sorted.size(), 0);
  stamp_ = 0;
}

int PoolTopology::islands() {
  if (!built_) build();
  return islands_;
}

std::span<const PoolTopology::IslandBits> PoolTopology::islands_on(int node) {
  if (!built_) build();
  return node_islands_[static_cast<std::size_t>(node)];
}

const PoolTopology::DeviceFacts& PoolTopology::facts(int node, int bit) {
  DeviceFacts& f = facts_[static_cast<std::size_t>(node)][static_cast<std::size_t>(bit)];
  if (f.ready) return f;
  f.ready = true;
  const Device& d = *pool_->devices[static_cast<std::size_t>(node)][static_cast<std::size_t>(bit)];
  // The fallbacks link_between() uses when the device declares no such link.
  f.host = LinkFacts{inv::LinkKind::kPcie, kHostLinkGbps, kHostLinkUs};
  f.network = LinkFacts{inv::LinkKind::kEthernet, kNetworkLinkGbps, kNetworkLinkUs};
  f.nvlink = LinkFacts{inv::LinkKind::kNvlink, kIslandLinkGbps, kIslandLinkUs};
  bool host = false, network = false;
  const inv::Link* fastest_nvlink = nullptr;
  for (const auto& l : d.links) {
    // rail(): the first link to the peer, of any kind.
    if (!host && l.peer == inv::kHostPeer) {
      f.host = LinkFacts{l.kind, l.bandwidth_gbps, l.latency_us};
      host = true;
    }
    if (!network && l.peer == inv::kNetworkPeer) {
      f.network = LinkFacts{l.kind, l.bandwidth_gbps, l.latency_us};
      network = true;
    }
    // fastest(): the first of the highest bandwidth.
    if (l.kind == inv::LinkKind::kNvlink &&
        (fastest_nvlink == nullptr || l.bandwidth_gbps > fastest_nvlink->bandwidth_gbps)) {
      fastest_nvlink = &l;
    }
    if (l.peer.find('/') != std::string::npos) f.remote_links = true;
  }
  if (fastest_nvlink != nullptr) {
    f.nvlink = LinkFacts{fastest_nvlink->kind, fastest_nvlink->bandwidth_gbps, fastest_nvlink->latency_us};
  }
  if (!d.domain.island.empty()) {
    const auto it = std::find(named_islands_.begin(), named_islands_.end(), d.domain.island);
    f.named_island = static_cast<int>(it - named_islands_.begin());
    if (it == named_islands_.end()) named_islands_.push_back(d.domain.island);
  }
  return f;
}

// link_between() (ring_cost.cpp), rule for rule.
PoolTopology::LinkFacts PoolTopology::link(const Rank& a, const Rank& b) {
  // The slower of two: the lower bandwidth (the first on a tie), the higher latency.
  const auto slower = [](const LinkFacts& x, const LinkFacts& y) {
    LinkFacts out = x.gbps <= y.gbps ? x : y;
    out.us = std::max(x.us, y.us);
    return out;
  };
  const auto& da = *pool_->devices[static_cast<std::size_t>(a.node)][static_cast<std::size_t>(a.bit)];
  const auto& db = *pool_->devices[static_cast<std::size_t>(b.node)][static_cast<std::size_t>(b.bit)];
  const DeviceFacts& fa = facts(a.node, a.bit);
  const DeviceFacts& fb = facts(b.node, b.bit);
  if (name_id_[static_cast<std::size_t>(a.node)] == name_id_[static_cast<std::size_t>(b.node)]) {
    if (const auto* l = da.link_to(db.id)) return LinkFacts{l->kind, l->bandwidth_gbps, l->latency_us};
    return slower(fa.host, fb.host);
  }
  if (fa.remote_links) {
    const auto& b_node = pool_->node_names[static_cast<std::size_t>(b.node)];
    if (const auto* l = da.link_to(inv::qualified_id(b_node, db.id))) {
      return LinkFacts{l->kind, l->bandwidth_gbps, l->latency_us};
    }
  }
  if (fa.named_island >= 0 && fa.named_island == fb.named_island) return slower(fa.nvlink, fb.nvlink);
  return slower(fa.network, fb.network);
}

RingEstimate PoolTopology::cost(const cluster_sim::Placement& p, double bytes) {
  if (!built_) build();
  ranks_.clear();
  for (const auto& slice : p) {
    for (std::uint64_t m = slice.mask; m != 0; m &= m - 1) {
      ranks_.push_back(Rank{slice.node, std::countr_zero(m)});
    }
  }
  RingEstimate out;
  if (++stamp_ == 0) {  // wrapped: forget every old stamp
    std::fill(name_seen_.begin(), name_seen_.end(), 0);
    std::fill(island_seen_.begin(), island_seen_.end(), 0);
    stamp_ = 1;
  }
  for (const Rank& r : ranks_) {
    auto& name = name_seen_[static_cast<std::size_t>(name_id_[static_cast<std::size_t>(r.node)])];
    if (name != stamp_) {
      name = stamp_;
      ++out.nodes;
    }
    auto& island = island_seen_[static_cast<std::size_t>(
        island_of_[static_cast<std::size_t>(r.node)][static_cast<std::size_t>(r.bit)])];
    if (island != stamp_) {
      island = stamp_;
      ++out.islands;
    }
  }
  const std::size_t n = ranks_.size();
  if (n < 2) return out;
  LinkFacts worst = link(ranks_[0], ranks_[1 % n]);
  for (std::size_t i = 1; i < n; ++i) {
    const LinkFacts l = link(ranks_[i], ranks_[(i + 1) % n]);
    if (l.gbps < worst.gbps || (l.gbps == worst.gbps && l.us > worst.us)) worst = l;
  }
  out.bottleneck = worst.kind;
  out.bottleneck_gbps = worst.gbps;
  out.bottleneck_us = worst.us;
  const topo::Link link{std::string(inv::link_kind_name(worst.kind)), worst.gbps * 1e9, worst.us * 1e-6};
  out.seconds = topo::ring_allreduce_time(static_cast<int>(n), bytes, link);
  return out;
}

}  // namespace platform
