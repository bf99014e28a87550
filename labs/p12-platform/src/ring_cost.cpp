#include "platform/ring_cost.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "gpulab/inventory/node_inventory.hpp"
#include "platform/inventory.hpp"
#include "platform/task/mlp.hpp"
#include "topology/cost_model.hpp"

namespace platform {
namespace {

namespace inv = gpulab::inventory;

// The slower of two links: lower bandwidth, and the higher latency of the two.
inv::Link slower(const inv::Link& a, const inv::Link& b) {
  inv::Link out = a.bandwidth_gbps <= b.bandwidth_gbps ? a : b;
  out.latency_us = std::max(a.latency_us, b.latency_us);
  return out;
}

// The fastest link of `kind` the device declares, or `fallback`.
inv::Link fastest(const inv::Accelerator& a, inv::LinkKind kind, const inv::Link& fallback) {
  const inv::Link* best = nullptr;
  for (const auto& l : a.links) {
    if (l.kind == kind && (best == nullptr || l.bandwidth_gbps > best->bandwidth_gbps)) best = &l;
  }
  return best ? *best : fallback;
}

// The device's link to a peer that is not an accelerator (host, network), or `fallback`.
inv::Link rail(const inv::Accelerator& a, std::string_view peer, const inv::Link& fallback) {
  const inv::Link* l = a.link_to(peer);
  return l ? *l : fallback;
}

}  // namespace

std::string island_of(const RankDevice& r) {
  return r.device->domain.island.empty() ? "node " + r.node : r.device->domain.island;
}

inv::Link link_between(const RankDevice& a, const RankDevice& b) {
  const inv::Link nvlink{"", inv::LinkKind::kNvlink, kIslandLinkGbps, kIslandLinkUs};
  const inv::Link pcie{std::string(inv::kHostPeer), inv::LinkKind::kPcie, kHostLinkGbps,
                       kHostLinkUs};
  const inv::Link ethernet{std::string(inv::kNetworkPeer), inv::LinkKind::kEthernet,
                           kNetworkLinkGbps, kNetworkLinkUs};
  if (a.node == b.node) {
    if (const auto* l = a.device->link_to(b.device->id)) return *l;
    // No direct link: through host memory, over each device's PCIe.
    return slower(rail(*a.device, inv::kHostPeer, pcie), rail(*b.device, inv::kHostPeer, pcie));
  }
  if (const auto* l = a.device->link_to(inv::qualified_id(b.node, b.device->id))) return *l;
  if (!a.device->domain.island.empty() && a.device->domain.island == b.device->domain.island) {
    // One NVLink switch domain across nodes (an NVL72 rack).
    return slower(fastest(*a.device, inv::LinkKind::kNvlink, nvlink),
                  fastest(*b.device, inv::LinkKind::kNvlink, nvlink));
  }
  return slower(rail(*a.device, inv::kNetworkPeer, ethernet),
                rail(*b.device, inv::kNetworkPeer, ethernet));
}

RingCost ring_cost(std::span<const RankDevice> ranks, double bytes) {
  RingCost out;
  std::set<std::string> nodes, islands;
  for (const auto& r : ranks) {
    nodes.insert(r.node);
    islands.insert(island_of(r));
  }
  out.nodes = static_cast<int>(nodes.size());
  out.islands = static_cast<int>(islands.size());
  const auto n = ranks.size();
  if (n < 2) return out;
  out.bottleneck = link_between(ranks[0], ranks[1 % n]);
  for (std::size_t i = 1; i < n; ++i) {
    const auto l = link_between(ranks[i], ranks[(i + 1) % n]);
    if (l.bandwidth_gbps < out.bottleneck.bandwidth_gbps ||
        (l.bandwidth_gbps == out.bottleneck.bandwidth_gbps &&
         l.latency_us > out.bottleneck.latency_us)) {
      out.bottleneck = l;
    }
  }
  const topo::Link link{std::string(inv::link_kind_name(out.bottleneck.kind)),
                        out.bottleneck.bandwidth_gbps * 1e9, out.bottleneck.latency_us * 1e-6};
  out.seconds = topo::ring_allreduce_time(static_cast<int>(n), bytes, link);
  return out;
}

double allreduce_bytes(const JobSpec& spec) {
  if (spec.kind != JobKind::kTrain) return 0;
  const auto shape =
      gpulab::platform::task::train_shape(static_cast<std::uint64_t>(spec.train.hidden));
  return static_cast<double>(shape.param_count() * sizeof(float));
}

std::string format_seconds(double s) {
  if (s < 1e-3) return fmt::format("{:.1f} us", s * 1e6);
  if (s < 1) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.2f} s", s);
}

}  // namespace platform
