#include "ring_allreduce/iface_select.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ring {
namespace {

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = list.find(',', start);
    const std::size_t end = comma == std::string::npos ? list.size() : comma;
    if (end > start) out.push_back(list.substr(start, end - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

const NetInterface* first_up(const std::vector<NetInterface>& all, const auto& wanted) {
  for (const auto& i : all)
    if (i.up && wanted(i.name)) return &i;
  return nullptr;
}

std::string listing(const std::vector<NetInterface>& all) {
  std::vector<std::string> names;
  for (const auto& i : all) names.push_back(fmt::format("{} {}{}", i.name, i.address, i.up ? "" : " (down)"));
  return names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

std::vector<NetInterface> ipv4_interfaces() {
  ifaddrs* head = nullptr;
  if (::getifaddrs(&head) != 0) throw std::runtime_error(fmt::format("getifaddrs: {}", std::strerror(errno)));
  std::vector<NetInterface> out;
  for (const ifaddrs* a = head; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN] = {};
    const auto* sin = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
    if (::inet_ntop(AF_INET, &sin->sin_addr, text, sizeof text) == nullptr) continue;
    out.push_back({a->ifa_name, text, (a->ifa_flags & IFF_UP) != 0 && (a->ifa_flags & IFF_RUNNING) != 0});
  }
  ::freeifaddrs(head);
  return out;
}

bool matches_prefix_list(const std::string& name, const std::string& list) {
  bool exact = false;
  std::string body = list;
  if (!body.empty() && body.front() == '=') {
    exact = true;
    body.erase(0, 1);
  }
  for (const auto& p : split(body))
    if (exact ? name == p : name.rfind(p, 0) == 0) return true;
  return false;
}

IfaceChoice choose_interface(const std::vector<NetInterface>& candidates, const std::string& spec,
                             const std::string& source) {
  if (!spec.empty()) {
    const bool exclude = spec.front() == '^';
    const std::string list = exclude ? spec.substr(1) : spec;
    if (split(list.starts_with("=") ? list.substr(1) : list).empty())
      throw std::runtime_error(fmt::format("{}='{}' names no interface", source, spec));
    const auto* hit = first_up(candidates, [&](const std::string& n) { return matches_prefix_list(n, list) != exclude; });
    if (hit == nullptr)
      throw std::runtime_error(fmt::format("{}={}: no up IPv4 interface matches (this host has: {})", source, spec,
                                           listing(candidates)));
    return {*hit, fmt::format("{}={}", source, spec)};
  }
  // NCCL's default: InfiniBand (IPoIB) first, then anything but loopback and docker bridges.
  if (const auto* ib = first_up(candidates, [](const std::string& n) { return n.rfind("ib", 0) == 0; }))
    return {*ib, "default (an ib* interface first)"};
  if (const auto* other = first_up(candidates, [](const std::string& n) { return !matches_prefix_list(n, "docker,lo"); }))
    return {*other, "default (no ib*: the first up interface that is not lo or docker*)"};
  if (const auto* lo = first_up(candidates, [](const std::string& n) { return n.rfind("lo", 0) == 0; }))
    return {*lo, "default (nothing but loopback)"};
  throw std::runtime_error(fmt::format("no up IPv4 interface to use (this host has: {})", listing(candidates)));
}

}  // namespace ring
