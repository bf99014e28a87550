#include "platform/agent.hpp"

#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>
#include <thread>

#include "gpulab/errors.hpp"
#include "gpulab/inventory/device_access.hpp"
#include "gpulab/inventory/inventory_json.hpp"
#include "gpulab/output_file.hpp"
#include "gpulab/prom_text.hpp"
#include "mininer/cgroup.hpp"
#include "platform/control_server.hpp"
#include "platform/inventory.hpp"
#include "platform/task_container.hpp"

namespace platform {
namespace {

using gpulab::Json;

// Logs sent with a finished task's report (the tail).
constexpr std::size_t kLogTailBytes = 1 << 20;
// How much of a running task's log a scrape reads for its last pace line
// (one a second; rank 0's step lines come between).
constexpr std::size_t kPaceTailBytes = 256 << 10;

std::filesystem::path self_dir() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::current_path() : exe.parent_path();
}

std::string host_of(const std::string& listen) {
  const auto colon = listen.rfind(':');
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  return host == "0.0.0.0" || host.empty() ? "127.0.0.1" : host;
}

std::unique_ptr<httplib::Client> client_for(const std::string& url, std::chrono::milliseconds read_timeout) {
  auto c = std::make_unique<httplib::Client>(url);
  c->set_tcp_nodelay(true);
  c->set_connection_timeout(2, 0);
  c->set_read_timeout(static_cast<time_t>(read_timeout.count() / 1000), static_cast<time_t>(read_timeout.count() % 1000 * 1000));
  c->set_write_timeout(5, 0);
  return c;
}

// A TCP port free on `host` now, for a server this agent starts: the kernel
// picks it (bind to port 0), and the probe socket is closed before the server
// binds. Another process could take it in between; the server then fails to
// bind and exits, which is a failed task the platform restarts.
int free_tcp_port(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.c_str(), "0", &hints, &found); rc != 0) {
    throw gpulab::RunError(fmt::format("cannot resolve '{}' for a server's port: {}", host, ::gai_strerror(rc)));
  }
  int port = -1;
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr && port < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len) == 0) {
      port = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                         : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    } else {
      why = std::strerror(errno);
    }
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (port < 0) throw gpulab::RunError(fmt::format("no free port on '{}' for a server: {}", host, why));
  return port;
}

// The host part of --listen as the server binds it ("0.0.0.0" stays).
std::string bind_host_of(const std::string& listen) {
  std::string host = listen.substr(0, listen.rfind(':'));
  if (host.size() >= 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  return host.empty() ? "0.0.0.0" : host;
}

// One GET /health of a server; empty when it answered 200, else why not.
std::string probe_health(const std::string& url) {
  httplib::Client c(url);
  c.set_connection_timeout(1, 0);
  c.set_read_timeout(2, 0);
  c.set_write_timeout(2, 0);
  const auto res = c.Get("/health");
  if (!res) return fmt::format("GET {}/health: {}", url, httplib::to_string(res.error()));
  if (res->status != 200) return fmt::format("GET {}/health answered {}", url, res->status);
  return {};
}

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int device_index(const std::string& device_id) {
  const auto colon = device_id.rfind(':');
  try {
    return colon == std::string::npos ? 0 : std::stoi(device_id.substr(colon + 1));
  } catch (const std::exception&) {
    return 0;
  }
}

bool node_exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

// The agent's environment a container keeps (task_container.hpp says which).
std::vector<std::string> container_environment(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view kv(*e);
    const std::string name(kv.substr(0, kv.find('=')));
    if (passes_into_container(name) && extra.count(name) == 0) out.emplace_back(kv);
  }
  for (const auto& [k, v] : extra) out.push_back(k + "=" + v);
  return out;
}

