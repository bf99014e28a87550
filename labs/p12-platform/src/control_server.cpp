#include "platform/control_server.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gpulab/prom_text.hpp"
#include "gpulab/version.hpp"
#include "platform/prometheus_targets.hpp"

namespace platform {
namespace {

using gpulab::Json;

template <typename T>
T field(const Json& j, const char* name, const char* path) {
  const auto it = j.find(name);
  if (it == j.end()) throw ApiError(400, fmt::format("{}: is required", path));
  try {
    return it->get<T>();
  } catch (const Json::exception&) {
    throw ApiError(400, fmt::format("{}: has the wrong type", path));
  }
}

int query_int(const httplib::Request& req, const char* name, int fallback, int lo, int hi) {
  if (!req.has_param(name)) return fallback;
  const std::string v = req.get_param_value(name);
  try {
    std::size_t used = 0;
    const long n = std::stol(v, &used);
    if (used != v.size() || n < lo || n > hi) throw std::out_of_range(v);
    return static_cast<int>(n);
  } catch (const std::exception&) {
    throw ApiError(400, fmt::format("{}: must be an integer {}..{}, got '{}'", name, lo, hi, v));
  }
}

Json job_with_tasks(ControlPlane& cp, const Job& job) {
  Json j = to_json(job);
  Json tasks = Json::array();
  for (const auto& t : cp.tasks_of(job.id)) tasks.push_back(to_json(t));
  j["tasks"] = tasks;
  return j;
}

// The devices an agent of `protocol` describes: the shared inventory's
// accelerators (2), or protocol 1's {id, backend, index, healthy, health_reason,
// dtypes}, read as the state database's schema 1 rows are.
std::vector<Device> agent_devices(int protocol, const Json& devices, const std::string& node) {
  try {
    return protocol == 1 ? devices_from_v1_json(devices) : devices_from_json(devices, node);
  } catch (const SpecError& e) {
    throw ApiError(400, e.what());
  }
}

}  // namespace

Json node_to_register_json(const Node& n) {
  Json devices = Json::array();
  for (const auto& d : n.devices) devices.push_back(to_json(d));
  return Json{{"name", n.name}, {"address", n.address}, {"protocol", n.protocol}, {"isolation", n.isolation},
              {"devices", devices}};
}

Node node_from_register_json(const Json& j) {
  if (!j.is_object()) throw ApiError(400, "body: must be an object");
  Node n;
  n.name = field<std::string>(j, "name", "name");
  if (n.name.empty() || n.name.size() > 63) throw ApiError(400, "name: 1-63 characters");
  n.address = field<std::string>(j, "address", "address");
  n.protocol = field<int>(j, "protocol", "protocol");
  n.isolation = j.value("isolation", std::string("process"));
  const auto devices = field<Json>(j, "devices", "devices");
  if (!devices.is_array() || devices.size() > 64) throw ApiError(400, "devices: a list of at most 64 devices");
  // A protocol outside the window would not parse; register_node() refuses the
  // agent with the versions, which says more than a device field would.
  if (n.protocol < kOldestAgentProtocol || n.protocol > kProtocolVersion) return n;
  n.devices = agent_devices(n.protocol, devices, n.name);
  return n;
}

Json report_to_json(const TaskReport& r) {
  return Json{{"id", r.id},           {"state", task_state_name(r.state)}, {"exit_code", r.exit_code},
              {"message", r.message}, {"result", r.result},                {"log", r.log},
              {"isolation", r.isolation}, {"device_nodes", r.device_nodes}, {"endpoint", r.endpoint}};
}

TaskReport report_from_json(const Json& j) {
  TaskReport r;
  r.id = field<std::string>(j, "id", "tasks[].id");
  const auto st = parse_task_state(field<std::string>(j, "state", "tasks[].state"));
  if (!st) throw ApiError(400, "tasks[].state: unknown state");
  r.state = *st;
  r.exit_code = j.value("exit_code", -1);
  r.message = j.value("message", std::string());
  r.result = j.value("result", Json());
  r.log = j.value("log", std::string());
  r.isolation = j.value("isolation", std::string());
  r.endpoint = j.value("endpoint", std::string());
  if (!r.endpoint.empty() && !r.endpoint.starts_with("http://")) {
    throw ApiError(400, "tasks[].endpoint: expected http://HOST:PORT");
  }
  if (j.contains("device_nodes")) {
    const auto& d = j.at("device_nodes");
    if (!d.is_array() || d.size() > 64 || !std::all_of(d.begin(), d.end(), [](const Json& p) { return p.is_string(); })) {
      throw ApiError(400, "tasks[].device_nodes: expected a list of at most 64 paths");
    }
    r.device_nodes = d.get<std::vector<std::string>>();
  }
  return r;
}

Json heartbeat_to_json(const Heartbeat& hb) {
  Json devices = Json::array();
  for (const auto& d : hb.devices) devices.push_back(to_json(d));
  Json tasks = Json::array();
  for (const auto& t : hb.tasks) tasks.push_back(report_to_json(t));
  return Json{{"devices", devices}, {"tasks", tasks}};
}

Heartbeat heartbeat_from_json(const std::string& node, const Json& j, int protocol) {
  if (!j.is_object()) throw ApiError(400, "body: must be an object");
  Heartbeat hb;
  hb.node = node;
  const Json devices = j.value("devices", Json::array());
  const Json tasks = j.value("tasks", Json::array());
  hb.devices = agent_devices(protocol, devices, node);
  for (const auto& t : tasks) hb.tasks.push_back(report_from_json(t));
  return hb;
}

Json assignment_to_json(const Assignment& a) {
  Json j = to_json(a.task);
  j["program"] = a.program;
  j["argv"] = a.argv;
  return j;
}

Assignment assignment_from_json(const Json& j) {
  Assignment a;
  a.task.id = j.at("id").get<std::string>();
  a.task.job = j.at("job").get<std::string>();
  a.task.attempt = j.at("attempt").get<int>();
  a.task.rank = j.at("rank").get<int>();
  a.task.world = j.at("world").get<int>();
  a.task.node = j.at("node").get<std::string>();
  a.task.device = j.at("device").get<std::string>();
  a.task.backend = j.at("backend").get<std::string>();
  a.task.state = parse_task_state(j.at("state").get<std::string>()).value_or(TaskState::kAssigned);
  a.program = j.value("program", std::string(kTaskProgram));  // absent from control planes before serve jobs
  a.argv = j.at("argv").get<std::vector<std::string>>();
  return a;
}

void add_control_routes(HttpService& http, ControlPlane& cp) {
  http.Get("/healthz", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok\n", "text/plain"); });
  http.Get("/v1/version", [](const httplib::Request&, httplib::Response& res) {
    reply_json(res, 200, Json{{"version", gpulab::version()}, {"protocol", kProtocolVersion}});
  });

  // Jobs.
  http.Post("/v1/jobs", [&cp](const httplib::Request& req, httplib::Response& res) {
    Json doc;
    try {
      doc = parse_spec_text(req.body);
    } catch (const SpecError& e) {
      throw ApiError(400, e.what());
    }
    std::string key = req.get_header_value("Idempotency-Key");
    const auto [job, created] = cp.submit(doc, key);
    reply_json(res, created ? 201 : 200, to_json(job));
  });
  http.Get("/v1/jobs", [&cp](const httplib::Request&, httplib::Response& res) {
    Json list = Json::array();
    for (const auto& j : cp.list_jobs()) list.push_back(to_json(j));
    reply_json(res, 200, list);
  });
  http.Get(R"(/v1/jobs/([^/]+))", [&cp](const httplib::Request& req, httplib::Response& res) {
    reply_json(res, 200, job_with_tasks(cp, cp.get_job(req.matches[1])));
  });
  http.Post(R"(/v1/jobs/([^/]+)/cancel)", [&cp](const httplib::Request& req, httplib::Response& res) {
    reply_json(res, 200, to_json(cp.cancel(req.matches[1])));
  });
  http.Get(R"(/v1/jobs/([^/]+)/logs)", [&cp](const httplib::Request& req, httplib::Response& res) {
    res.set_content(cp.logs(req.matches[1]), "text/plain; charset=utf-8");
  });
  http.Post(R"(/v1/jobs/([^/]+)/rendezvous)", [&cp](const httplib::Request& req, httplib::Response& res) {
    const Json j = body_json(req);
    if (!j.is_object()) throw ApiError(400, "body: must be an object");
    cp.rendezvous_publish(req.matches[1], field<int>(j, "attempt", "attempt"), field<int>(j, "rank", "rank"),
                          field<int>(j, "world", "world"), field<std::string>(j, "address", "address"),
                          field<int>(j, "port", "port"));
    reply_json(res, 200, Json{{"ok", true}});
  });
  http.Get(R"(/v1/jobs/([^/]+)/rendezvous)", [&cp](const httplib::Request& req, httplib::Response& res) {
    reply_json(res, 200, cp.rendezvous_get(req.matches[1], query_int(req, "attempt", 1, 1, 1'000'000)));
  });

  // Nodes.
  http.Get("/v1/nodes", [&cp](const httplib::Request&, httplib::Response& res) {
    Json list = Json::array();
    const double now = cp.now();
    for (const auto& n : cp.list_nodes()) list.push_back(to_json(n, now));
    reply_json(res, 200, list);
  });
  http.Post(R"(/v1/nodes/([^/]+)/drain)", [&cp](const httplib::Request& req, httplib::Response& res) {
    reply_json(res, 200, to_json(cp.drain(req.matches[1]), cp.now()));
  });
  http.Post("/v1/nodes/register", [&cp](const httplib::Request& req, httplib::Response& res) {
    cp.register_node(node_from_register_json(body_json(req)));
    reply_json(res, 200, Json{{"protocol", kProtocolVersion}});
  });
  http.Post(R"(/v1/nodes/([^/]+)/heartbeat)", [&cp](const httplib::Request& req, httplib::Response& res) {
    const std::string node = req.matches[1];
    const auto hb = heartbeat_from_json(node, body_json(req), cp.node_protocol(node));
    const int wait_ms = query_int(req, "wait_ms", 0, 0, 30'000);
    Json tasks = Json::array();
    for (const auto& a : cp.heartbeat(hb, std::chrono::milliseconds(wait_ms))) tasks.push_back(assignment_to_json(a));
    reply_json(res, 200, Json{{"tasks", tasks}});
  });
  http.Post(R"(/v1/tasks/([^/]+)/status)", [&cp](const httplib::Request& req, httplib::Response& res) {
    const Json j = body_json(req);
    if (!j.is_object()) throw ApiError(400, "body: must be an object");
    TaskReport r = report_from_json(j);
    if (r.id != req.matches[1]) throw ApiError(400, "id: does not match the path");
    cp.report_task(field<std::string>(j, "node", "node"), r);
    reply_json(res, 200, Json{{"ok", true}});
  });

  http.Get("/v1/licence", [&cp](const httplib::Request&, httplib::Response& res) {
    const auto l = cp.licence();
    reply_json(res, 200,
               Json{{"state", l.state},
                    {"message", l.message},
                    {"customer", l.customer},
                    {"max_devices", l.max_devices},
                    {"days_left", l.days_left},
                    {"admits_new_jobs", l.admits_new_jobs},
                    {"features", l.features}});
  });
  http.Get("/metrics", [&cp](const httplib::Request&, httplib::Response& res) {
    res.set_content(cp.metrics(), std::string(gpulab::prom::kContentType));
  });
  http.Get("/v1/targets", [&cp](const httplib::Request&, httplib::Response& res) {
    reply_json(res, 200, prometheus_targets(cp.list_nodes(), cp.list_jobs()));
  });
  http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (res.status == 404 && res.body.empty()) reply_error(res, 404, fmt::format("no route {} {}", req.method, req.path));
    if (res.status == 413) reply_error(res, 413, "body: larger than the server accepts");
  });
}

}  // namespace platform
