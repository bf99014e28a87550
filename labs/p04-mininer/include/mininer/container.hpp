// A container is a process started in new namespaces (UTS, PID, mount, and
// optionally network and user), inside a root filesystem, joined to cgroups
// before it execs. run_container() does exactly that, reports how the
// container ended, and removes every cgroup it created on every exit path.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mininer/cgroup.hpp"
#include "mininer/device_rule.hpp"

namespace mininer {

// --device HOST[:CONTAINER]: a host device node (recreated inside with the same
// major:minor) or a plain file such as fakegpud's FUSE device (bind-mounted).
struct DeviceRequest {
  std::string host_path;
  std::string container_path;  // under /dev
};
// --inject HOST[:CONTAINER]: a host file bind-mounted read-only into the
// container, the toolkit hook's "inject the host's user-mode driver" step.
struct InjectRequest {
  std::string host_path;
  std::string container_path;
};

// A host directory or file mounted at the same or another path inside, for a
// runtime that builds the container's tree from the host's own (gpulabd's
// agent: the host's /usr read-only, a job folder writable) instead of an image.
struct BindRequest {
  std::string host_path;
  std::string container_path;
  bool read_only = true;
};
// A symbolic link created in the rootfs (merged /usr: /bin -> usr/bin).
struct LinkRequest {
  std::string target;
  std::string container_path;
};

DeviceRequest parse_device_request(const std::string& spec);
InjectRequest parse_inject_request(const std::string& spec);

// What the host path of a --device is: a node (with its cgroup rule) or a file.
struct DeviceSource {
  bool is_node = false;
  DeviceRule rule;       // valid when is_node
  unsigned mode = 0666;  // permission bits to give the node
  bool on_fuse = false;  // a file served by a FUSE daemon (fakegpud)
};
// Throws gpulab::UsageError if the path is missing or neither a node nor a file.
DeviceSource inspect_device(const std::string& host_path);

struct RunSpec {
  std::string rootfs = "rootfs";
  bool chroot_only = false;  // --chroot: the weaker, escapable variant
  std::vector<DeviceRequest> devices;
  std::vector<InjectRequest> injects;
  bool device_cgroup = false;
  bool net = false;
  bool userns = false;
  // Docker's default capabilities only, no_new_privs and a seccomp filter
  // (confine.hpp), applied just before the command starts.
  bool confine = false;
  std::optional<std::uint64_t> memory_mb;  // run-limited
  CgroupPreference cgroup = CgroupPreference::kAuto;
  std::string hostname = "minibox";
  std::vector<std::string> argv;
  // For runtimes that assemble the tree from host paths. With rootfs_tmpfs
  // the rootfs directory only names the place: a fresh tmpfs is mounted on it
  // inside the container's mount namespace, so nothing is written to disk.
  // Order inside: links, /proc, /sys, /dev, the tmpfs list, the binds, the
  // injects; each mount point is created in the container as it is needed.
  bool rootfs_tmpfs = false;
  std::vector<LinkRequest> links;
  std::vector<std::string> tmpfs;  // a fresh tmpfs (mode 1777) at each path: /tmp, /dev/shm
  std::vector<BindRequest> binds;
  std::vector<std::string> env;    // "NAME=value", added to the clean environment
  bool ipc = false;                // CLONE_NEWIPC: System V IPC and POSIX queues of its own
  // The device cgroup also admits the standard nodes every /dev here holds
  // (zero, full, random, urandom, tty), as runc's default list does: the
  // programs of a host userland read /dev/urandom.
  bool allow_standard_devices = false;
  // With a --device, inject fakegpu-client-static from mininer's directory
  // (the toolkit hook's user-mode driver). Off for a runtime that mounts the
  // host's /usr read-only, where no mount point can be made.
  bool inject_device_client = true;
};

// Throws gpulab::UsageError for what is wrong before anything starts: no
// command, missing rootfs, limit 0, a device path that does not exist.
void validate(const RunSpec& spec);

struct RunOutcome {
  int wait_status = 0;
  std::optional<std::uint64_t> oom_kills;
  std::optional<std::uint64_t> peak_bytes;
  std::vector<std::string> cgroups_removed;
  // The exit code mininer passes on: the command's, or 128 + signal.
  int exit_code() const;
};

// "exited with status 0", "killed by signal 9 (SIGKILL)".
std::string describe_wait_status(int wait_status);

// Runs the container; progress and the final report go to stderr as
// "mininer: ..." lines, the container's own output to the inherited fds.
RunOutcome run_container(const RunSpec& spec);

// Whether "/" in this mountinfo is the kernel's initial rootfs (an initramfs,
// as in a qemu VM booted without a disk): pivot_root refuses it with EINVAL,
// and mininer moves the new root over "/" and chroots instead.
bool root_is_initramfs(std::string_view mountinfo);

// The /30 of a --net container: host side .1 + 4k, container side .2 + 4k.
struct NetPlan {
  std::string host_if, container_if_tmp;
  std::string host_ip, container_ip;  // dotted, without prefix length
};
NetPlan plan_net(pid_t mininer_pid);

}  // namespace mininer
