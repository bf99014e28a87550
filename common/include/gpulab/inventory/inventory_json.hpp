// The inventory's JSON form, which node agents send over HTTP:
//
//   {"node": "node0", "cpus": 64, "accelerators": [
//     {"id": "GPU-0", "index": 0, "vendor": "nvidia", "backend": "cuda",
//      "model": "NVIDIA H100 80GB HBM3", "memory_bytes": 85899345920, "memory_bandwidth_GBps":
//      3350, "domain": {"island": "", "numa_node": 0}, "partitions": [{"id": "MIG-0-0", "kind":
//      "mig", "profile": "1g.10gb", "memory_bytes": 10737418240}], "links": [{"peer": "GPU-1",
//      "kind": "nvlink", "bandwidth_GBps": 900, "latency_us": 2}], "health": {"healthy": false,
//      "reason": "Xid 79"}}]}
//
// to_json writes every field; the readers require node, accelerators and each
// accelerator's id, index, vendor, backend, model and memory_bytes, default
// the rest, reject unknown fields (a typo would otherwise be dropped), and
// validate the result. Errors name the field: "accelerators[1].memory_bytes: ...".
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "gpulab/expected.hpp"
#include "gpulab/inventory/node_inventory.hpp"
#include "gpulab/json.hpp"

namespace gpulab::inventory {

Json to_json(const Accelerator& a);
Json to_json(const NodeInventory& inv);
Json to_json(std::span<const NodeInventory> nodes);  // an array

// Reads and validates (validate() / validate_cluster()).
Expected<NodeInventory> node_inventory_from_json(const Json& doc);
Expected<std::vector<NodeInventory>> cluster_from_json(const Json& doc);  // an array of nodes
// Text in (an HTTP body, a file): "not valid JSON" or the reader's error.
Expected<NodeInventory> parse_node_inventory(std::string_view text);
Expected<std::vector<NodeInventory>> parse_cluster(std::string_view text);

}  // namespace gpulab::inventory
