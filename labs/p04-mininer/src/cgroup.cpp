#include "mininer/cgroup.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

#include "gpulab/errors.hpp"
#include "gpulab/text.hpp"
#include "mininer/device_filter.hpp"
#include "mininer/sys.hpp"

namespace mininer {
namespace {

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto pos = s.find(sep, start);
    out.emplace_back(
        s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

std::string join_path(const std::string& mount, const std::string& inner) {
  if (inner.empty() || inner == "/") return mount;
  return mount + (inner.front() == '/' ? "" : "/") + inner;
}

// The v1 controllers a cgroup mount carries, from its super options ("rw,memory").
std::vector<std::string> v1_controllers(const std::string& super_options) {
  static const char* const known[] = {"memory",  "devices", "cpu",      "cpuacct",
                                      "cpuset",  "freezer", "blkio",    "pids",
                                      "hugetlb", "net_cls", "net_prio", "perf_event"};
  std::vector<std::string> out;
  for (const auto& opt : split(super_options, ','))
    for (const char* k : known)
      if (opt == k) out.push_back(opt);
  return out;
}

bool word_in(std::string_view text, std::string_view word) {
  std::istringstream in{std::string(text)};
  for (std::string w; in >> w;)
    if (w == word) return true;
  return false;
}

}  // namespace

std::string_view to_string(CgroupVersion v) {
  return v == CgroupVersion::kV1 ? "v1" : "v2";
}

std::string DeviceRule::text() const {
  return std::string(1, type) + " " + std::to_string(major) + ":" + std::to_string(minor);
}

CgroupMounts parse_mountinfo(std::string_view mountinfo) {
  // "36 25 0:31 / /sys/fs/cgroup/memory rw,relatime shared:14 - cgroup cgroup rw,memory"
  CgroupMounts m;
  std::istringstream in{std::string(mountinfo)};
  for (std::string line; std::getline(in, line);) {
    const auto fields = split(line, ' ');
    std::size_t dash = 0;
    while (dash < fields.size() && fields[dash] != "-") ++dash;
    if (fields.size() < 5 || dash + 3 >= fields.size()) continue;
    const std::string& root = fields[3];
    const std::string& point = fields[4];
    const std::string& fstype = fields[dash + 1];
    if (root != "/") continue;  // a bind of a sub-tree, not the hierarchy itself
    if (fstype == "cgroup2" && m.unified.empty()) {
      m.unified = point;
    } else if (fstype == "cgroup") {
      for (const auto& c : v1_controllers(fields[dash + 3])) m.v1.emplace(c, point);
    }
  }
  return m;
}

CgroupMembership parse_proc_cgroup(std::string_view text) {
  // "4:memory:/user.slice"  "0::/init.scope"  "5:cpu,cpuacct:/"
  CgroupMembership m;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) {
    const auto first = line.find(':');
    const auto second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (line.substr(0, first) == "0" && controllers.empty()) {
      m.unified = path;
      continue;
    }
    for (const auto& c : split(controllers, ',')) m.v1[c] = path;
  }
  return m;
}

CgroupPlan plan_cgroups(const CgroupMounts& mounts, const std::string& unified_controllers,
                        CgroupPreference pref, bool want_memory, bool want_devices) {
  CgroupPlan plan;
  const bool v2_memory = !mounts.unified.empty() && word_in(unified_controllers, "memory");
  const bool v1_memory = mounts.v1.count("memory") != 0;
  const bool v1_devices = mounts.v1.count("devices") != 0;
  const bool v2_devices =
      !mounts.unified.empty();  // an eBPF program needs no controller, only the hierarchy
  if (want_memory) {
    if (pref != CgroupPreference::kV1 && v2_memory)
      plan.memory = CgroupVersion::kV2;
    else if (pref != CgroupPreference::kV2 && v1_memory)
      plan.memory = CgroupVersion::kV1;
    else if (pref == CgroupPreference::kV2)
      throw gpulab::Unsupported(
          mounts.unified.empty()
              ? "no cgroup2 hierarchy is mounted (mount -t cgroup2 none /sys/fs/cgroup)"
              : "the cgroup2 hierarchy at " + mounts.unified +
                    " has no memory controller (a hybrid host: memory is on v1; try --cgroup v1)");
    else if (pref == CgroupPreference::kV1)
      throw gpulab::Unsupported("no cgroup v1 memory hierarchy is mounted");
    else
      throw gpulab::Unsupported(
          "no memory controller: neither cgroup2 with 'memory' nor a v1 memory hierarchy is "
          "mounted");
  }
  if (want_devices) {
    // A pure v2 host has no v1 devices; a hybrid host keeps devices on v1 unless asked for v2.
    if (pref == CgroupPreference::kV2 ||
        (pref == CgroupPreference::kAuto && !v1_devices && v2_devices) ||
        (pref == CgroupPreference::kAuto && plan.memory == CgroupVersion::kV2))
      plan.devices = CgroupVersion::kV2;
    else if (v1_devices)
      plan.devices = CgroupVersion::kV1;
    if (plan.devices == CgroupVersion::kV2 && !v2_devices)
      throw gpulab::Unsupported("no cgroup2 hierarchy is mounted for the eBPF device program");
    if (!plan.devices)
      throw gpulab::Unsupported(
          "no devices controller: neither cgroup v1 devices nor cgroup2 is mounted");
  }
  return plan;
}

std::optional<std::uint64_t> keyed_value(std::string_view text, std::string_view key) {
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string k;
    std::uint64_t v = 0;
    if (words >> k && k == key && words >> v) return v;
  }
  return std::nullopt;
}

