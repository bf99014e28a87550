#include "platform/model.hpp"

#include <fmt/format.h>

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

Json to_json(const Job& j) {
  Json out;
  out["id"] = j.id;
  out["name"] = j.spec.name;
  out["state"] = state_name(j.state);
  out["reason"] = j.reason;
  Json placement = Json::array();
  for (const auto& s : j.placement) placement.push_back(to_json(s));
  out["placement"] = placement;
  out["attempt"] = j.attempt;
  out["restarts"] = j.restarts;
  out["preemptions"] = j.preemptions;
  out["requeued_because"] = j.requeued_because;
  out["idempotency_key"] = j.idempotency_key;
  out["submitted_at"] = j.submitted_at;
  out["started_at"] = j.started_at;
  out["finished_at"] = j.finished_at;
  out["result"] = j.result;
  out["spec"] = to_json(j.spec);
  return out;
}

Json to_json(const Task& t) {
  return Json{{"id", t.id},           {"job", t.job},          {"attempt", t.attempt},
              {"rank", t.rank},       {"world", t.world},      {"node", t.node},
              {"device", t.device},   {"backend", t.backend},  {"state", task_state_name(t.state)},
              {"exit_code", t.exit_code}, {"message", t.message}, {"isolation", t.isolation},
              {"device_nodes", t.device_nodes}};
}

Json to_json(const Device& d) {
  return Json{{"id", d.id},           {"backend", d.backend},
              {"index", d.index},     {"healthy", d.healthy},
              {"health_reason", d.health_reason}, {"dtypes", d.dtypes}};
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

Device device_from_json(const Json& j) {
  if (!j.is_object()) throw SpecError("devices[]", "must be a mapping");
  Device d;
  try {
    d.backend = j.at("backend").get<std::string>();
    d.index = j.at("index").get<int>();
    d.id = j.value("id", fmt::format("{}:{}", d.backend, d.index));
    d.healthy = j.value("healthy", true);
    d.health_reason = j.value("health_reason", std::string());
    d.dtypes = j.value("dtypes", std::vector<std::string>{});
  } catch (const Json::exception& e) {
    throw SpecError("devices[]", fmt::format("needs backend (string) and index (integer): {}", e.what()));
  }
  if (d.backend.empty() || d.index < 0 || d.index > 63) throw SpecError("devices[].index", "must be 0-63");
  return d;
}

}  // namespace platform
