// Which network interface a rank's ring connections use, chosen the way NCCL
// chooses its socket interface — the setting behind the classic "collectives
// 10x slow on the new cluster" incident, where the job talks over the
// management NIC instead of the fabric.
//
// A spec is NCCL_SOCKET_IFNAME's syntax: comma-separated name prefixes
// ("ens,ib"), "=" in front for exact names ("=ens2"), "^" in front to exclude
// the listed prefixes instead ("^docker,lo"). The first interface, in the
// kernel's order (as getifaddrs lists them), that is up, has an IPv4 address
// and matches, is the one. With no spec, NCCL's default: an ib* interface if
// there is one, else the first that is not lo or docker*, else lo. On a host
// whose management NIC is listed before the fabric, the default is wrong.
#pragma once

#include <string>
#include <vector>

namespace ring {

struct NetInterface {
  std::string name;
  std::string address;  // numeric IPv4
  bool up = false;
};

// The up-or-down IPv4 interfaces of the calling thread's network namespace, in the kernel's order.
std::vector<NetInterface> ipv4_interfaces();

struct IfaceChoice {
  NetInterface iface;
  std::string rule;  // how it was chosen, for the output: "NCCL_SOCKET_IFNAME=ens2", "default (...)"
};

// `spec` empty: the default rule. `source` names where the spec came from
// ("--iface", "NCCL_SOCKET_IFNAME"). Throws std::runtime_error naming the spec
// and the interfaces there are when none matches.
IfaceChoice choose_interface(const std::vector<NetInterface>& candidates, const std::string& spec,
                             const std::string& source);

// Whether `name` matches one spec (no "^" handling: that is choose_interface's).
bool matches_prefix_list(const std::string& name, const std::string& list);

}  // namespace ring