// Folders besides the task program's that a task needs to see: the HAL's
// backend folder (beside bin/, where the HAL looks) and what GPULAB_HAL_*
// points at.
std::vector<std::filesystem::path> hal_folders(const std::filesystem::path& program) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  const auto beside = program.parent_path().parent_path() / "lib" / "hal-backends";
  if (std::filesystem::is_directory(beside, ec)) out.push_back(beside);
  if (const char* list = std::getenv("GPULAB_HAL_BACKENDS")) {
    std::string_view rest(list);
    while (!rest.empty()) {
      const auto colon = rest.find(':');
      const std::filesystem::path item(std::string(rest.substr(0, colon)));
      if (!item.empty() && item.is_absolute()) out.push_back(item.parent_path());
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  if (const char* dir = std::getenv("GPULAB_HAL_MANIFEST_DIR"); dir != nullptr && dir[0] == '/') out.emplace_back(dir);
  return out;
}

}  // namespace

bool xid_is_fatal(unsigned xid) { return xid == 79 || xid == 48; }

std::string xid_reason(unsigned xid) {
  switch (xid) {
    case 79: return "Xid 79: GPU has fallen off the bus";
    case 48: return "Xid 48: double-bit ECC error";
    default: return fmt::format("Xid {}", xid);
  }
}

Agent::Agent(AgentOptions options) : options_(std::move(options)) {
  if (options_.name.empty()) throw gpulab::UsageError("--name: a node name is required");
  if (options_.name.size() > 63) throw gpulab::UsageError("--name: at most 63 characters");
  devices_ = options_.devices == "auto" ? discover_devices() : parse_device_spec(options_.devices);
  if (devices_.empty()) throw gpulab::UsageError("--devices: no HAL backend loaded here (see hal-demo)");
  if (!options_.inject.empty()) {
    injections_ = exporter::parse_injections(options_.inject);
    for (const auto& inj : injections_) {
      if (inj.gpu >= devices_.size()) {
        throw gpulab::UsageError(fmt::format("--inject: device {} does not exist (this agent has {})", inj.gpu,
                                             devices_.size()));
      }
    }
  }
  if (options_.certify) {
    for (const auto& c : certify(devices_)) {
      cert_lines_.push_back(fmt::format("{:<8} {}", c.backend, c.certified ? c.detail : "not offered: " + c.detail));
    }
  } else {
    for (auto& d : devices_) d.dtypes = {"f32"};
  }
  if (options_.measure_peak) {
    for (const auto& d : devices_) {
      if (peaks_.count(d.backend) != 0) continue;
      if (auto peak = measure_peak_flops(d.backend)) peaks_.emplace(d.backend, std::move(*peak));
    }
  }
  if (options_.work_dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    options_.work_dir = std::filesystem::path(tmp ? tmp : "/tmp") / ("gpulab-agent-" + options_.name);
  }
  std::error_code ec;
  std::filesystem::create_directories(options_.work_dir, ec);
  if (ec) throw gpulab::UsageError(fmt::format("--work '{}': {}", options_.work_dir.string(), ec.message()));
  if (options_.task_program.empty()) options_.task_program = self_dir() / "gpulab-task";
  if (::access(options_.task_program.c_str(), X_OK) != 0) {
    throw gpulab::UsageError(fmt::format("no task program at '{}' (build gpulab-task)", options_.task_program.string()));
  }
  // A missing gpulab-serve is not fatal: only serve tasks need it, and each
  // one that lands here fails with the path in its message.
  if (options_.serve_program.empty()) options_.serve_program = self_dir() / "gpulab-serve";
  for (const auto& item : options_.device_nodes) {
    const auto eq = item.find('=');
    const std::string id = item.substr(0, eq);
    if (eq == std::string::npos || eq + 1 == item.size()) {
      throw gpulab::UsageError(fmt::format("--device-node '{}': expected DEVICE=PATH (cuda:0=/dev/nvidia0)", item));
    }
    if (std::none_of(devices_.begin(), devices_.end(), [&](const Device& d) { return d.id == id; })) {
      throw gpulab::UsageError(fmt::format("--device-node '{}': this agent has no device '{}'", item, id));
    }
    const std::string path = item.substr(eq + 1);
    try {
      device_rules_for({path});
    } catch (const gpulab::UsageError& e) {
      throw gpulab::UsageError(fmt::format("--device-node '{}': {}", item, e.what()));
    }
    device_nodes_[id].push_back(path);
  }
  choose_isolation();
  if (!options_.inventory_out.empty())
    write_inventory();  // before anything serves: a bad path fails the start

  http_.Get("/healthz", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok\n", "text/plain"); });
  http_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics(), std::string(gpulab::prom::kContentType));
  });
  http_.Post("/v1/faults", [this](const httplib::Request& req, httplib::Response& res) {
    try {
      inject_now(req.body);
    } catch (const gpulab::UsageError& e) {
      throw ApiError(400, e.what());
    }
    reply_json(res, 200, Json{{"ok", true}});
  });
  http_.Get(R"(/v1/tasks/([^/]+)/logs)", [this](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mu_);
    const auto it = running_.find(req.matches[1]);
    if (it == running_.end()) throw ApiError(404, fmt::format("no running task '{}'", std::string(req.matches[1])));
    res.set_content(read_tail(it->second.log, kLogTailBytes), "text/plain; charset=utf-8");
  });
}

