#include "gpulab/inventory/inventory_json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <stdexcept>

namespace gpulab::inventory {
namespace {

// A reader error; caught at the top and returned as gpulab::Error.
struct BadField : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void bad(const std::string& where, std::string_view what) {
  throw BadField(fmt::format("{}: {}", where, what));
}

std::string at(const std::string& where, std::string_view key) {
  return where.empty() ? std::string(key) : fmt::format("{}.{}", where, key);
}

const Json& object(const Json& j, const std::string& where,
                   std::initializer_list<std::string_view> known) {
  if (!j.is_object()) bad(where.empty() ? "inventory" : where, "expected an object");
  for (const auto& [key, value] : j.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end())
      bad(at(where, key), "unknown field");
  }
  return j;
}

const Json* field(const Json& obj, std::string_view key, const std::string& where, bool required) {
  const auto it = obj.find(key);
  if (it == obj.end()) {
    if (required) bad(at(where, key), "missing");
    return nullptr;
  }
  return &*it;
}

std::string read_string(const Json& obj, std::string_view key, const std::string& where,
                        bool required, std::string fallback = {}) {
  const Json* v = field(obj, key, where, required);
  if (v == nullptr) return fallback;
  if (!v->is_string()) bad(at(where, key), "expected a string");
  return v->get<std::string>();
}

long long read_integer(const Json& obj, std::string_view key, const std::string& where,
                       bool required, long long fallback) {
  const Json* v = field(obj, key, where, required);
  if (v == nullptr) return fallback;
  if (!v->is_number_integer()) bad(at(where, key), "expected a whole number");
  if (v->is_number_unsigned() &&
      v->get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
    bad(at(where, key), "too large");
  const long long x = v->get<long long>();
  if (x < std::numeric_limits<int>::min() || x > std::numeric_limits<int>::max())
    bad(at(where, key), "too large");
  return x;
}

std::uint64_t read_bytes(const Json& obj, std::string_view key, const std::string& where) {
  const Json* v = field(obj, key, where, true);
  // A document built in C++ holds small counts as signed; one parsed from text, as unsigned.
  if (!v->is_number_integer() || (!v->is_number_unsigned() && v->get<std::int64_t>() < 0))
    bad(at(where, key), "expected a whole number of bytes");
  return v->get<std::uint64_t>();
}

double read_number(const Json& obj, std::string_view key, const std::string& where,
                   double fallback) {
  const Json* v = field(obj, key, where, false);
  if (v == nullptr) return fallback;
  if (!v->is_number()) bad(at(where, key), "expected a number");
  return v->get<double>();
}

const Json& read_array(const Json& obj, std::string_view key, const std::string& where,
                       bool required) {
  static const Json kEmpty = Json::array();
  const Json* v = field(obj, key, where, required);
  if (v == nullptr) return kEmpty;
  if (!v->is_array()) bad(at(where, key), "expected a list");
  return *v;
}

Partition partition_from(const Json& j, const std::string& where) {
  object(j, where, {"id", "kind", "profile", "memory_bytes"});
  Partition p;
  p.id = read_string(j, "id", where, true);
  const std::string kind = read_string(j, "kind", where, true);
  const auto k = parse_partition_kind(kind);
  if (!k) bad(at(where, "kind"), fmt::format("unknown partition kind '{}' (mig, timeslice)", kind));
  p.kind = *k;
  p.profile = read_string(j, "profile", where, false);
  p.memory_bytes = read_bytes(j, "memory_bytes", where);
  return p;
}

Link link_from(const Json& j, const std::string& where) {
  object(j, where, {"peer", "kind", "bandwidth_GBps", "latency_us"});
  Link l;
  l.peer = read_string(j, "peer", where, true);
  const std::string kind = read_string(j, "kind", where, true);
  const auto k = parse_link_kind(kind);
  if (!k)
    bad(at(where, "kind"),
        fmt::format("unknown link kind '{}' (nvlink, pcie, ib, ethernet)", kind));
  l.kind = *k;
  field(j, "bandwidth_GBps", where, true);  // required, unlike latency
  l.bandwidth_gbps = read_number(j, "bandwidth_GBps", where, 0);
  l.latency_us = read_number(j, "latency_us", where, 0);
  return l;
}

Accelerator accelerator_from(const Json& j, const std::string& where) {
  object(j, where,
         {"id", "index", "vendor", "backend", "model", "memory_bytes", "memory_bandwidth_GBps",
          "domain", "partitions", "links", "health"});
  Accelerator a;
  a.id = read_string(j, "id", where, true);
  a.index = static_cast<int>(read_integer(j, "index", where, true, 0));
  a.vendor = read_string(j, "vendor", where, true);
  a.backend = read_string(j, "backend", where, true);
  a.model = read_string(j, "model", where, true);
  a.memory_bytes = read_bytes(j, "memory_bytes", where);
  a.memory_bandwidth_gbps = read_number(j, "memory_bandwidth_GBps", where, 0);
  if (const Json* d = field(j, "domain", where, false)) {
    const std::string dw = at(where, "domain");
    object(*d, dw, {"island", "numa_node"});
    a.domain.island = read_string(*d, "island", dw, false);
    a.domain.numa_node = static_cast<int>(read_integer(*d, "numa_node", dw, false, -1));
  }
  const Json& parts = read_array(j, "partitions", where, false);
  for (std::size_t i = 0; i < parts.size(); ++i)
    a.partitions.push_back(partition_from(parts[i], fmt::format("{}.partitions[{}]", where, i)));
  const Json& links = read_array(j, "links", where, false);
  for (std::size_t i = 0; i < links.size(); ++i)
    a.links.push_back(link_from(links[i], fmt::format("{}.links[{}]", where, i)));
  if (const Json* h = field(j, "health", where, false)) {
    const std::string hw = at(where, "health");
    object(*h, hw, {"healthy", "reason"});
    const Json* ok = field(*h, "healthy", hw, true);
    if (!ok->is_boolean()) bad(at(hw, "healthy"), "expected true or false");
    a.health.healthy = ok->get<bool>();
    a.health.reason = read_string(*h, "reason", hw, false);
  }
  return a;
}

NodeInventory node_from(const Json& j, const std::string& where) {
  object(j, where, {"node", "cpus", "accelerators"});
  NodeInventory inv;
  inv.node = read_string(j, "node", where, true);
  inv.cpus = static_cast<int>(read_integer(j, "cpus", where, false, 0));
  const Json& accs = read_array(j, "accelerators", where, true);
  for (std::size_t i = 0; i < accs.size(); ++i)
    inv.accelerators.push_back(
        accelerator_from(accs[i], at(where, fmt::format("accelerators[{}]", i))));
  return inv;
}

Expected<Json> parse_text(std::string_view text) {
  Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Error{"not valid JSON"};
  return doc;
}

}  // namespace

Json to_json(const Accelerator& a) {
  Json parts = Json::array();
  for (const Partition& p : a.partitions)
    parts.push_back({{"id", p.id},
                     {"kind", partition_kind_name(p.kind)},
                     {"profile", p.profile},
                     {"memory_bytes", p.memory_bytes}});
  Json links = Json::array();
  for (const Link& l : a.links)
    links.push_back({{"peer", l.peer},
                     {"kind", link_kind_name(l.kind)},
                     {"bandwidth_GBps", l.bandwidth_gbps},
                     {"latency_us", l.latency_us}});
  Json health = {{"healthy", a.health.healthy}};
  if (!a.health.healthy) health["reason"] = a.health.reason;
  return {{"id", a.id},
          {"index", a.index},
          {"vendor", a.vendor},
          {"backend", a.backend},
          {"model", a.model},
          {"memory_bytes", a.memory_bytes},
          {"memory_bandwidth_GBps", a.memory_bandwidth_gbps},
          {"domain", {{"island", a.domain.island}, {"numa_node", a.domain.numa_node}}},
          {"partitions", parts},
          {"links", links},
          {"health", health}};
}

Json to_json(const NodeInventory& inv) {
  Json accs = Json::array();
  for (const Accelerator& a : inv.accelerators) accs.push_back(to_json(a));
  return {{"node", inv.node}, {"cpus", inv.cpus}, {"accelerators", accs}};
}

Json to_json(std::span<const NodeInventory> nodes) {
  Json out = Json::array();
  for (const NodeInventory& n : nodes) out.push_back(to_json(n));
  return out;
}

Expected<NodeInventory> node_inventory_from_json(const Json& doc) {
  try {
    NodeInventory inv = node_from(doc, "");
    if (const auto problems = validate(inv); !problems.empty()) return Error{problems.front()};
    return inv;
  } catch (const BadField& e) {
    return Error{e.what()};
  }
}

Expected<std::vector<NodeInventory>> cluster_from_json(const Json& doc) {
  if (!doc.is_array()) return Error{"expected a list of node inventories"};
  try {
    std::vector<NodeInventory> nodes;
    for (std::size_t i = 0; i < doc.size(); ++i)
      nodes.push_back(node_from(doc[i], fmt::format("nodes[{}]", i)));
    if (const auto problems = validate_cluster(nodes); !problems.empty())
      return Error{problems.front()};
    return nodes;
  } catch (const BadField& e) {
    return Error{e.what()};
  }
}

Expected<NodeInventory> parse_node_inventory(std::string_view text) {
  auto doc = parse_text(text);
  if (!doc) return doc.error();
  return node_inventory_from_json(doc.value());
}

Expected<std::vector<NodeInventory>> parse_cluster(std::string_view text) {
  auto doc = parse_text(text);
  if (!doc) return doc.error();
  return cluster_from_json(doc.value());
}

}  // namespace gpulab::inventory
