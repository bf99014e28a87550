#include "platform/task_container.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "gpulab/errors.hpp"
#include "gpulab/inventory/device_access.hpp"
#include "mininer/cgroup.hpp"
#include "mininer/container.hpp"
#include "mininer/sys.hpp"

namespace platform {
namespace {

using gpulab::Json;

// runc's default allow-list, less what mininer does not create (ptmx, console).
constexpr std::array<mininer::DeviceRule, 6> kStandardRules{{{'c', 1, 3},
                                                             {'c', 1, 5},
                                                             {'c', 1, 7},
                                                             {'c', 1, 8},
                                                             {'c', 1, 9},
                                                             {'c', 5, 0}}};

// Whether `path` is `dir` or below it.
bool within(const std::string& path, const std::string& dir) {
  if (dir == "/") return true;
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/');
}

std::string clean(const std::filesystem::path& p) { return p.lexically_normal().string(); }

std::string hostname_for(const std::string& task_id) {
  std::string h = task_id.substr(0, 63);
  for (char& c : h) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.')) c = '-';
  }
  return h.empty() ? "task" : h;
}

}  // namespace

IsolationMode parse_isolation_mode(std::string_view text) {
  if (text == "auto") return IsolationMode::kAuto;
  if (text == "container") return IsolationMode::kContainer;
  if (text == "process") return IsolationMode::kProcess;
  throw gpulab::UsageError(fmt::format("--isolation: expected auto, container or process, got '{}'", text));
}

IsolationDecision decide_isolation(IsolationMode mode, const std::optional<std::string>& missing) {
  switch (mode) {
    case IsolationMode::kProcess:
      return {"process", "tasks run as plain processes (--isolation process)"};
    case IsolationMode::kContainer:
      if (missing) throw gpulab::RunError(fmt::format("--isolation container: {}", *missing));
      return {"container", "tasks run in mininer containers (--isolation container)"};
    case IsolationMode::kAuto:
      break;
  }
  if (missing) return {"process", fmt::format("tasks run as plain processes: {}", *missing)};
  return {"container", "tasks run in mininer containers: own PID, mount, UTS and IPC namespaces, "
                       "a devices cgroup per task"};
}

std::optional<std::string> container_prerequisites_missing() {
  if (::geteuid() != 0) return "not running as root (namespaces, mounts and cgroups need it)";
  for (const char* ns : {"pid", "mnt", "uts", "ipc"}) {
    if (!mininer::path_exists(fmt::format("/proc/self/ns/{}", ns))) {
      return fmt::format("this kernel has no {} namespaces (/proc/self/ns/{} is missing)", ns, ns);
    }
  }
  const auto mounts = mininer::parse_mountinfo(mininer::read_file("/proc/self/mountinfo").value_or(""));
  const std::string unified_ctl =
      mounts.unified.empty() ? "" : mininer::read_file(mounts.unified + "/cgroup.controllers").value_or("");
  try {
    mininer::plan_cgroups(mounts, unified_ctl, mininer::CgroupPreference::kAuto, false, true);
  } catch (const gpulab::Unsupported& e) {
    return fmt::format("no cgroup for the device rules: {}", e.what());
  }
  return std::nullopt;
}

std::vector<std::string> device_nodes_for(const std::string& device_id, const std::string& backend, int index,
                                          const std::map<std::string, std::vector<std::string>>& declared,
                                          const std::function<bool(const std::string&)>& exists) {
  std::vector<std::string> out;
  const auto add = [&](const std::string& p) {
    if (exists(p) && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  };
  for (const auto& f : gpulab::inventory::device_files(backend, index)) add(f);
  if (const auto it = declared.find(device_id); it != declared.end()) {
    for (const auto& p : it->second) {
      if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);  // declared: must exist (checked at start)
    }
  }
  return out;
}

std::vector<mininer::DeviceRule> device_rules_for(const std::vector<std::string>& nodes) {
  std::vector<mininer::DeviceRule> out(kStandardRules.begin(), kStandardRules.end());
  for (const auto& n : nodes) {
    const auto src = mininer::inspect_device(n);
    if (!src.is_node) throw gpulab::UsageError(fmt::format("{}: not a device node", n));
    if (std::find(out.begin(), out.end(), src.rule) == out.end()) out.push_back(src.rule);
  }
  return out;
}