Agent::~Agent() {
  stop();
  if (watch_thread_ && watch_thread_->joinable()) watch_thread_->join();
  if (health_thread_ && health_thread_->joinable()) health_thread_->join();
  if (http_thread_ && http_thread_->joinable()) http_thread_->join();
  std::lock_guard lock(mu_);
  for (auto& [id, r] : running_) r.process->stop(std::chrono::milliseconds(500));
}

std::string Agent::bind() {
  const int port = http_.bind(options_.listen);
  url_ = fmt::format("http://{}:{}", host_of(options_.listen), port);
  http_thread_ = std::make_unique<std::thread>([this] { http_.listen_after_bind(); });
  return url_;
}

void Agent::stop() {
  stopping_ = true;
  http_.stop();
}

void Agent::inject_now(std::string_view spec) {
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  auto injs = exporter::parse_injections(fmt::format("{}@0s", spec));
  std::lock_guard lock(mu_);
  for (auto& inj : injs) {
    if (inj.gpu >= devices_.size()) {
      throw gpulab::UsageError(fmt::format("device {} does not exist (this agent has {})", inj.gpu, devices_.size()));
    }
    inj.at_seconds = t;
    injections_.push_back(inj);
  }
  update_health_locked();
}

void Agent::update_health_locked() {
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  for (const auto& inj : injections_) {
    if (inj.kind != exporter::Injection::Kind::kXid || !xid_is_fatal(inj.xid) || inj.at_seconds > t) continue;
    Device& d = devices_[inj.gpu];
    if (!d.health.healthy) continue;
    d.health = gpulab::inventory::Health::unhealthy(xid_reason(inj.xid));
    ++health_changes_;
    // Stop what runs there: the device is gone, the task would only hang or crash.
    for (auto& [id, r] : running_) {
      if (r.task.device != d.id) continue;
      const auto e = r.process->stop(std::chrono::milliseconds(500));
      ++tasks_stopped_unhealthy_;
      finished_[id] = finish_locked(r, e, fmt::format("device {} unhealthy: {}", d.id, d.health.reason));
      finished_[id].state = TaskState::kFailed;
    }
    for (const auto& [id, rep] : finished_) running_.erase(id);
  }
}