CgroupDir::CgroupDir(CgroupDir&& other) noexcept
    : path_(std::move(other.path_)), created_(other.created_) {
  other.created_ = false;
}

CgroupDir::~CgroupDir() {
  remove();
}

void CgroupDir::add_process(pid_t pid) const {
  write_file(path_ + "/cgroup.procs", std::to_string(pid));
}

std::string CgroupDir::remove() {
  if (!created_) return {};
  using namespace std::chrono_literals;
  int error = 0;
  for (int attempt = 0; attempt < 200; ++attempt) {
    // Whatever still runs here (an error path before the container's init
    // died) is killed first: a group with members cannot be removed.
    if (const auto procs = read_file(path_ + "/cgroup.procs")) {
      std::istringstream in(*procs);
      for (long pid; in >> pid;) ::kill(static_cast<pid_t>(pid), SIGKILL);
    }
    if (::rmdir(path_.c_str()) == 0 || errno == ENOENT) {
      created_ = false;
      return {};
    }
    error = errno;
    if (error != EBUSY) break;
    std::this_thread::sleep_for(10ms);  // dying tasks still charged to the group
  }
  return "cannot remove " + path_ + ": " + errno_text(error);
}

namespace {

// Where mininer creates its groups: under the caller's own group, so limits
// and delegation above it still apply ("cat /proc/self/cgroup first, always").
struct ParentGroups {
  CgroupMounts mounts = parse_mountinfo(read_file("/proc/self/mountinfo").value_or(""));
  CgroupMembership self = parse_proc_cgroup(read_file("/proc/self/cgroup").value_or(""));
  [[nodiscard]] std::string v1(const std::string& controller) const {
    const auto it = self.v1.find(controller);
    return join_path(mounts.v1.at(controller), it == self.v1.end() ? "/" : it->second);
  }
  [[nodiscard]] std::string unified() const { return join_path(mounts.unified, self.unified); }
};

constexpr std::string_view kGroupPrefix = "mininer-";

// A mininer process (not a zombie, not a reused pid) still owns mininer-<pid>.
bool mininer_alive(pid_t pid) {
  const auto stat = read_file(fmt::format("/proc/{}/stat", pid));
  if (!stat) return false;
  // "pid (comm) S ...": the state follows the last ')'.
  const auto close = stat->rfind(')');
  if (close == std::string::npos || close + 2 >= stat->size() || (*stat)[close + 2] == 'Z') return false;
  const auto open = stat->find('(');
  return open != std::string::npos && stat->substr(open + 1, close - open - 1) == "mininer";
}

}  // namespace

std::string cgroup_name_for(pid_t runtime) { return fmt::format("{}{}", kGroupPrefix, runtime); }

StaleCgroups remove_stale_cgroups() {
  StaleCgroups out;
  const ParentGroups parents;
  std::vector<std::string> dirs;
  for (const char* controller : {"memory", "devices"})
    if (parents.mounts.v1.count(controller) != 0) dirs.push_back(parents.v1(controller));
  if (!parents.mounts.unified.empty()) dirs.push_back(parents.unified());
  for (const auto& dir : dirs) {
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      pid_t pid = 0;
      if (!name.starts_with(kGroupPrefix) || !it->is_directory() ||
          !gpulab::parse_number(std::string_view(name).substr(kGroupPrefix.size()), pid) ||
          mininer_alive(pid))
        continue;
      // Kills what is left inside (a container from before PR_SET_PDEATHSIG), then rmdirs.
      CgroupDir group(it->path().string(), true);
      if (std::string why = group.remove(); why.empty())
        out.removed.push_back(it->path().string());
      else
        out.failures.push_back(std::move(why));
    }
  }
  return out;
}