std::vector<TopEntry> read_host_layout() {
  std::vector<TopEntry> out;
  for (const char* p : {"/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt"}) {
    struct stat st {};
    if (::lstat(p, &st) != 0) continue;
    TopEntry e{p, "", false};
    if (S_ISLNK(st.st_mode)) {
      std::error_code ec;
      e.link = std::filesystem::read_symlink(p, ec).string();
      if (ec) continue;
    } else if (S_ISDIR(st.st_mode)) {
      e.is_dir = true;
    } else {
      continue;
    }
    out.push_back(std::move(e));
  }
  return out;
}

ContainerPlan plan_task_container(const TaskLaunch& launch, const std::vector<TopEntry>& layout) {
  ContainerPlan p;
  p.rootfs = clean(launch.rootfs);
  p.hostname = hostname_for(launch.task_id);
  const auto visible = [&](const std::string& path) {
    return std::any_of(p.binds.begin(), p.binds.end(), [&](const BindMount& b) { return within(path, b.path); });
  };
  for (const auto& e : layout) {
    if (!e.link.empty()) {
      p.links.emplace_back(e.link, e.path);
    } else if (e.is_dir) {
      p.binds.push_back({e.path, e.path, true});
    }
  }
  std::vector<std::string> read_only{clean(launch.program.parent_path())};
  for (const auto& r : launch.read_only) read_only.push_back(clean(r));
  for (const auto& r : read_only) {
    if (!visible(r)) p.binds.push_back({r, r, true});
  }
  // The folders the task writes: a train rank's checkpoints (and a file
  // rendezvous), at the same path inside, so the argv needs no rewriting.
  for (std::size_t i = 0; i + 1 < launch.args.size(); ++i) {
    if (launch.args[i] == "--checkpoint-dir" || launch.args[i] == "--rendezvous-dir") {
      const std::string dir = clean(launch.args[i + 1]);
      if (std::none_of(p.binds.begin(), p.binds.end(), [&](const BindMount& b) { return b.path == dir; })) {
        p.binds.push_back({dir, dir, false});
      }
    }
  }
  p.tmpfs = {"/tmp", "/dev/shm"};
  p.devices = launch.device_nodes;
  p.env = launch.env;
  p.env.emplace_back("HOME=/tmp");  // writable: caches (PoCL's kernels) land in the task's own /tmp
  p.argv.push_back(launch.program.string());
  p.argv.insert(p.argv.end(), launch.args.begin(), launch.args.end());
  return p;
}

Json to_json(const ContainerPlan& p) {
  Json links = Json::array();
  for (const auto& [target, path] : p.links) links.push_back(Json{{"target", target}, {"path", path}});
  Json binds = Json::array();
  for (const auto& b : p.binds) binds.push_back(Json{{"host", b.host}, {"path", b.path}, {"read_only", b.read_only}});
  return Json{{"rootfs", p.rootfs}, {"hostname", p.hostname}, {"links", links},   {"tmpfs", p.tmpfs},
              {"binds", binds},     {"devices", p.devices},   {"env", p.env},     {"argv", p.argv}};
}

ContainerPlan container_plan_from_json(const Json& j) {
  static const std::array<std::string_view, 8> kFields{"rootfs", "hostname", "links", "tmpfs",
                                                       "binds",  "devices",  "env",   "argv"};
  if (!j.is_object()) throw gpulab::UsageError("container plan: expected a JSON object");
  for (const auto& [k, v] : j.items()) {
    if (std::find(kFields.begin(), kFields.end(), k) == kFields.end()) {
      throw gpulab::UsageError(fmt::format("container plan: unknown field '{}'", k));
    }
  }
  const auto field = [&](const char* name) -> const Json& {
    if (!j.contains(name)) throw gpulab::UsageError(fmt::format("container plan: '{}' is missing", name));
    return j.at(name);
  };
  ContainerPlan p;
  try {
    p.rootfs = field("rootfs").get<std::string>();
    p.hostname = field("hostname").get<std::string>();
    for (const auto& l : field("links")) p.links.emplace_back(l.at("target").get<std::string>(), l.at("path").get<std::string>());
    p.tmpfs = field("tmpfs").get<std::vector<std::string>>();
    for (const auto& b : field("binds")) {
      p.binds.push_back({b.at("host").get<std::string>(), b.at("path").get<std::string>(), b.at("read_only").get<bool>()});
    }
    p.devices = field("devices").get<std::vector<std::string>>();
    p.env = field("env").get<std::vector<std::string>>();
    p.argv = field("argv").get<std::vector<std::string>>();
  } catch (const Json::exception& e) {
    throw gpulab::UsageError(fmt::format("container plan: {}", e.what()));
  }
  if (p.argv.empty() || p.argv.front().empty() || p.argv.front().front() != '/') {
    throw gpulab::UsageError("container plan: 'argv' must start with an absolute program path");
  }
  if (p.rootfs.empty() || p.rootfs.front() != '/') {
    throw gpulab::UsageError("container plan: 'rootfs' must be an absolute path");
  }
  return p;
}

