// cgroups for one container: where the hierarchies are mounted, which version
// carries each controller on this machine (v2 `memory.max` or v1
// `memory.limit_in_bytes`; v2 eBPF device program or v1 `devices.allow`), and
// the directories mininer creates and always removes again.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mininer/device_rule.hpp"

namespace mininer {

enum class CgroupVersion { kV1, kV2 };
enum class CgroupPreference { kAuto, kV1, kV2 };

std::string_view to_string(CgroupVersion v);

// Mount points read from /proc/self/mountinfo.
struct CgroupMounts {
  std::string unified;                    // the cgroup2 mount ("" if none)
  std::map<std::string, std::string> v1;  // v1 controller -> its mount point
};
CgroupMounts parse_mountinfo(std::string_view mountinfo);

// Where a process sits, from /proc/<pid>/cgroup.
struct CgroupMembership {
  std::string unified = "/";              // the "0::" line
  std::map<std::string, std::string> v1;  // v1 controller -> path inside its hierarchy
};
CgroupMembership parse_proc_cgroup(std::string_view text);

// Which hierarchy each wanted controller goes to. Throws gpulab::Unsupported
// with the reason when the machine has no way to do what was asked.
struct CgroupPlan {
  std::optional<CgroupVersion> memory;
  std::optional<CgroupVersion> devices;
};
CgroupPlan plan_cgroups(const CgroupMounts& mounts, const std::string& unified_controllers,
                        CgroupPreference pref, bool want_memory, bool want_devices);

// The value after `key` in a "key value" file (memory.events, memory.oom_control).
std::optional<std::uint64_t> keyed_value(std::string_view text, std::string_view key);

// One directory mininer created. Removing it first kills whatever still runs
// in it, then rmdirs (retrying while dying tasks leave it busy).
class CgroupDir {
 public:
  CgroupDir(std::string path, bool created) : path_(std::move(path)), created_(created) {}
  CgroupDir(CgroupDir&& other) noexcept;
  CgroupDir& operator=(CgroupDir&&) = delete;
  CgroupDir(const CgroupDir&) = delete;
  ~CgroupDir();
  const std::string& path() const { return path_; }
  void add_process(pid_t pid) const;
  // Empty when removed; otherwise why not.
  std::string remove();

 private:
  std::string path_;
  bool created_;
};

// "mininer-<pid>": the name of the groups the runtime with this pid creates.
std::string cgroup_name_for(pid_t runtime);

// Groups a mininer left behind when it was killed with SIGKILL (it could not
// remove them): every mininer-<pid> under the caller's own group whose pid is
// no longer a live mininer. Whatever still runs inside is killed, then the
// directory is removed. Each run does this first; `mininer gc` does only this.
struct StaleCgroups {
  std::vector<std::string> removed;
  std::vector<std::string> failures;  // "cannot remove PATH: why"
};
StaleCgroups remove_stale_cgroups();

// The cgroups of one container.
class ContainerCgroups {
 public:
  // Creates `name` under the caller's own cgroup in each hierarchy the plan uses.
  ContainerCgroups(const CgroupPlan& plan, const std::string& name);
  ContainerCgroups(const ContainerCgroups&) = delete;
  ContainerCgroups& operator=(const ContainerCgroups&) = delete;

  // memory.max (v2) or memory.limit_in_bytes (v1), with swap off for the group.
  void set_memory_limit(std::uint64_t bytes);
  // Only `allow` (type, major, minor) may be opened or mknod'ed.
  void restrict_devices(const std::vector<DeviceRule>& allow);
  void add_process(pid_t pid);

  std::optional<std::uint64_t> oom_kills() const;
  std::optional<std::uint64_t> memory_peak_bytes() const;
  // One line per directory: "memory v1 /sys/fs/cgroup/memory/.../mininer-42".
  std::vector<std::string> describe() const;
  std::vector<std::string> paths() const;
  const CgroupPlan& plan() const { return plan_; }
  // Removes every directory; returns the failures (empty: all gone).
  std::vector<std::string> remove_all();

 private:
  const CgroupDir* memory_dir() const;
  CgroupPlan plan_;
  std::optional<CgroupDir> v1_memory_, v1_devices_, v2_;
};

}  // namespace mininer