ContainerCgroups::ContainerCgroups(const CgroupPlan& plan, const std::string& name) : plan_(plan) {
  const ParentGroups parents;
  const auto create = [&](const std::string& parent) {
    const std::string path = parent + "/" + name;
    if (::mkdir(path.c_str(), 0755) != 0) throw_errno("cannot create cgroup " + path);
    return CgroupDir(path, true);
  };
  if (plan.memory == CgroupVersion::kV1) v1_memory_.emplace(create(parents.v1("memory")));
  if (plan.devices == CgroupVersion::kV1) v1_devices_.emplace(create(parents.v1("devices")));
  if (plan.memory == CgroupVersion::kV2 || plan.devices == CgroupVersion::kV2) {
    const std::string parent = parents.unified();
    if (plan.memory == CgroupVersion::kV2) {
      const auto enabled = read_file(parent + "/cgroup.subtree_control").value_or("");
      if (!word_in(enabled, "memory")) {
        try {
          write_file(parent + "/cgroup.subtree_control", "+memory");
        } catch (const SysError& e) {
          throw gpulab::Unsupported("cannot enable the memory controller for groups under " +
                                    parent + " (" + e.what() +
                                    "; a v2 group holding processes cannot delegate controllers)");
        }
      }
    }
    v2_.emplace(create(parent));
  }
}

const CgroupDir* ContainerCgroups::memory_dir() const {
  if (v1_memory_) return &*v1_memory_;
  if (plan_.memory == CgroupVersion::kV2 && v2_) return &*v2_;
  return nullptr;
}

void ContainerCgroups::set_memory_limit(std::uint64_t bytes) {
  const std::string value = std::to_string(bytes);
  if (v1_memory_) {
    const std::string& p = v1_memory_->path();
    write_file(p + "/memory.limit_in_bytes", value);
    // memsw = memory + swap: equal limits leave no room for swap. Absent
    // without swap accounting (then there is nothing to disable).
    if (path_exists(p + "/memory.memsw.limit_in_bytes"))
      write_file(p + "/memory.memsw.limit_in_bytes", value);
    if (path_exists(p + "/memory.swappiness")) {
      try {
        write_file(p + "/memory.swappiness", "0");
      } catch (const SysError&) {
        // Refused when the parent uses hierarchy with its own setting; memsw already forbids swap.
      }
    }
  } else if (plan_.memory == CgroupVersion::kV2 && v2_) {
    write_file(v2_->path() + "/memory.max", value);
    if (path_exists(v2_->path() + "/memory.swap.max"))
      write_file(v2_->path() + "/memory.swap.max", "0");
  }
}

void ContainerCgroups::restrict_devices(const std::vector<DeviceRule>& allow) {
  if (v1_devices_) {
    const std::string& p = v1_devices_->path();
    write_file(p + "/devices.deny", "a");  // drop the inherited "a *:* rwm"
    for (const auto& rule : allow) write_file(p + "/devices.allow", rule.text() + " rwm");
  } else if (plan_.devices == CgroupVersion::kV2 && v2_) {
    const int prog = load_device_program(build_device_program(allow));
    try {
      attach_device_program(prog, v2_->path());
    } catch (...) {
      ::close(prog);
      throw;
    }
    ::close(prog);  // the cgroup keeps the attached program alive
  }
}

void ContainerCgroups::add_process(pid_t pid) {
  if (v1_memory_) v1_memory_->add_process(pid);
  if (v1_devices_) v1_devices_->add_process(pid);
  if (v2_) v2_->add_process(pid);
}

std::optional<std::uint64_t> ContainerCgroups::oom_kills() const {
  if (v1_memory_)
    return keyed_value(read_file(v1_memory_->path() + "/memory.oom_control").value_or(""),
                       "oom_kill");
  if (const auto* d = memory_dir())
    return keyed_value(read_file(d->path() + "/memory.events").value_or(""), "oom_kill");
  return std::nullopt;
}

std::optional<std::uint64_t> ContainerCgroups::memory_peak_bytes() const {
  const CgroupDir* d = memory_dir();
  if (!d) return std::nullopt;
  const auto text =
      read_file(d->path() + (v1_memory_ ? "/memory.max_usage_in_bytes" : "/memory.peak"));
  if (!text) return std::nullopt;  // memory.peak is new in Linux 5.19
  try {
    return std::stoull(*text);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::vector<std::string> ContainerCgroups::describe() const {
  std::vector<std::string> out;
  if (v1_memory_) out.push_back("memory v1 " + v1_memory_->path());
  if (v1_devices_) out.push_back("devices v1 " + v1_devices_->path());
  if (v2_) {
    std::string what;
    if (plan_.memory == CgroupVersion::kV2) what = "memory";
    if (plan_.devices == CgroupVersion::kV2) what += what.empty() ? "devices" : "+devices";
    out.push_back(what + " v2 " + v2_->path());
  }
  return out;
}

std::vector<std::string> ContainerCgroups::paths() const {
  std::vector<std::string> out;
  for (const auto* d : {&v1_memory_, &v1_devices_, &v2_})
    if (*d) out.push_back((*d)->path());
  return out;
}

std::vector<std::string> ContainerCgroups::remove_all() {
  std::vector<std::string> failures;
  for (auto* d : {&v1_memory_, &v1_devices_, &v2_})
    if (*d)
      if (auto why = (*d)->remove(); !why.empty()) failures.push_back(why);
  return failures;
}

}  // namespace mininer
