#include "platform/model.hpp"

#include <fmt/format.h>

#include "gpulab/inventory/inventory_json.hpp"
#include "platform/inventory.hpp"

namespace platform {

using gpulab::Json;

std::string_view state_name(JobState s) {
  switch (s) {
    case JobState::kPending: return "pending";
    case JobState::kRunning: return "running";
    case JobState::kSucceeded: return "succeeded";
    case JobState::kFailed: return "failed";
    case JobState::kCancelled: return "cancelled";
  }
  return "?";
}

std::optional<JobState> parse_state(std::string_view s) {
  for (auto st : {JobState::kPending, JobState::kRunning, JobState::kSucceeded, JobState::kFailed,
                  JobState::kCancelled}) {
    if (state_name(st) == s) return st;
  }
  return std::nullopt;
}

std::string_view task_state_name(TaskState s) {
  switch (s) {
    case TaskState::kAssigned: return "assigned";
    case TaskState::kRunning: return "running";
    case TaskState::kSucceeded: return "succeeded";
    case TaskState::kFailed: return "failed";
    case TaskState::kCancelled: return "cancelled";
    case TaskState::kLost: return "lost";
  }
  return "?";
}

std::optional<TaskState> parse_task_state(std::string_view s) {
  for (auto st : {TaskState::kAssigned, TaskState::kRunning, TaskState::kSucceeded, TaskState::kFailed,
                  TaskState::kCancelled, TaskState::kLost}) {
    if (task_state_name(st) == s) return st;
  }
  return std::nullopt;
}

std::string_view node_state_name(NodeState s) {
  switch (s) {
    case NodeState::kReady: return "ready";
    case NodeState::kDraining: return "draining";
    case NodeState::kLost: return "lost";
  }
  return "?";
}

Json to_json(const Slot& s) {
  return Json{{"rank", s.rank}, {"node", s.node}, {"device", s.device}, {"backend", s.backend}};
}

Json to_json(const TopologyEstimate& t) {
  if (t.ranks == 0) return Json::object();
  return Json{{"ranks", t.ranks},       {"bytes", t.bytes},
              {"allreduce_s", t.allreduce_s}, {"bottleneck", t.bottleneck},
              {"nodes", t.nodes},       {"islands", t.islands},
              {"considered", t.considered}, {"next_best_s", t.next_best_s},
              {"reason", t.reason}};
}

TopologyEstimate topology_from_json(const Json& j) {
  TopologyEstimate t;
  if (!j.is_object() || j.empty()) return t;
  t.ranks = j.at("ranks").get<int>();
  t.bytes = j.at("bytes").get<double>();
  t.allreduce_s = j.at("allreduce_s").get<double>();
  t.bottleneck = j.at("bottleneck").get<std::string>();
  t.nodes = j.at("nodes").get<int>();
  t.islands = j.at("islands").get<int>();
  t.considered = j.at("considered").get<int>();
  t.next_best_s = j.at("next_best_s").get<double>();
  t.reason = j.at("reason").get<std::string>();
  return t;
}

Json to_json(const Job& j) {
  Json out;
  out["id"] = j.id;
  out["name"] = j.spec.name;
  out["state"] = state_name(j.state);
  out["reason"] = j.reason;
  Json placement = Json::array();
  for (const auto& s : j.placement) placement.push_back(to_json(s));
  out["placement"] = placement;
  out["topology"] = to_json(j.topology);
  out["attempt"] = j.attempt;
  out["restarts"] = j.restarts;
  out["preemptions"] = j.preemptions;
  out["requeued_because"] = j.requeued_because;
  out["idempotency_key"] = j.idempotency_key;
  out["submitted_at"] = j.submitted_at;
  out["started_at"] = j.started_at;
  out["finished_at"] = j.finished_at;
  out["result"] = j.result;
  out["endpoint"] = j.endpoint;
  out["spec"] = to_json(j.spec);
  return out;
}

Json to_json(const Task& t) {
  return Json{{"id", t.id},           {"job", t.job},          {"attempt", t.attempt},
              {"rank", t.rank},       {"world", t.world},      {"node", t.node},
              {"device", t.device},   {"backend", t.backend},  {"state", task_state_name(t.state)},
              {"exit_code", t.exit_code}, {"message", t.message}, {"isolation", t.isolation},
              {"device_nodes", t.device_nodes}, {"endpoint", t.endpoint}};
}

Json to_json(const Device& d) {
  Json j = gpulab::inventory::to_json(static_cast<const gpulab::inventory::Accelerator&>(d));
  j["dtypes"] = d.dtypes;
  j["healthy"] = d.health.healthy;
  j["health_reason"] = d.health.reason;
  return j;
}

Json to_json(const Node& n, double now) {
  Json devices = Json::array();
  for (const auto& d : n.devices) devices.push_back(to_json(d));
  return Json{{"name", n.name},
              {"address", n.address},
              {"state", node_state_name(n.state)},
              {"draining", n.draining},
              {"heartbeat_age_s", n.last_heartbeat > 0 ? now - n.last_heartbeat : -1.0},
              {"protocol", n.protocol},
              {"isolation", n.isolation},
              {"devices", devices}};
}

std::vector<Device> devices_from_json(const Json& devices, const std::string& node) {
  if (!devices.is_array()) throw SpecError("devices", "must be a list");
  // The platform's fields come off; the rest is the inventory's accelerator,
  // read and validated by the inventory's own reader as one node.
  Json accelerators = Json::array();
  std::vector<std::vector<std::string>> dtypes;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const std::string at = fmt::format("devices[{}]", i);
    if (!devices[i].is_object()) throw SpecError(at, "must be an object");
    Json a = devices[i];
    std::vector<std::string> certified;
    if (const auto it = a.find("dtypes"); it != a.end()) {
      if (!it->is_array()) throw SpecError(at + ".dtypes", "must be a list of strings");
      for (const auto& t : *it) {
        if (!t.is_string()) throw SpecError(at + ".dtypes", "must be a list of strings");
        certified.push_back(t.get<std::string>());
      }
    }
    a.erase("dtypes");
    a.erase("healthy");  // protocol 1's spelling of "health", derived on output
    a.erase("health_reason");
    accelerators.push_back(std::move(a));
    dtypes.push_back(std::move(certified));
  }
  auto inv = gpulab::inventory::node_inventory_from_json(Json{{"node", node}, {"accelerators", accelerators}});
  if (!inv) {
    std::string msg = inv.error().message;
    if (msg.starts_with("accelerators[")) msg = "devices[" + msg.substr(13);
    if (msg.starts_with("node: ")) msg = "name: " + msg.substr(6);  // the inventory's node is the node's name
    const auto colon = msg.find(": ");
    throw SpecError(msg.substr(0, colon), colon == std::string::npos ? "invalid" : msg.substr(colon + 2));
  }
  std::vector<Device> out;
  for (std::size_t i = 0; i < inv.value().accelerators.size(); ++i) {
    Device d;
    static_cast<gpulab::inventory::Accelerator&>(d) = inv.value().accelerators[i];
    d.dtypes = std::move(dtypes[i]);
    out.push_back(std::move(d));
  }
  return out;
}

Device device_from_v1_json(const Json& j, int ordinal) {
  if (!j.is_object()) throw SpecError("devices[]", "must be a mapping");
  try {
    const auto backend = j.at("backend").get<std::string>();
    const int index = j.at("index").get<int>();
    Device d = hal_device(backend, index, ordinal);
    d.id = j.value("id", d.id);
    if (!j.value("healthy", true)) d.health = gpulab::inventory::Health::unhealthy(j.value("health_reason", std::string("unhealthy")));
    d.dtypes = j.value("dtypes", std::vector<std::string>{});
    return d;
  } catch (const Json::exception& e) {
    throw SpecError("devices[]", fmt::format("needs backend (string) and index (integer): {}", e.what()));
  }
}

std::vector<Device> devices_from_v1_json(const Json& devices) {
  if (!devices.is_array()) throw SpecError("devices", "must be a list");
  std::vector<Device> out;
  int ordinal = 0;
  for (const auto& d : devices) out.push_back(device_from_v1_json(d, ordinal++));
  link_devices(out);
  return out;
}

}  // namespace platform