TaskReport Agent::finish_locked(Running& r, const ChildExit& e, const std::string& why) {
  if (isolation_ == "container" && e.signal == SIGKILL) {
    // A shim SIGKILLed (a stop that outlasted its grace) could not remove the
    // task's cgroup; its shim is gone now, so the group is a leftover.
    for (const auto& p : mininer::remove_stale_cgroups().removed) {
      fmt::print(stderr, "gpulabd agent: removed cgroup {} (its task's runtime was killed)\n", p);
    }
  }
  TaskReport rep;
  rep.id = r.task.id;
  rep.exit_code = e.exit_code;
  rep.isolation = isolation_;
  rep.device_nodes = r.task.device_nodes;
  rep.log = read_tail(r.log, kLogTailBytes);
  rep.result = done_line(rep.log);
  if (!why.empty()) {
    rep.state = TaskState::kFailed;
    rep.message = why;
  } else if (e.exit_code == 0) {
    rep.state = TaskState::kSucceeded;
    rep.message = "exited 0";
  } else {
    rep.state = TaskState::kFailed;
    rep.message = e.signal != 0 ? fmt::format("killed by signal {}", e.signal) : fmt::format("exited {}", e.exit_code);
    // The task's own last error line says more than its exit code.
    const auto pos = rep.log.rfind(": error: ");
    if (pos != std::string::npos) {
      const auto start = rep.log.rfind('\n', pos);
      const auto end = rep.log.find('\n', pos);
      rep.message += " — " + rep.log.substr(start == std::string::npos ? 0 : start + 1,
                                             (end == std::string::npos ? rep.log.size() : end) -
                                                 (start == std::string::npos ? 0 : start + 1));
    }
  }
  return rep;
}

void Agent::sweep_cgroups(const char* why) {
  try {
    const auto stale = mininer::remove_stale_cgroups();
    for (const auto& p : stale.removed) isolation_notes_.push_back(fmt::format("removed cgroup {} ({})", p, why));
    for (const auto& f : stale.failures) isolation_notes_.push_back(fmt::format("warning: {}", f));
  } catch (const std::exception& e) {
    isolation_notes_.push_back(fmt::format("warning: sweeping leftover cgroups: {}", e.what()));
  }
}

