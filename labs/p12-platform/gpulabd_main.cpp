// gpulabd: the platform's daemons. `control` is the control plane (API,
// scheduler, SQLite state), `agent` a node agent, `demo` a control plane and
// two agents on loopback running a scripted day with every step checked.
#include <CLI/CLI.hpp>

#include "gpulab/cli.hpp"
#include "platform/daemons.hpp"
#include "platform/demo.hpp"

int main(int argc, char** argv) {
  CLI::App app{"gpulabd: the gpulab platform's control plane and node agents.\n"
               "Jobs placed on HAL devices, gated by a licence, observed by Prometheus."};
  app.require_subcommand(1);

  platform::ControlDaemonOptions control;
  std::string license;
  std::string public_key;
  bool fsync = false;
  int node_timeout_ms = 5000;
  auto* c = app.add_subcommand("control", "Run the control plane.");
  c->add_option("--state", control.control.state_dir, "State directory (SQLite database, logs, checkpoints)")->required();
  c->add_option("--listen", control.listen, "HOST:PORT to serve the API on (port 0: any)")->capture_default_str();
  c->add_option("--license", license, "Licence file (without: the community edition)");
  c->add_option("--public-key", public_key, "Vendor public key that signed the licence");
  c->add_option("--ready-file", control.ready_file, "Write the API URL here once serving");
  c->add_option("--public-url", control.control.public_url, "URL tasks use to reach the API (default: the listen address)");
  c->add_flag("--fsync", fsync, "fsync every commit (survives power loss; default survives a process crash)");
  c->add_option("--node-timeout-ms", node_timeout_ms, "A node is lost after this long without a heartbeat")
      ->check(CLI::Range(200, 600000))
      ->capture_default_str();
  std::string queue = "fifo";
  bool no_preempt = false;
  c->add_option("--queue", queue, "Queue order among equal priorities: fifo, or drf (dominant resource fairness across tenants)")
      ->check(CLI::IsMember({"fifo", "drf"}))
      ->capture_default_str();
  c->add_flag("--no-preempt", no_preempt, "Never evict a running job for a higher-priority one");
  c->add_option("--slurm-task-program", control.control.slurm.task_program,
                "gpulab-task as Slurm's compute nodes see it, for jobs with executor: slurm "
                "(default: gpulab-task beside gpulabd)");

  platform::AgentDaemonOptions agent;
  int heartbeat_ms = 1000;
  bool no_certify = false;
  bool no_peak = false;
  auto* a = app.add_subcommand("agent", "Run a node agent.");
  a->add_option("--control", agent.agent.control_url, "Control plane URL")->capture_default_str();
  a->add_option("--name", agent.agent.name, "Node name")->required();
  a->add_option("--devices", agent.agent.devices, "auto, or BACKEND:COUNT[@ISLAND],... (cpu_ref:2,fast:1; fast:2@rack-1 puts both in NVLink island rack-1, shared with other nodes that name it; default: the node is the island)")->capture_default_str();
  a->add_option("--listen", agent.agent.listen, "HOST:PORT for the agent's metrics, logs and faults")->capture_default_str();
  a->add_option("--work", agent.agent.work_dir, "Directory for task logs");
  a->add_option("--inject", agent.agent.inject, "Faults, exporter syntax: xid:79:DEVICE@TIME (e.g. xid:79:0@5s)");
  a->add_option("--heartbeat-ms", heartbeat_ms, "Heartbeat interval")->check(CLI::Range(50, 60000))->capture_default_str();
  a->add_flag("--no-certify", no_certify, "Offer every backend without a conformance run (tests)");
  a->add_flag("--no-peak", no_peak,
              "Do not time each backend's best matmul at start (then /metrics has no MFU gauge)");
  a->add_option("--isolation", agent.agent.isolation,
                "Run tasks in mininer containers (needs root, namespaces, a cgroup for device rules), as plain "
                "processes, or auto: containers where possible")
      ->check(CLI::IsMember({"auto", "container", "process"}))
      ->capture_default_str();
  a->add_option("--device-node", agent.agent.device_nodes,
                "DEVICE=PATH: a host device node of DEVICE, passed into its tasks' containers and allowed by "
                "their device cgroup (repeatable; cuda devices get /dev/nvidia* without it)");
  a->add_option("--task-program", agent.agent.task_program, "The workload program (default: gpulab-task beside gpulabd)");
  a->add_option("--serve-program", agent.agent.serve_program,
                "The server serve jobs run (default: gpulab-serve beside gpulabd)");
  a->add_option("--ready-file", agent.ready_file, "Write the agent's URL here once registered-able");
  a->add_option("--inventory-out", agent.agent.inventory_out,
                "Write the node's inventory (the shared JSON form) here at start and on every "
                "device health change, "
                "for gpu-device-plugin --inventory");

  platform::DemoOptions demo;
  auto* d = app.add_subcommand("demo", "A control plane and two agents on loopback: a scripted day, every step checked.");
  d->add_flag("--quick", demo.quick, "Fewer training steps and backends (tests)");
  d->add_option("--keep", demo.keep_dir, "Keep the state directory here instead of a temporary one");

  return gpulab::run_program("gpulabd", app, argc, argv, [&] {
    if (c->parsed()) {
      control.control.licence.license_file = license;
      control.control.licence.public_key_file = public_key;
      if (!license.empty() && public_key.empty()) throw gpulab::UsageError("--license needs --public-key");
      control.control.durability = fsync ? platform::Durability::kFsync : platform::Durability::kProcessCrash;
      control.control.node_timeout = std::chrono::milliseconds(node_timeout_ms);
      control.control.queue_order = queue == "drf" ? cluster_sim::QueueOrder::kDrf : cluster_sim::QueueOrder::kFifo;
      control.control.preempt = !no_preempt;
      return platform::run_control_daemon(control);
    }
    if (a->parsed()) {
      agent.agent.heartbeat_interval = std::chrono::milliseconds(heartbeat_ms);
      agent.agent.certify = !no_certify;
      agent.agent.measure_peak = !no_peak;
      return platform::run_agent_daemon(agent);
    }
    return platform::run_demo(demo);
  });
}
