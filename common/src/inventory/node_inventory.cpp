#include "gpulab/inventory/node_inventory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

namespace gpulab::inventory {
namespace {

constexpr std::size_t kMaxNameLength = 253;  // a DNS name, as Kubernetes node names are
constexpr int kMaxCpus = 1'000'000;
constexpr double kMaxLatencyUs = 1e6;

bool has_blank_or_control(std::string_view s) {
  return std::any_of(s.begin(), s.end(),
                     [](char c) { return static_cast<unsigned char>(c) <= ' ' || c == 0x7f; });
}

// Why `s` cannot name a node or an accelerator ("" if it can). Both appear in
// "<node>/<id>" link peers, hence no '/'.
std::string name_problem(std::string_view s) {
  if (s.empty()) return "must not be empty";
  if (s.size() > kMaxNameLength)
    return fmt::format("is {} characters (at most {})", s.size(), kMaxNameLength);
  if (has_blank_or_control(s)) return fmt::format("'{}' contains a blank or control character", s);
  if (s.find('/') != std::string_view::npos)
    return fmt::format("'{}' contains '/' (reserved for <node>/<id>)", s);
  return "";
}

std::string gib(std::uint64_t bytes) {
  return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1 << 30));
}

std::string known_backend_list() {
  std::string out;
  for (std::string_view b : known_backends())
    out += fmt::format("{}{}", out.empty() ? "" : ", ", b);
  return out;
}

class Checker {
 public:
  explicit Checker(std::vector<std::string>& out) : out_(out) {}

  template <class... Args>
  void fail(std::string_view where, fmt::format_string<Args...> f, Args&&... args) {
    out_.push_back(fmt::format("{}: {}", where, fmt::format(f, std::forward<Args>(args)...)));
  }

  // Everything about one node that needs no other node. `prefix` is "" for a
  // lone node and "nodes[i]." inside a cluster.
  void node(const NodeInventory& inv, const std::string& prefix) {
    if (const std::string p = name_problem(inv.node); !p.empty()) fail(prefix + "node", "{}", p);
    if (inv.cpus < 0 || inv.cpus > kMaxCpus)
      fail(prefix + "cpus", "must be 0 to {}, got {}", kMaxCpus, inv.cpus);
    std::map<std::string, std::string> ids;  // accelerator and partition ids -> where first seen
    std::map<int, std::size_t> indexes;
    for (std::size_t i = 0; i < inv.accelerators.size(); ++i) {
      const Accelerator& a = inv.accelerators[i];
      const std::string at = fmt::format("{}accelerators[{}]", prefix, i);
      if (std::string p = name_problem(a.id); !p.empty()) {
        fail(at + ".id", "{}", p);
      } else if (a.id == kHostPeer || a.id == kNetworkPeer) {
        fail(at + ".id", "'{}' is reserved for links to the host or the network", a.id);
      } else if (const auto [it, fresh] = ids.emplace(a.id, at); !fresh) {
        fail(at + ".id", "'{}' is a duplicate of {}'s", a.id, it->second);
      }
      if (a.index < 0) {
        fail(at + ".index", "must be >= 0, got {}", a.index);
      } else if (const auto [it, fresh] = indexes.emplace(a.index, i); !fresh) {
        fail(at + ".index", "{} is also accelerators[{}]'s", a.index, it->second);
      }
      if (a.vendor.empty() || has_blank_or_control(a.vendor))
        fail(at + ".vendor", "must be one word (\"nvidia\", \"amd\", \"cpu\"), got '{}'", a.vendor);
      if (!is_known_backend(a.backend))
        fail(at + ".backend", "unknown backend '{}' (known: {})", a.backend, known_backend_list());
      if (a.model.empty()) fail(at + ".model", "must not be empty");
      if (a.memory_bytes == 0 || a.memory_bytes > kMaxMemoryBytes)
        fail(at + ".memory_bytes", "{} is absurd (1 byte to 64 TiB; the field is in bytes)",
             a.memory_bytes);
      if (!std::isfinite(a.memory_bandwidth_gbps) || a.memory_bandwidth_gbps < 0 ||
          a.memory_bandwidth_gbps > kMaxLinkGbps)
        fail(at + ".memory_bandwidth_GBps", "must be 0 (unknown) to {}, got {}", kMaxLinkGbps,
             a.memory_bandwidth_gbps);
      if (has_blank_or_control(a.domain.island))
        fail(at + ".domain.island", "'{}' contains a blank or control character", a.domain.island);
      if (a.domain.numa_node < -1)
        fail(at + ".domain.numa_node", "must be -1 (unknown) or >= 0, got {}", a.domain.numa_node);
      if (a.health.healthy && !a.health.reason.empty())
        fail(at + ".health.reason", "a healthy accelerator has no reason, got '{}'",
             a.health.reason);
      if (!a.health.healthy && a.health.reason.empty())
        fail(at + ".health.reason", "say why it is unhealthy");
      partitions(a, at, ids);
    }
    for (std::size_t i = 0; i < inv.accelerators.size(); ++i)
      links(inv, inv.accelerators[i], fmt::format("{}accelerators[{}]", prefix, i));
  }