bool passes_into_container(std::string_view name) {
  for (const std::string_view prefix : {"GPULAB_", "POCL_", "OCL_", "CUDA_", "OPENBLAS_", "OMP_", "ASAN_", "UBSAN_",
                                        "TSAN_", "LSAN_", "LC_"}) {
    if (name.starts_with(prefix)) return true;
  }
  return name == "LANG" || name == "TZ";
}

std::vector<std::string> files_named_in(const std::vector<std::string>& env,
                                        const std::function<bool(const std::string&)>& exists) {
  std::vector<std::string> out;
  for (const auto& e : env) {
    const auto eq = e.find('=');
    if (eq == std::string::npos || !std::string_view(e).substr(0, eq).ends_with("_OPTIONS")) continue;
    // "halt_on_error=1 suppressions=/a/b.supp" or "a=1:b=/c": words split at blanks and colons.
    std::size_t pos = eq + 1;
    while (pos < e.size()) {
      const auto end = e.find_first_of(" :", pos);
      const std::string word = e.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
      const auto inner = word.find('=');
      if (inner != std::string::npos && inner + 1 < word.size() && word[inner + 1] == '/') {
        const std::string path = word.substr(inner + 1);
        if (exists(path) && std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
      }
      if (end == std::string::npos) break;
      pos = end + 1;
    }
  }
  return out;
}

int run_container_plan(const ContainerPlan& plan) {
  // The shim is a mininer runtime: the groups it creates are "mininer-<pid>",
  // and every mininer (and `mininer gc`, and the agent's sweep at start) keeps
  // a group whose owner is a live process named "mininer" and removes the
  // others. Taking the name makes a running task's group safe from those
  // sweeps, and a killed shim's group a leftover they remove.
  ::prctl(PR_SET_NAME, "mininer");
  mininer::RunSpec spec;
  spec.rootfs = plan.rootfs;
  spec.rootfs_tmpfs = true;
  spec.hostname = plan.hostname;
  for (const auto& [target, path] : plan.links) spec.links.push_back({target, path});
  spec.tmpfs = plan.tmpfs;
  for (const auto& b : plan.binds) spec.binds.push_back({b.host, b.path, b.read_only});
  for (const auto& d : plan.devices) {
    const std::string inside = within(d, "/dev") ? d : "/dev/" + mininer::basename_of(d);
    spec.devices.push_back({d, inside});
  }
  spec.device_cgroup = true;
  spec.allow_standard_devices = true;
  spec.inject_device_client = false;  // /usr is the host's, read-only
  spec.ipc = true;
  // Root inside, but with Docker's default capabilities, no_new_privs and
  // mininer's seccomp filter: no mounts, namespaces, modules or BPF for a task.
  spec.confine = true;
  spec.env = plan.env;
  spec.argv = plan.argv;

  std::error_code ec;
  std::filesystem::create_directories(plan.rootfs, ec);
  if (ec) throw gpulab::RunError(fmt::format("cannot create the rootfs folder '{}': {}", plan.rootfs, ec.message()));
  struct RemoveRootfs {
    std::string dir;
    // Only rmdir: the folder stays empty on the host (the tmpfs and every
    // mount live in the container's mount namespace), and rmdir can never
    // delete what a leaked mount would show.
    ~RemoveRootfs() { ::rmdir(dir.c_str()); }
  } remove_rootfs{plan.rootfs};

  const auto outcome = mininer::run_container(spec);
  if (WIFSIGNALED(outcome.wait_status)) {
    const int sig = WTERMSIG(outcome.wait_status);
    const rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    ::rmdir(plan.rootfs.c_str());
    ::signal(sig, SIG_DFL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, sig);
    ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
    ::raise(sig);
  }
  return outcome.exit_code();
}

}  // namespace platform