// One container that runs `gpulab-shim --help`: proves the namespaces, the
// cgroup and the mounts work here before any task depends on them (the task
// program itself may be anything; its --help need not return). nullopt when
// it ran; otherwise why not.
std::optional<std::string> Agent::probe_container() {
  if (::access(options_.shim_program.c_str(), X_OK) != 0) {
    return fmt::format("no container runtime at '{}' (build gpulab-shim)", options_.shim_program.string());
  }
  Assignment probe;
  probe.task.id = "isolation-probe";
  const auto log = options_.work_dir / "isolation-probe.log";
  std::unique_ptr<TaskProcess> p;
  try {
    p = launch(probe, options_.shim_program, {"--help"}, {}, log);
  } catch (const std::exception& e) {
    return fmt::format("the probe container did not start: {}", e.what());
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::optional<ChildExit> e;
  while (!(e = p->poll()) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!e) {
    p->stop(std::chrono::milliseconds(500));
    return "the probe container did not finish within 60 s";
  }
  if (e->exit_code == 0) return std::nullopt;
  const std::string text = read_tail(log, 64 * 1024);
  const auto pos = text.rfind(": error: ");
  if (pos != std::string::npos) {
    const auto start = text.rfind('\n', pos);
    const auto end = text.find('\n', pos);
    const std::size_t from = start == std::string::npos ? 0 : start + 1;
    return fmt::format("the probe container failed: {}", text.substr(from, (end == std::string::npos ? text.size() : end) - from));
  }
  return fmt::format("the probe container {} (see {})",
                     e->signal != 0 ? fmt::format("was killed by signal {}", e->signal)
                                    : fmt::format("exited {}", e->exit_code),
                     log.string());
}

void Agent::choose_isolation() {
  const IsolationMode mode = parse_isolation_mode(options_.isolation);
  if (options_.shim_program.empty()) options_.shim_program = self_dir() / "gpulab-shim";
  // Groups a killed agent's tasks left behind (their shims died with it).
  if (::geteuid() == 0) sweep_cgroups("left by a task of a killed agent");
  std::optional<std::string> missing;
  if (mode != IsolationMode::kProcess) {
    missing = container_prerequisites_missing();
    if (!missing) {
      isolation_ = "container";  // launch() below starts the probe in one
      missing = probe_container();
    }
  }
  const auto decision = decide_isolation(mode, missing);  // throws for an impossible --isolation container
  isolation_ = decision.isolation;
  isolation_notes_.insert(isolation_notes_.begin(), decision.reason);
}

std::unique_ptr<TaskProcess> Agent::launch(const Assignment& a, const std::filesystem::path& program,
                                           const std::vector<std::string>& argv,
                                           const std::map<std::string, std::string>& env,
                                           const std::filesystem::path& log) {
  if (isolation_ != "container") return std::make_unique<TaskProcess>(program, argv, env, log);
  std::error_code ec;
  TaskLaunch l;
  l.task_id = a.task.id;
  l.program = std::filesystem::canonical(program, ec);
  if (ec) l.program = std::filesystem::absolute(program);
  l.args = argv;
  l.device_nodes = container_device_nodes(a.task);
  l.env = container_environment(env);
  l.rootfs = std::filesystem::absolute(options_.work_dir / (a.task.id + ".root"));
  l.read_only = hal_folders(l.program);
  for (const auto& f : files_named_in(l.env, node_exists)) l.read_only.emplace_back(f);
  // The folders the task writes must exist before they can be bound.
  for (std::size_t i = 0; i + 1 < argv.size(); ++i) {
    if (argv[i] == "--checkpoint-dir" || argv[i] == "--rendezvous-dir") std::filesystem::create_directories(argv[i + 1], ec);
  }
  const auto plan = plan_task_container(l, read_host_layout());
  const auto plan_file = std::filesystem::absolute(options_.work_dir / (a.task.id + ".container.json"));
  if (auto r = gpulab::write_file(plan_file.string(), to_json(plan).dump(2) + "\n"); !r) {
    throw gpulab::RunError(r.error().message);
  }
  return std::make_unique<TaskProcess>(options_.shim_program, std::vector<std::string>{plan_file.string()},
                                       std::map<std::string, std::string>{}, log);
}

std::vector<std::string> Agent::container_device_nodes(const Task& t) const {
  if (isolation_ != "container" || t.device.empty()) return {};
  return device_nodes_for(t.device, t.backend, device_index(t.device), device_nodes_, node_exists);
}

void Agent::start_task_locked(const Assignment& a) {
  Running r;
  r.task = a.task;
  r.task.device_nodes = container_device_nodes(a.task);
  r.log = options_.work_dir / (a.task.id + ".log");
  std::vector<std::string> argv = a.argv;
  if (a.task.world > 1) {
    argv.emplace_back("--address");
    argv.push_back(host_of(options_.listen));
  }
  std::map<std::string, std::string> env;
  const auto dev = std::find_if(devices_.begin(), devices_.end(), [&](const Device& d) { return d.id == a.task.device; });
  if (dev != devices_.end() && !dev->health.healthy) {
    // Placed before the control plane heard of the fault (the task report that
    // restarted the job can overtake the heartbeat with the device's health).
    // The refusal goes back with the next heartbeat, which carries the health
    // first, so the restart lands on a healthy device.
    finished_[a.task.id] = TaskReport{a.task.id, TaskState::kFailed, -1,
                                      fmt::format("device {} unhealthy: {}", dev->id, dev->health.reason), {}, {},
                                      isolation_};
    return;
  }
  if (dev != devices_.end()) {
    if (const auto var = gpulab::inventory::visible_devices_variable(dev->backend); !var.empty())
      env[std::string(var)] = std::to_string(backend_ordinal(*dev));
  }
  env["GPULAB_TASK_ID"] = a.task.id;
  try {
    std::filesystem::path program;
    if (a.program == kTaskProgram) {
      program = options_.task_program;
    } else if (a.program == kServeProgram) {
      // A service: this agent picks its port, and judges it by GET /health.
      program = options_.serve_program;
      if (::access(program.c_str(), X_OK) != 0) {
        throw gpulab::RunError(fmt::format("no gpulab-serve at '{}' on this node", program.string()));
      }
      const std::string bind_host = bind_host_of(options_.listen);
      const int port = free_tcp_port(bind_host);
      argv.emplace_back("--listen");
      argv.push_back(bind_host.find(':') != std::string::npos ? fmt::format("[{}]:{}", bind_host, port)
                                                              : fmt::format("{}:{}", bind_host, port));
      const std::string host = host_of(options_.listen);
      r.url = host.find(':') != std::string::npos ? fmt::format("http://[{}]:{}", host, port)
                                                  : fmt::format("http://{}:{}", host, port);
      r.health = std::make_unique<ServeHealth>(options_.serve_health, steady_seconds());
    } else {
      throw gpulab::RunError(fmt::format("unknown program '{}' (this agent runs {} and {})", a.program, kTaskProgram,
                                         kServeProgram));
    }
    r.process = launch(a, program, argv, env, r.log);
  } catch (const std::exception& e) {
    TaskReport rep{a.task.id, TaskState::kFailed, -1, fmt::format("cannot start: {}", e.what()), {}, {}, isolation_};
    finished_[a.task.id] = rep;
    return;
  }
  ++tasks_started_;
  running_.emplace(a.task.id, std::move(r));
}

void Agent::write_inventory() {
  std::string text;
  std::uint64_t version = 0;
  {
    std::lock_guard lock(mu_);
    version = health_changes_;
    if (version == inventory_written_) return;
    text = gpulab::inventory::to_json(node_inventory(options_.name, devices_)).dump(2) + "\n";
  }
  if (auto r = gpulab::write_file(options_.inventory_out.string(), text); !r) {
    // Retried on the next pass (a stale file would advertise a dead device
    // as healthy), reported once per change.
    if (inventory_failed_ == version) return;
    inventory_failed_ = version;
    throw gpulab::RunError(fmt::format("--inventory-out: {}", r.error().message));
  }
  inventory_written_ = version;
}

void Agent::send_status(const TaskReport& r) {
  auto c = client_for(options_.control_url, std::chrono::milliseconds(5000));
  Json body = report_to_json(r);
  body["node"] = options_.name;
  // Best effort: the next heartbeat carries the same report until it is acknowledged.
  c->Post(fmt::format("/v1/tasks/{}/status", r.id), body.dump(), "application/json");
}

bool Agent::register_once() {
  Node n;
  n.name = options_.name;
  n.address = url_;
  n.protocol = kProtocolVersion;
  n.isolation = isolation_;
  {
    std::lock_guard lock(mu_);
    n.devices = devices_;
  }
  auto c = client_for(options_.control_url, std::chrono::milliseconds(5000));
  const auto res = c->Post("/v1/nodes/register", node_to_register_json(n).dump(), "application/json");
  if (!res) return false;
  if (res->status == 400) {
    throw gpulab::RunError(fmt::format("the control plane refused registration: {}", res->body));
  }
  return res->status == 200;
}

void Agent::heartbeat_once() {
  Heartbeat hb;
  hb.node = options_.name;
  {
    std::lock_guard lock(mu_);
    hb.devices = devices_;
    for (const auto& [id, r] : running_) {
      TaskReport rep{id, TaskState::kRunning, -1, "", {}, {}, isolation_, r.task.device_nodes};
      if (r.health && r.health->verdict() == ServeHealth::Verdict::kHealthy) rep.endpoint = r.url;
      hb.tasks.push_back(std::move(rep));
    }
    for (const auto& [id, rep] : finished_) {
      TaskReport brief = rep;
      brief.log.clear();  // the log went with the status post; do not resend it every second
      hb.tasks.push_back(brief);
    }
  }
  auto c = client_for(options_.control_url, options_.heartbeat_interval + std::chrono::milliseconds(5000));
  const auto res = c->Post(fmt::format("/v1/nodes/{}/heartbeat?wait_ms={}", options_.name,
                                       options_.heartbeat_interval.count()),
                           heartbeat_to_json(hb).dump(), "application/json");
  if (!res || res->status != 200) {
    ++heartbeat_failures_;
    if (res && res->status == 404) registered_ = false;  // the control plane forgot us: register again
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    return;
  }
  std::vector<Assignment> desired;
  try {
    const Json body = Json::parse(res->body);  // named: a range-for over a temporary's member dangles
    for (const auto& j : body.at("tasks")) desired.push_back(assignment_from_json(j));
  } catch (const std::exception&) {
    ++heartbeat_failures_;
    return;
  }
  std::set<std::string> want;
  for (const auto& a : desired) want.insert(a.task.id);
  std::lock_guard lock(mu_);
  for (auto it = finished_.begin(); it != finished_.end();) {
    it = want.count(it->first) == 0 ? finished_.erase(it) : std::next(it);  // acknowledged
  }
  for (auto it = running_.begin(); it != running_.end();) {
    if (want.count(it->first) == 0) {
      it->second.process->stop(std::chrono::milliseconds(1000));  // cancelled, or the gang restarts
      it = running_.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& a : desired) {
    if (running_.count(a.task.id) == 0 && finished_.count(a.task.id) == 0) start_task_locked(a);
  }
}

void Agent::watch_loop() {
  while (!stopping_) {
    std::vector<TaskReport> done;
    {
      std::lock_guard lock(mu_);
      update_health_locked();
      for (auto it = running_.begin(); it != running_.end();) {
        if (const auto e = it->second.process->poll()) {
          const auto rep = finish_locked(it->second, *e, "");
          finished_[it->first] = rep;
          done.push_back(rep);
          it = running_.erase(it);
        } else {
          ++it;
        }
      }
      for (const auto& [id, rep] : finished_) {
        if (!rep.log.empty() && std::none_of(done.begin(), done.end(), [&](const TaskReport& d) { return d.id == id; })) {
          done.push_back(rep);  // stopped for an unhealthy device: report once with its log
        }
      }
      for (auto& [id, rep] : finished_) rep.log.clear();
    }
    for (const auto& rep : done) send_status(rep);
    if (!options_.inventory_out.empty()) {
      try {
        write_inventory();
      } catch (const gpulab::RunError& e) {
        fmt::print(stderr, "gpulabd agent: {}\n", e.what());  // the agent keeps serving its tasks
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void Agent::health_loop() {
  struct Probe {
    std::string id, url;
  };
  while (!stopping_) {
    std::vector<Probe> due;
    {
      std::lock_guard lock(mu_);
      const double now = steady_seconds();
      for (const auto& [id, r] : running_) {
        if (r.health && r.health->due(now)) due.push_back(Probe{id, r.url});
      }
    }
    // Off the lock: a hung server costs this thread its read timeout, not the
    // agent its heartbeats.
    std::vector<std::pair<Probe, std::string>> results;
    for (const auto& p : due) results.emplace_back(p, probe_health(p.url));
    std::vector<TaskReport> reports;
    {
      std::lock_guard lock(mu_);
      const double now = steady_seconds();
      for (const auto& [p, why] : results) {
        const auto it = running_.find(p.id);
        if (it == running_.end() || !it->second.health) continue;  // stopped or exited meanwhile
        Running& r = it->second;
        const auto before = r.health->verdict();
        const auto after = r.health->observe(why.empty(), why, now);
        if (after == ServeHealth::Verdict::kHealthy && before != after) {
          TaskReport rep{p.id, TaskState::kRunning, -1, "", {}, {}, isolation_, r.task.device_nodes};
          rep.endpoint = r.url;
          reports.push_back(std::move(rep));
        } else if (after == ServeHealth::Verdict::kFailed) {
          const auto e = r.process->stop(std::chrono::milliseconds(1000));
          finished_[p.id] = finish_locked(r, e, r.health->reason());
          reports.push_back(finished_[p.id]);
          finished_[p.id].log.clear();  // sent once, with this report
          running_.erase(it);
        }
      }
    }
    for (const auto& rep : reports) send_status(rep);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

int Agent::run() {
  watch_thread_ = std::make_unique<std::thread>([this] { watch_loop(); });
  health_thread_ = std::make_unique<std::thread>([this] { health_loop(); });
  bool said_waiting = false;
  while (!stopping_) {
    if (!registered_) {
      try {
        registered_ = register_once();
      } catch (const gpulab::RunError& e) {
        stop();
        throw;
      }
      if (!registered_) {
        if (!said_waiting) {
          fmt::print(stderr, "gpulabd agent: waiting for the control plane at {}\n", options_.control_url);
          said_waiting = true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
        continue;
      }
      said_waiting = false;
    }
    heartbeat_once();
  }
  return gpulab::kExitOk;
}

std::string Agent::metrics() const {
  std::lock_guard lock(mu_);
  gpulab::prom::Exposition e;
  e.gauge("gpulab_agent_tasks_running", "Tasks this agent runs now.").set({}, static_cast<double>(running_.size()));
  e.counter("gpulab_agent_tasks_started_total", "Tasks this agent started.").set({}, static_cast<double>(tasks_started_));
  e.counter("gpulab_agent_tasks_stopped_unhealthy_total", "Tasks stopped because their device became unhealthy.")
      .set({}, static_cast<double>(tasks_stopped_unhealthy_));
  e.counter("gpulab_agent_heartbeat_failures_total", "Heartbeats the control plane did not answer.")
      .set({}, static_cast<double>(heartbeat_failures_));
  auto& healthy = e.gauge("gpulab_agent_device_healthy", "1 when the device is healthy.");
  auto& certified = e.gauge("gpulab_agent_device_certified", "1 when conformance certified the device for F32.");
  auto& peak = e.gauge("gpulab_agent_device_peak_flops_per_second",
                        "Peak FLOP/s of the device's backend: its best HAL F32 matmul (64-256 cubed, best of 3) "
                        "timed at agent start.");
  for (const auto& d : devices_) {
    healthy.set({{"device", d.id}, {"backend", d.backend}}, d.health.healthy ? 1 : 0);
    certified.set({{"device", d.id}, {"backend", d.backend}}, d.dtypes.empty() ? 0 : 1);
    if (const auto p = peaks_.find(d.backend); p != peaks_.end()) {
      peak.set({{"device", d.id}, {"backend", d.backend}}, p->second.flops);
    }
  }
  // Running train tasks: their last pace line (about a second of steps) in their log.
  auto& achieved = e.gauge("gpulab_agent_task_model_flops_per_second",
                           "Model FLOP/s of a running train task: its MLP's forward and backward matmul FLOPs over "
                           "the wall-clock seconds of its last steps (all-reduce included).");
  auto& mfu = e.gauge("gpulab_agent_task_mfu_ratio",
                      "Model FLOP utilisation of a running train task: its model FLOP/s over its device's peak "
                      "FLOP/s (gpulab_agent_device_peak_flops_per_second).");
  for (const auto& [id, r] : running_) {
    if (auto p = last_pace(read_tail(r.log, kPaceTailBytes))) r.pace = p;
    if (!r.pace) continue;
    const gpulab::prom::Labels labels{{"task", id}, {"job", r.task.job}, {"device", r.task.device}, {"backend", r.task.backend}};
    achieved.set(labels, achieved_flops(*r.pace));
    const auto p = peaks_.find(r.task.backend);
    if (p == peaks_.end()) continue;
    if (const auto ratio = model_flop_utilisation(*r.pace, p->second.flops)) mfu.set(labels, *ratio);
  }
  return e.render();
}

}  // namespace platform
