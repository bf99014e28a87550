// A node agent: registers its devices with the control plane, heartbeats
// (a long poll that also brings new work), runs each assigned task as a child
// process (gpulab-task), reports every exit with its log, and watches device
// health. Faults are the exporter's fault signals: Xid 79 (fell off the bus)
// and Xid 48 (double-bit ECC) make a device unhealthy; its tasks are stopped
// and the control plane places the job elsewhere.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "exporter/simulated_source.hpp"
#include "platform/control_plane.hpp"
#include "platform/http_service.hpp"
#include "platform/mfu.hpp"
#include "platform/serve_health.hpp"
#include "platform/task_process.hpp"

namespace platform {

struct AgentOptions {
  std::string control_url = "http://127.0.0.1:7070";
  std::string name;
  std::string devices = "auto";
  std::string listen = "127.0.0.1:0";  // the agent's own /metrics, logs and faults
  std::filesystem::path work_dir;      // task logs; default $TMPDIR/gpulab-agent-<name>
  std::filesystem::path task_program;  // default: gpulab-task beside this executable
  std::filesystem::path serve_program;  // serve tasks; default: gpulab-serve beside this executable
  ServeHealthPolicy serve_health;       // when a serve task counts as started, and as dead
  std::filesystem::path shim_program;  // default: gpulab-shim beside this executable
  std::string isolation = "auto";      // auto | container | process (task_container.hpp)
  std::vector<std::string> device_nodes;  // "DEVICE=PATH": host nodes passed into DEVICE's tasks
  std::string inject;                  // exporter syntax: "xid:79:0@5s" (device ordinal, time from start)
  std::chrono::milliseconds heartbeat_interval{1000};
  bool certify = true;  // run conformance on the backends at start
  // Time each backend's best F32 matmul at start: the peak the MFU gauge
  // divides by (mfu.hpp). Off: no MFU gauge.
  bool measure_peak = true;
  // Where the node's inventory (inventory.hpp's node_inventory, the shared JSON
  // form) is written at start and again whenever a device's health changes:
  // what P06's gpu-device-plugin --inventory advertises to the kubelet.
  std::filesystem::path inventory_out;
};

// Xid codes the platform treats as "device unusable until replaced".
bool xid_is_fatal(unsigned xid);
std::string xid_reason(unsigned xid);

class Agent {
 public:
  explicit Agent(AgentOptions options);
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Binds the agent's HTTP server; returns its URL.
  std::string bind();
  // Runs until stop(): registers, heartbeats, runs tasks. Returns the exit code.
  int run();
  void stop();

  [[nodiscard]] const std::vector<Device>& devices() const { return devices_; }
  [[nodiscard]] const std::vector<std::string>& certification_lines() const { return cert_lines_; }
  // Backend -> its peak FLOP/s as measured at start (empty with measure_peak off).
  [[nodiscard]] const std::map<std::string, PeakFlops>& peaks() const { return peaks_; }
  // Injects a fault now ("xid:79:1"); throws gpulab::UsageError for bad syntax.
  void inject_now(std::string_view spec);
  [[nodiscard]] std::string metrics() const;
  // "container" or "process", and the one line saying why (and what a start-up
  // sweep removed), for the daemon's log.
  [[nodiscard]] const std::string& isolation() const { return isolation_; }
  [[nodiscard]] const std::vector<std::string>& isolation_notes() const { return isolation_notes_; }

 private:
  struct Running {
    Task task;
    std::unique_ptr<TaskProcess> process;
    std::filesystem::path log;
    // A serve task: the URL its server listens on (a port this agent chose),
    // and its health; the URL is reported as the endpoint once healthy.
    std::string url;
    std::unique_ptr<ServeHealth> health;
    // A train task's last pace line seen in its log (kept when a later read misses one).
    mutable std::optional<Pace> pace;
  };
  bool register_once();
  void heartbeat_once();
  void watch_loop();
  void health_loop();  // probes serve tasks' GET /health off the lock
  void update_health_locked();
  void start_task_locked(const Assignment& a);
  TaskReport finish_locked(Running& r, const ChildExit& e, const std::string& why);
  void choose_isolation();
  std::optional<std::string> probe_container();
  std::unique_ptr<TaskProcess> launch(const Assignment& a, const std::filesystem::path& program,
                                      const std::vector<std::string>& argv,
                                      const std::map<std::string, std::string>& env, const std::filesystem::path& log);
  void sweep_cgroups(const char* why);
  // The host nodes a task's container gets (none for a process, or a CPU backend).
  std::vector<std::string> container_device_nodes(const Task& t) const;
  void send_status(const TaskReport& r);
  // Writes options_.inventory_out when the devices' health changed since the
  // last write. Throws gpulab::RunError naming the file when it cannot (once
  // per change: a retry that fails again returns quietly).
  void write_inventory();

  AgentOptions options_;
  std::vector<Device> devices_;
  std::vector<std::string> cert_lines_;
  std::map<std::string, PeakFlops> peaks_;
  std::string url_;
  std::string isolation_ = "process";
  std::vector<std::string> isolation_notes_;
  std::map<std::string, std::vector<std::string>> device_nodes_;  // device id -> host nodes (--device-node)
  HttpService http_;
  std::unique_ptr<std::thread> http_thread_;
  std::unique_ptr<std::thread> watch_thread_;
  std::unique_ptr<std::thread> health_thread_;
  mutable std::mutex mu_;
  std::map<std::string, Running> running_;
  std::map<std::string, TaskReport> finished_;  // reported, waiting for the control plane to drop them
  std::vector<exporter::Injection> injections_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::atomic<bool> stopping_{false};
  bool registered_ = false;
  std::atomic<std::uint64_t> heartbeat_failures_{0};  // the run thread counts, /metrics reads
  std::uint64_t tasks_started_ = 0;
  std::uint64_t tasks_stopped_unhealthy_ = 0;
  std::uint64_t health_changes_ = 0;  // under mu_
  // health_changes_ at the last write of --inventory-out, and at the last
  // failed one (watch thread; the constructor before it starts).
  std::uint64_t inventory_written_ = ~std::uint64_t{0};
  std::uint64_t inventory_failed_ = ~std::uint64_t{0};
};

}  // namespace platform
