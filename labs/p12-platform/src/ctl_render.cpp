#include "platform/ctl_render.hpp"

#include <fmt/format.h>

#include <map>

#include "gpulab/table.hpp"
#include "platform/ring_cost.hpp"

namespace platform {

using gpulab::Json;
using gpulab::Table;

std::string render_nodes(const Json& nodes) {
  Table t;
  t.column("NODE", Table::Align::kLeft)
      .column("STATE", Table::Align::kLeft)
      .column("DEVICES", Table::Align::kLeft)
      .column("UNHEALTHY", Table::Align::kLeft)
      .column("HEARTBEAT", Table::Align::kRight);
  for (const auto& n : nodes) {
    std::map<std::string, int> per_backend;
    std::string unhealthy;
    for (const auto& d : n.at("devices")) {
      ++per_backend[d.at("backend").get<std::string>()];
      const auto& health = d.at("health");
      if (!health.at("healthy").get<bool>()) {
        unhealthy += (unhealthy.empty() ? "" : ", ") + d.at("id").get<std::string>() + " (" +
                     health.value("reason", std::string()) + ")";
      }
      if (d.at("dtypes").empty()) {
        unhealthy += (unhealthy.empty() ? "" : ", ") + d.at("id").get<std::string>() + " (not certified)";
      }
    }
    std::string devices;
    for (const auto& [b, k] : per_backend) devices += fmt::format("{}{}:{}", devices.empty() ? "" : ",", b, k);
    const double age = n.at("heartbeat_age_s").get<double>();
    t.row({n.at("name").get<std::string>(), n.at("state").get<std::string>(), devices,
           unhealthy.empty() ? "-" : unhealthy, age < 0 ? "-" : fmt::format("{:.1f}s ago", age)});
  }
  return t.render();
}

std::string render_jobs(const Json& jobs) {
  Table t;
  t.column("JOB", Table::Align::kLeft)
      .column("NAME", Table::Align::kLeft)
      .column("KIND", Table::Align::kLeft)
      .column("GPUS")
      .column("TENANT", Table::Align::kLeft)
      .column("STATE", Table::Align::kLeft)
      .column("REASON", Table::Align::kLeft);
  for (const auto& j : jobs) {
    const auto& spec = j.at("spec");
    t.row({j.at("id").get<std::string>(), j.at("name").get<std::string>(), spec.at("kind").get<std::string>(),
           fmt::format("{}", spec.at("gpus").get<int>()), spec.at("tenant").get<std::string>(),
           j.at("state").get<std::string>(), j.at("reason").get<std::string>()});
  }
  return t.render();
}

std::string render_job(const Json& j) {
  const auto& spec = j.at("spec");
  std::string out;
  out += fmt::format("job       {} ({})\n", j.at("id").get<std::string>(), j.at("name").get<std::string>());
  out += fmt::format("kind      {}, {} device(s), backend {}, tenant {}, priority {}\n",
                     spec.at("kind").get<std::string>(), spec.at("gpus").get<int>(),
                     spec.at("backend").get<std::string>(), spec.at("tenant").get<std::string>(),
                     spec.at("priority").get<int>());
  out += fmt::format("state     {}: {}\n", j.at("state").get<std::string>(), j.at("reason").get<std::string>());
  out += fmt::format("attempt   {} ({} restarts)\n", j.at("attempt").get<int>(), j.at("restarts").get<int>());
  std::string placement;
  for (const auto& s : j.at("placement")) {
    placement += fmt::format("{}rank {} → {} {}", placement.empty() ? "" : ", ", s.at("rank").get<int>(),
                             s.at("node").get<std::string>(), s.at("device").get<std::string>());
  }
  if (placement.empty() && spec.value("executor", std::string()) == "slurm") placement = "by Slurm (executor: slurm)";
  out += fmt::format("placement {}\n", placement.empty() ? "-" : placement);
  if (const auto e = j.find("endpoint"); e != j.end() && e->is_string() && !e->get<std::string>().empty()) {
    out += fmt::format("endpoint  {} (POST /v1/completions, GET /metrics)\n", e->get<std::string>());
  }
  if (const auto t = j.find("topology"); t != j.end() && t->is_object() && !t->empty()) {
    out += fmt::format("topology  ring all-reduce of {} bytes: est. {} over {}; {}\n",
                       static_cast<std::uint64_t>(t->at("bytes").get<double>()),
                       format_seconds(t->at("allreduce_s").get<double>()), t->at("bottleneck").get<std::string>(),
                       t->at("reason").get<std::string>());
  }
  if (j.contains("result") && j.at("result").is_object() && !j.at("result").empty()) {
    out += fmt::format("result    {}\n", j.at("result").dump());
  }
  if (j.contains("tasks") && !j.at("tasks").empty()) {
    Table t;
    t.column("TASK", Table::Align::kLeft)
        .column("NODE", Table::Align::kLeft)
        .column("DEVICE", Table::Align::kLeft)
        .column("STATE", Table::Align::kLeft)
        .column("EXIT")
        .column("RUNS IN", Table::Align::kLeft)
        .column("MESSAGE", Table::Align::kLeft);
    for (const auto& task : j.at("tasks")) {
      const int code = task.at("exit_code").get<int>();
      const std::string iso = task.at("isolation").get<std::string>();
      t.row({task.at("id").get<std::string>(), task.at("node").get<std::string>(), task.at("device").get<std::string>(),
             task.at("state").get<std::string>(), code < 0 ? "-" : fmt::format("{}", code), iso.empty() ? "-" : iso,
             task.at("message").get<std::string>()});
    }
    out += "\n" + t.render();
  }
  return out;
}

std::string render_top(const Json& jobs, const Json& nodes, const Json& licence) {
  std::map<std::string, int> states{{"pending", 0}, {"running", 0}, {"succeeded", 0}, {"failed", 0}, {"cancelled", 0}};
  for (const auto& j : jobs) ++states[j.at("state").get<std::string>()];
  int total = 0;
  int healthy = 0;
  int ready_nodes = 0;
  for (const auto& n : nodes) {
    ready_nodes += n.at("state").get<std::string>() == "lost" ? 0 : 1;
    for (const auto& d : n.at("devices")) {
      ++total;
      healthy += d.at("health").at("healthy").get<bool>() && n.at("state").get<std::string>() != "lost" ? 1 : 0;
    }
  }
  int busy = 0;
  for (const auto& j : jobs) {
    if (j.at("state").get<std::string>() == "running") busy += static_cast<int>(j.at("placement").size());
  }
  std::string out;
  out += fmt::format("jobs      {} pending, {} running, {} succeeded, {} failed, {} cancelled\n", states["pending"],
                     states["running"], states["succeeded"], states["failed"], states["cancelled"]);
  out += fmt::format("nodes     {} of {} up\n", ready_nodes, nodes.size());
  out += fmt::format("devices   {} allocated, {} idle, {} unavailable (of {})\n", busy, std::max(0, healthy - busy),
                     total - healthy, total);
  const auto days = licence.at("days_left").get<std::int64_t>();
  out += fmt::format("licence   {}, at most {} devices in use{}\n", licence.at("state").get<std::string>(),
                     licence.at("max_devices").get<int>(), days >= 0 ? fmt::format(", {} days left", days) : "");
  return out;
}

}  // namespace platform