 private:
  void partitions(const Accelerator& a, const std::string& at,
                  std::map<std::string, std::string>& ids) {
    std::uint64_t mig_total = 0;
    for (std::size_t j = 0; j < a.partitions.size(); ++j) {
      const Partition& p = a.partitions[j];
      const std::string pat = fmt::format("{}.partitions[{}]", at, j);
      if (p.id.empty() || has_blank_or_control(p.id)) {
        fail(pat + ".id", "must be non-empty without blanks, got '{}'", p.id);
      } else if (const auto [it, fresh] = ids.emplace(p.id, pat); !fresh) {
        fail(pat + ".id", "'{}' is a duplicate of {}'s", p.id, it->second);
      }
      if (p.kind == PartitionKind::kMig && p.profile.empty())
        fail(pat + ".profile", "a MIG partition names its profile");
      if (p.kind == PartitionKind::kTimeSlice && !p.profile.empty())
        fail(pat + ".profile", "only MIG partitions have a profile, got '{}'", p.profile);
      if (p.memory_bytes == 0 || p.memory_bytes > a.memory_bytes) {
        fail(pat + ".memory_bytes", "{} must be 1 byte to the accelerator's {} bytes",
             p.memory_bytes, a.memory_bytes);
      } else if (p.kind == PartitionKind::kMig) {
        mig_total += p.memory_bytes;
      }
    }
    if (mig_total > a.memory_bytes)
      fail(at + ".partitions", "MIG instances hold {} but the accelerator has {}", gib(mig_total),
           gib(a.memory_bytes));
  }

  void links(const NodeInventory& inv, const Accelerator& a, const std::string& at) {
    std::set<std::pair<std::string, LinkKind>> seen;
    for (std::size_t k = 0; k < a.links.size(); ++k) {
      const Link& l = a.links[k];
      const std::string lat = fmt::format("{}.links[{}]", at, k);
      const std::string local_prefix = inv.node + "/";
      const std::string_view local = l.peer.starts_with(local_prefix)
                                         ? std::string_view(l.peer).substr(local_prefix.size())
                                         : l.peer;
      if (l.peer.empty()) {
        fail(lat + ".peer", "must name an accelerator, '<node>/<id>', 'host' or 'network'");
      } else if (local == a.id) {
        fail(lat + ".peer", "'{}' is the accelerator itself", l.peer);
      } else if (local != kHostPeer && local != kNetworkPeer &&
                 local.find('/') == std::string_view::npos && inv.find(local) == nullptr) {
        fail(lat + ".peer", "no accelerator '{}' on node '{}'", local, inv.node);
      }
      if (!seen.emplace(l.peer, l.kind).second)
        fail(lat, "a second {} link to '{}'", link_kind_name(l.kind), l.peer);
      if (!std::isfinite(l.bandwidth_gbps) || l.bandwidth_gbps <= 0 ||
          l.bandwidth_gbps > kMaxLinkGbps)
        fail(lat + ".bandwidth_GBps", "must be > 0 and at most {}, got {}", kMaxLinkGbps,
             l.bandwidth_gbps);
      if (!std::isfinite(l.latency_us) || l.latency_us < 0 || l.latency_us > kMaxLatencyUs)
        fail(lat + ".latency_us", "must be 0 (not modelled) to {}, got {}", kMaxLatencyUs,
             l.latency_us);
    }
  }

  std::vector<std::string>& out_;
};

}  // namespace

const Accelerator* NodeInventory::find(std::string_view id) const {
  const auto it = std::find_if(accelerators.begin(), accelerators.end(),
                               [&](const Accelerator& a) { return a.id == id; });
  return it == accelerators.end() ? nullptr : &*it;
}

Accelerator* NodeInventory::find(std::string_view id) {
  return const_cast<Accelerator*>(std::as_const(*this).find(id));
}

std::uint64_t NodeInventory::total_memory_bytes() const {
  std::uint64_t sum = 0;
  for (const Accelerator& a : accelerators) sum += a.memory_bytes;
  return sum;
}

std::size_t NodeInventory::healthy_count() const {
  return static_cast<std::size_t>(
      std::count_if(accelerators.begin(), accelerators.end(),
                    [](const Accelerator& a) { return a.health.healthy; }));
}

std::string qualified_id(std::string_view node, std::string_view id) {
  return fmt::format("{}/{}", node, id);
}

std::vector<std::string> validate(const NodeInventory& inv) {
  std::vector<std::string> out;
  Checker(out).node(inv, "");
  return out;
}

std::vector<std::string> validate_cluster(std::span<const NodeInventory> nodes) {
  std::vector<std::string> out;
  Checker check(out);
  std::map<std::string, std::size_t> by_name;
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    const std::string prefix = fmt::format("nodes[{}].", n);
    check.node(nodes[n], prefix);
    if (const auto [it, fresh] = by_name.emplace(nodes[n].node, n);
        !fresh && !nodes[n].node.empty())
      check.fail(prefix + "node", "'{}' is a duplicate of nodes[{}]'s", nodes[n].node, it->second);
  }
  // Peers on other nodes, now that every node is known.
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    for (std::size_t i = 0; i < nodes[n].accelerators.size(); ++i) {
      const auto& links = nodes[n].accelerators[i].links;
      for (std::size_t k = 0; k < links.size(); ++k) {
        const std::string& peer = links[k].peer;
        const std::size_t slash = peer.find('/');
        if (slash == std::string::npos) continue;
        const std::string node = peer.substr(0, slash), id = peer.substr(slash + 1);
        if (node == nodes[n].node) continue;  // checked with its own node
        const std::string where = fmt::format("nodes[{}].accelerators[{}].links[{}].peer", n, i, k);
        const auto it = by_name.find(node);
        if (it == by_name.end()) {
          check.fail(where, "no node '{}' in the cluster", node);
        } else if (nodes[it->second].find(id) == nullptr) {
          check.fail(where, "no accelerator '{}' on node '{}'", id, node);
        }
      }
    }
  }
  return out;
}

}  // namespace gpulab::inventory
