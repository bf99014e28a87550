#include "topology/cluster.hpp"

#include <fmt/core.h>


#include "gpulab/file.hpp"
#include "gpulab/inventory/inventory_json.hpp"
#include "gpulab/json.hpp"
#include "topology/inventory.hpp"
#include "topology/yaml.hpp"

namespace topo {
namespace {

using gpulab::Json;

// Reads a positive number (or integer) field; throws std::invalid_argument naming it.
double positive(const Json& obj, const std::string& key, const std::string& where) {
  if (!obj.contains(key)) throw std::invalid_argument(fmt::format("{}: missing \"{}\"", where, key));
  const Json& v = obj.at(key);
  if (!v.is_number()) throw std::invalid_argument(fmt::format("{}.{}: expected a number", where, key));
  const double d = v.get<double>();
  if (!(d > 0) || !std::isfinite(d)) throw std::invalid_argument(fmt::format("{}.{}: must be > 0, got {}", where, key, d));
  return d;
}

int positive_int(const Json& obj, const std::string& key, int max) {
  const double d = positive(obj, key, "topology");
  if (d != static_cast<double>(static_cast<long long>(d)) || d > max)
    throw std::invalid_argument(fmt::format("topology.{}: must be a whole number from 1 to {}, got {}", key, max, d));
  return static_cast<int>(d);
}

Link read_link(const Json& links, const std::string& key, const std::string& name) {
  if (!links.contains(key)) throw std::invalid_argument(fmt::format("topology.links: missing \"{}\"", key));
  const Json& l = links.at(key);
  const std::string where = "topology.links." + key;
  if (!l.is_object()) throw std::invalid_argument(where + ": expected an object");
  return {name, positive(l, "bandwidth_GBps", where) * 1e9, positive(l, "latency_us", where) * 1e-6};
}

// {"name", "gpudirect_rdma", "inventory": [node inventories]}: the platform's
// own description of its nodes, links and islands.
gpulab::Expected<Cluster> cluster_from_inventory_json(const gpulab::Json& doc) {
  for (const auto& [key, value] : doc.items()) {
    if (key != "name" && key != "inventory" && key != "gpudirect_rdma")
      return gpulab::Error{
          fmt::format("topology: unknown field \"{}\" next to \"inventory\"", key)};
  }
  if (doc.contains("gpudirect_rdma") && !doc["gpudirect_rdma"].is_boolean())
    return gpulab::Error{"topology.gpudirect_rdma: expected true or false"};
  auto nodes = gpulab::inventory::cluster_from_json(doc["inventory"]);
  if (!nodes) return gpulab::Error{"topology.inventory: " + nodes.error().message};
  return cluster_from_inventory(nodes.value(), doc.value("name", std::string("unnamed cluster")),
                                doc.value("gpudirect_rdma", true));
}

}  // namespace

const Link& Cluster::link_between(int gpu_a, int gpu_b) const {
  return island_of(gpu_a) == island_of(gpu_b) ? nvlink : infiniband;
}

Cluster curriculum_cluster() {
  Cluster c;
  c.name = "curriculum: 4 nodes x 8 GPUs, NVLink in node, InfiniBand across";
  return c;
}

gpulab::Expected<Cluster> parse_cluster_json(const std::string& text) {
  const Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  if (doc.is_discarded()) return gpulab::Error{"not valid JSON"};
  return cluster_from_json(doc);
}

gpulab::Expected<Cluster> parse_cluster_yaml(const std::string& text) {
  auto doc = yaml_to_json(text);
  if (!doc) return doc.error();
  return cluster_from_json(doc.value());
}

gpulab::Expected<Cluster> cluster_from_json(const gpulab::Json& doc) {
  if (!doc.is_object()) return gpulab::Error{"expected a JSON object at the top level"};
  if (doc.contains("inventory")) return cluster_from_inventory_json(doc);
  try {
    for (const auto& [key, value] : doc.items()) {
      static const char* known[] = {"name", "nodes", "gpus_per_node", "nodes_per_island", "links",
                                    "hbm_bandwidth_GBps", "gpudirect_rdma"};
      if (std::find_if(std::begin(known), std::end(known), [&](const char* k) { return key == k; }) == std::end(known))
        throw std::invalid_argument(fmt::format("topology: unknown field \"{}\"", key));
    }
    Cluster c;
    c.name = doc.value("name", std::string("unnamed cluster"));
    c.nodes = positive_int(doc, "nodes", 100'000);
    c.gpus_per_node = positive_int(doc, "gpus_per_node", 1'024);
    c.nodes_per_island = doc.contains("nodes_per_island") ? positive_int(doc, "nodes_per_island", c.nodes) : 1;
    if (c.nodes % c.nodes_per_island != 0)
      throw std::invalid_argument(
          fmt::format("topology: nodes ({}) must be a multiple of nodes_per_island ({})", c.nodes, c.nodes_per_island));
    if (!doc.contains("links") || !doc["links"].is_object())
      throw std::invalid_argument("topology: missing \"links\" object");
    const Json& links = doc["links"];
    c.nvlink = read_link(links, "nvlink", "NVLink");
    c.infiniband = read_link(links, "infiniband", "InfiniBand");
    c.pcie = read_link(links, "pcie", "PCIe");
    c.hbm_bandwidth = positive(doc, "hbm_bandwidth_GBps", "topology") * 1e9;
    if (doc.contains("gpudirect_rdma")) {
      if (!doc["gpudirect_rdma"].is_boolean()) throw std::invalid_argument("topology.gpudirect_rdma: expected true or false");
      c.gpudirect_rdma = doc["gpudirect_rdma"].get<bool>();
    }
    return c;
  } catch (const std::exception& e) {
    return gpulab::Error{e.what()};
  }
}

gpulab::Expected<Cluster> load_cluster(const std::string& path) {
  auto text = gpulab::read_text_file(path, kMaxTopologyBytes);
  if (!text) return gpulab::Error{text.error().message};
  const bool yaml = path.ends_with(".yaml") || path.ends_with(".yml");
  auto c = yaml ? parse_cluster_yaml(text.value()) : parse_cluster_json(text.value());
  if (!c) return gpulab::Error{fmt::format("{}: {}", path, c.error().message)};
  return c;
}

}  // namespace topo
