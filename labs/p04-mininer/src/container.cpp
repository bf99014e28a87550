#include "mininer/container.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "gpulab/errors.hpp"
#include "mininer/confine.hpp"
#include "mininer/sys.hpp"

namespace mininer {
namespace {

constexpr unsigned kUsernsHostBase = 100000;  // container uid 0 = host uid 100000
constexpr unsigned kUsernsSize = 65536;

// The nodes every container's /dev gets (the OCI default set).
struct StandardNode {
  const char* name;
  unsigned major, minor;
};
constexpr std::array<StandardNode, 6> kStandardNodes{{{"null", 1, 3},
                                                      {"zero", 1, 5},
                                                      {"full", 1, 7},
                                                      {"random", 1, 8},
                                                      {"urandom", 1, 9},
                                                      {"tty", 5, 0}}};

void say(const std::string& line) {
  std::fflush(stdout);
  std::fprintf(stderr, "mininer: %s\n", line.c_str());
  std::fflush(stderr);
}

// The signal mininer received while the container ran (forwarded as SIGKILL).
volatile sig_atomic_t g_child_pid = 0;
volatile sig_atomic_t g_signal = 0;

void forward_signal(int sig) {
  g_signal = sig;
  if (g_child_pid > 0) ::kill(static_cast<pid_t>(g_child_pid), SIGKILL);
}

std::string find_ip_binary() {
  for (const char* p : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"})
    if (::access(p, X_OK) == 0) return p;
  return {};
}

// fork + execv, stdout/stderr optionally silenced; returns the exit code (-1 on signal).
int run_tool(const std::vector<std::string>& argv, bool quiet) {
  const pid_t pid = ::fork();
  if (pid < 0) throw_errno("fork");
  if (pid == 0) {
    if (quiet) {
      const int devnull = ::open("/dev/null", O_WRONLY);
      if (devnull >= 0) {
        ::dup2(devnull, 1);
        ::dup2(devnull, 2);
      }
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void run_tool_checked(const std::vector<std::string>& argv) {
  if (run_tool(argv, false) != 0) {
    std::string cmd;
    for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
    throw std::runtime_error("'" + cmd + "' failed");
  }
}

// ---------------------------------------------------------------- child side

struct ChildConfig {
  const RunSpec* spec = nullptr;
  std::string rootfs;  // absolute
  std::vector<std::pair<DeviceRequest, DeviceSource>> devices;
  std::vector<InjectRequest> injects;
  std::optional<NetPlan> net;
  std::string ip_binary;
  int from_parent = -1;  // child reads go-signals here
  int to_parent = -1;    // child reports 'R' (ready) or 'E'/'U' + message; close-on-exec
  int parent_ends[2] = {-1, -1};
};

// A failure inside the child, reported to the parent through the pipe.
struct ChildFailure {
  char kind;  // 'E' run error, 'U' usage error
  std::string message;
};

[[noreturn]] void child_fail(const ChildConfig& c, char kind, const std::string& message) {
  const std::string msg = std::string(1, kind) + message;
  [[maybe_unused]] const ssize_t n = ::write(c.to_parent, msg.data(), msg.size());
  ::_exit(kind == 'U' ? 127 : 1);
}

void check(bool ok, const std::string& what) {
  if (!ok) throw SysError(what + ": " + errno_text(errno), errno);
}

// A bind mount of a file or a directory (with what is mounted below it).
// Read-only is a second, remounting call, which must repeat the flags the
// source mount already has (nosuid, nodev, noexec): the kernel refuses to
// drop a locked one, and silently dropping the others would loosen them.
void bind_path(const std::string& source, const std::string& target, bool read_only) {
  if (is_directory(source))
    make_dirs(target);
  else
    make_file_mount_point(target);
  check(::mount(source.c_str(), target.c_str(), nullptr, MS_BIND | MS_REC, nullptr) == 0,
        "cannot bind-mount " + source + " on " + target);
  if (!read_only) return;
  unsigned long keep = 0;
  struct statvfs vfs {};
  if (::statvfs(target.c_str(), &vfs) == 0) {
    if (vfs.f_flag & ST_NOSUID) keep |= MS_NOSUID;
    if (vfs.f_flag & ST_NODEV) keep |= MS_NODEV;
    if (vfs.f_flag & ST_NOEXEC) keep |= MS_NOEXEC;
    if (vfs.f_flag & ST_NOATIME) keep |= MS_NOATIME;
    if (vfs.f_flag & ST_NODIRATIME) keep |= MS_NODIRATIME;
    if (vfs.f_flag & ST_RELATIME) keep |= MS_RELATIME;
  }
  check(::mount(nullptr, target.c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY | keep,
                nullptr) == 0,
        "cannot make " + target + " read-only");
}

void bind_file(const std::string& source, const std::string& target, bool read_only) {
  bind_path(source, target, read_only);
}

void make_node(const std::string& path, char type, unsigned major, unsigned minor, unsigned mode) {
  const mode_t kind = type == 'b' ? S_IFBLK : S_IFCHR;
  check(::mknod(path.c_str(), kind | static_cast<mode_t>(mode), makedev(major, minor)) == 0,
        "mknod " + path);
}

void set_up_dev(const ChildConfig& c) {
  const std::string dev = c.rootfs + "/dev";
  make_dirs(dev);
  // A fresh tmpfs: the container's /dev holds only what mininer puts there,
  // and nothing is written into the rootfs on disk.
  check(::mount("tmpfs", dev.c_str(), "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=755,size=64k") == 0,
        "cannot mount tmpfs on " + dev);
  for (const auto& n : kStandardNodes) {
    const std::string path = dev + "/" + n.name;
    if (c.spec->userns)  // mknod needs CAP_MKNOD in the initial user namespace
      bind_file(std::string("/dev/") + n.name, path, false);
    else
      make_node(path, 'c', n.major, n.minor, 0666);
  }
  for (const char* l : {"fd", "stdin", "stdout", "stderr"}) {
    const std::string target = std::string(l) == "fd"
                                   ? "/proc/self/fd"
                                   : "/proc/self/fd/" + std::to_string(l[3] == 'i'   ? 0
                                                                       : l[3] == 'o' ? 1
                                                                                     : 2);
    check(::symlink(target.c_str(), (dev + "/" + l).c_str()) == 0, "symlink " + dev + "/" + l);
  }
  for (const auto& [req, src] : c.devices) {
    const std::string path = c.rootfs + req.container_path;
    make_dirs(dirname_of(path));
    ::unlink(path.c_str());  // a requested node replaces a standard one of the same name
    if (src.is_node && !c.spec->userns)
      make_node(path, src.rule.type, src.rule.major, src.rule.minor, src.mode);
    else
      bind_file(req.host_path, path, false);
  }
}

void set_up_net(const ChildConfig& c) {
  const NetPlan& n = *c.net;
  run_tool_checked({c.ip_binary, "link", "set", "lo", "up"});
  run_tool_checked({c.ip_binary, "link", "set", n.container_if_tmp, "name", "eth0"});
  run_tool_checked({c.ip_binary, "addr", "add", n.container_ip + "/30", "dev", "eth0"});
  run_tool_checked({c.ip_binary, "link", "set", "eth0", "up"});
  run_tool_checked({c.ip_binary, "route", "add", "default", "via", n.host_ip});
}

char wait_for_parent(const ChildConfig& c) {
  char go = 0;
  ssize_t n;
  while ((n = ::read(c.from_parent, &go, 1)) < 0 && errno == EINTR) {
  }
  if (n != 1) ::_exit(1);  // the parent is gone: never run unconfined
  return go;
}

void set_up_filesystem(const ChildConfig& c) {
  const RunSpec& spec = *c.spec;
  // Before any mount: make every mount private, recursively. Without this a
  // systemd host (where / is shared) would see the container's /proc and /dev
  // mounts propagate back and shadow its own.
  check(::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0, "cannot make / private");
  if (c.net) set_up_net(c);
  // pivot_root needs the new root to be a mount point: bind it onto itself,
  // or mount the fresh tmpfs of a tree assembled from host paths.
  try {
    if (spec.rootfs_tmpfs)
      check(::mount("tmpfs", c.rootfs.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=755,size=1m") ==
                0,
            "cannot mount a tmpfs rootfs on " + c.rootfs);
    else
      check(::mount(c.rootfs.c_str(), c.rootfs.c_str(), nullptr, MS_BIND | MS_REC, nullptr) == 0,
            "cannot bind-mount rootfs " + c.rootfs);
  } catch (const SysError& e) {
    if (spec.userns && e.err == EACCES)
      throw SysError(std::string(e.what()) + " (with --userns the container's root is host uid " +
                         std::to_string(kUsernsHostBase) +
                         ": every directory above the rootfs must be searchable by it)",
                     e.err);
    throw;
  }
  for (const auto& l : spec.links) {
    const std::string path = c.rootfs + l.container_path;
    make_dirs(dirname_of(path));
    check(::symlink(l.target.c_str(), path.c_str()) == 0, "symlink " + path);
  }
  // A fresh /proc, mounted by the child: it is in the new PID namespace now,
  // so `ps` lists only the container's processes.
  make_dirs(c.rootfs + "/proc");
  check(::mount("proc", (c.rootfs + "/proc").c_str(), "proc", MS_NOSUID | MS_NOEXEC | MS_NODEV,
                nullptr) == 0,
        "cannot mount /proc");
  if (spec.rootfs_tmpfs) make_dirs(c.rootfs + "/sys");
  if (is_directory(c.rootfs + "/sys")) {
    // sysfs belongs to the network namespace; a user namespace without its
    // own network namespace may not mount it (then /sys stays empty).
    const int rc = ::mount("sysfs", (c.rootfs + "/sys").c_str(), "sysfs",
                           MS_RDONLY | MS_NOSUID | MS_NOEXEC | MS_NODEV, nullptr);
    if (rc != 0 && !spec.userns) check(false, "cannot mount /sys");
  }
  set_up_dev(c);
  for (const auto& t : spec.tmpfs) {
    const std::string path = c.rootfs + t;
    make_dirs(path);
    check(::mount("tmpfs", path.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") == 0,
          "cannot mount a tmpfs on " + path);
  }
  for (const auto& b : spec.binds) bind_path(b.host_path, c.rootfs + b.container_path, b.read_only);
  for (const auto& inj : c.injects) bind_file(inj.host_path, c.rootfs + inj.container_path, true);

  check(::chdir(c.rootfs.c_str()) == 0, "chdir " + c.rootfs);
  if (spec.chroot_only) {
    // chroot only changes how "/" resolves for this process; the old root is
    // still mounted and reachable. A root process inside can escape: open a
    // directory fd, chroot into a subdirectory, then fchdir(fd) and walk ".."
    // upwards past the new root, and chroot(".") at the host's /.
    check(::chroot(".") == 0, "chroot " + c.rootfs);
  } else {
    // pivot_root(".", ".") stacks the old root on top of the new one; the
    // lazy unmount then removes it from this mount namespace entirely, so no
    // path and no "..", from any fd opened later, leads back to the host.
    if (::syscall(SYS_pivot_root, ".", ".") == 0) {
      check(::umount2(".", MNT_DETACH) == 0, "cannot detach the old root");
    } else if (errno == EINVAL &&
               root_is_initramfs(read_file("/proc/self/mountinfo").value_or(""))) {
      // The host runs from its initramfs (a qemu VM's init): the initial
      // rootfs can never be pivoted away. Do what switch_root and
      // `runc --no-pivot` do: move the new root over "/" and chroot into
      // it. The old root stays mounted underneath but no path reaches it.
      check(::mount(".", "/", nullptr, MS_MOVE, nullptr) == 0, "cannot move the rootfs over /");
      check(::chroot(".") == 0, "chroot after MS_MOVE");
      std::fprintf(stderr,
                   "mininer: note: / is the initramfs, which pivot_root cannot replace; "
                   "moved the rootfs over / and chroot'ed instead\n");
    } else {
      check(false, "pivot_root into " + c.rootfs);
    }
  }
  check(::chdir("/") == 0, "chdir /");
}

[[noreturn]] void child_main(const ChildConfig* arg) {
  const ChildConfig& c = *arg;
  ::close(c.parent_ends[0]);
  ::close(c.parent_ends[1]);
  // Die with the runtime: a `kill -9` of mininer must not leave the container
  // running (as PID 1 its death takes the whole PID namespace along). A parent
  // that died before this line is caught by wait_for_parent's EOF.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  ::umask(0);
  wait_for_parent(c);  // uid/gid maps and the veth are in place
  try {
    if (c.spec->userns) {
      // Still host root (kuid 0), which has no name in the new namespace:
      // become the namespace's uid/gid 0, i.e. host 100000.
      if (::setgroups(0, nullptr) != 0) throw_errno("setgroups in the user namespace");
      if (::setresgid(0, 0, 0) != 0) throw_errno("setresgid(0) in the user namespace");
      if (::setresuid(0, 0, 0) != 0) throw_errno("setresuid(0) in the user namespace");
    }
    if (::sethostname(c.spec->hostname.c_str(), c.spec->hostname.size()) != 0)
      throw_errno("sethostname");
    set_up_filesystem(c);
  } catch (const std::exception& e) {
    child_fail(c, 'E', e.what());
  }
  ::umask(022);
  // setresuid/setresgid above cleared the death signal; arm it again before
  // the last handshake, whose EOF covers a parent that died in between.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // Ready: the parent now joins this process to the cgroups, then says go.
  if (::write(c.to_parent, "R", 1) != 1) ::_exit(1);
  wait_for_parent(c);
  ::close(c.from_parent);

  ::clearenv();
  ::setenv("PATH", "/bin:/sbin:/usr/bin:/usr/sbin", 1);
  ::setenv("HOME", "/root", 1);
  ::setenv("HOSTNAME", c.spec->hostname.c_str(), 1);
  if (c.net) ::setenv("MININER_HOST_IP", c.net->host_ip.c_str(), 1);
  for (const auto& e : c.spec->env) {
    const auto eq = e.find('=');
    ::setenv(e.substr(0, eq).c_str(), e.substr(eq + 1).c_str(), 1);
  }
  std::vector<char*> argv;
  for (const auto& a : c.spec->argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  if (c.spec->confine) {
    // Last, after every mount and namespace of the setup: the filter refuses those.
    try {
      confine_process();
    } catch (const std::exception& e) {
      child_fail(c, 'E', e.what());
    }
  }
  ::execvp(argv[0], argv.data());
  const int error = errno;
  std::string why = errno_text(error);
  if (error == ENOENT && c.spec->argv[0].find('/') != std::string::npos &&
      ::access(argv[0], F_OK) == 0)
    why +=
        " (the file exists: its ELF interpreter, the dynamic loader, is missing from the rootfs; "
        "link it statically)";
  child_fail(c, 'U', "cannot run '" + c.spec->argv[0] + "' in the container: " + why);
}

// ---------------------------------------------------------------- parent side

// Deletes the host end of the veth pair on every exit path (it also vanishes
// by itself once the container's network namespace is gone).
struct VethGuard {
  std::string ip, host_if;
  ~VethGuard() {
    if (!host_if.empty() && path_exists("/sys/class/net/" + host_if))
      run_tool({ip, "link", "del", host_if}, true);
  }
};

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (::pipe2(fd, O_CLOEXEC) != 0) throw_errno("pipe2");
  }
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
  void close_end(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
};

// Reads one report from the child: 'R', or a failure, or EOF (exec succeeded).
std::optional<ChildFailure> read_report(int fd, bool* ready) {
  std::string msg;
  char buf[512];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) != 0) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    msg.append(buf, static_cast<std::size_t>(n));
    if (msg == "R") {
      *ready = true;
      return std::nullopt;
    }
  }
  *ready = false;
  if (msg.empty()) return std::nullopt;
  return ChildFailure{msg[0], msg.substr(1)};
}

std::string signal_name(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

std::string mib(std::uint64_t bytes) {
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

}  // namespace

// ---------------------------------------------------------------- public

DeviceRequest parse_device_request(const std::string& spec) {
  DeviceRequest r;
  const auto colon = spec.find(':');
  r.host_path = spec.substr(0, colon);
  r.container_path =
      colon == std::string::npos ? "/dev/" + basename_of(r.host_path) : spec.substr(colon + 1);
  if (r.host_path.empty()) throw gpulab::UsageError("--device '" + spec + "': empty host path");
  if (r.container_path.rfind("/dev/", 0) != 0 || r.container_path.size() <= 5 ||
      r.container_path.find("..") != std::string::npos)
    throw gpulab::UsageError("--device '" + spec +
                             "': the container path must be under /dev/ (e.g. /dev/fakegpu)");
  return r;
}

InjectRequest parse_inject_request(const std::string& spec) {
  InjectRequest r;
  const auto colon = spec.find(':');
  r.host_path = spec.substr(0, colon);
  if (colon == std::string::npos) {
    std::string name = basename_of(r.host_path);
    if (name.size() > 7 && name.ends_with("-static")) name.resize(name.size() - 7);
    r.container_path = "/usr/bin/" + name;
  } else {
    r.container_path = spec.substr(colon + 1);
  }
  if (r.host_path.empty()) throw gpulab::UsageError("--inject '" + spec + "': empty host path");
  if (r.container_path.empty() || r.container_path.front() != '/' ||
      r.container_path.find("..") != std::string::npos || r.container_path.rfind("/dev/", 0) == 0 ||
      r.container_path.rfind("/proc/", 0) == 0)
    throw gpulab::UsageError("--inject '" + spec +
                             "': the container path must be absolute, outside /dev and /proc");
  struct stat st {};
  if (::stat(r.host_path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    throw gpulab::UsageError("--inject '" + spec + "': " + r.host_path + " is not a regular file");
  return r;
}

DeviceSource inspect_device(const std::string& host_path) {
  struct stat st {};
  if (::stat(host_path.c_str(), &st) != 0)
    throw gpulab::UsageError("--device " + host_path + ": " + errno_text(errno) +
                             (host_path == "/dev/fakegpu"
                                  ? " (is the fakegpu module loaded, or fakegpud running?)"
                                  : ""));
  DeviceSource s;
  s.mode = st.st_mode & 07777;
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
    s.is_node = true;
    s.rule = DeviceRule{S_ISBLK(st.st_mode) ? 'b' : 'c', major(st.st_rdev), minor(st.st_rdev)};
  } else if (S_ISREG(st.st_mode)) {
    struct statfs fs {};
    constexpr long kFuseSuperMagic = 0x65735546;
    s.on_fuse =
        ::statfs(host_path.c_str(), &fs) == 0 && static_cast<long>(fs.f_type) == kFuseSuperMagic;
  } else {
    throw gpulab::UsageError("--device " + host_path + ": neither a device node nor a file");
  }
  return s;
}

void validate(const RunSpec& spec) {
  if (spec.argv.empty() || spec.argv[0].empty())
    throw gpulab::UsageError(
        "no command given: say what to run inside, e.g. 'mininer run /bin/sh'");
  if (spec.memory_mb && *spec.memory_mb == 0)
    throw gpulab::UsageError(
        "memory limit 0 MB: give a positive number of MB (e.g. run-limited 100 /bin/sh)");
  if (spec.memory_mb && *spec.memory_mb > (std::uint64_t{1} << 30))
    throw gpulab::UsageError("memory limit " + std::to_string(*spec.memory_mb) +
                             " MB is beyond 1 PiB");
  if (!is_directory(spec.rootfs))
    throw gpulab::UsageError("rootfs '" + spec.rootfs +
                             "' is not a directory: create one with 'mininer mkrootfs " +
                             spec.rootfs + "'");
  if (!path_exists(spec.rootfs + "/bin") && spec.argv[0].find('/') == std::string::npos)
    throw gpulab::UsageError("rootfs '" + spec.rootfs +
                             "' has no /bin: is it a root filesystem? ('mininer mkrootfs DIR')");
  if (spec.hostname.empty() || spec.hostname.size() > 64)
    throw gpulab::UsageError("hostname must be 1-64 characters");
  for (const auto& d : spec.devices) inspect_device(d.host_path);
  const auto inside = [](const std::string& path, const std::string& what) {
    if (path.empty() || path.front() != '/' || path.find("..") != std::string::npos || path == "/")
      throw gpulab::UsageError(what + " '" + path + "': the container path must be absolute, below /, without '..'");
  };
  for (const auto& b : spec.binds) {
    if (!path_exists(b.host_path))
      throw gpulab::UsageError("bind '" + b.host_path + "': " + errno_text(ENOENT));
    inside(b.container_path, "bind");
  }
  for (const auto& t : spec.tmpfs) inside(t, "tmpfs");
  for (const auto& l : spec.links) inside(l.container_path, "link");
  for (const auto& e : spec.env)
    if (e.find('=') == std::string::npos || e.front() == '=')
      throw gpulab::UsageError("environment entry '" + e + "': expected NAME=value");
}

bool root_is_initramfs(std::string_view mountinfo) {
  std::istringstream in{std::string(mountinfo)};
  for (std::string line; std::getline(in, line);) {
    // "<id> <parent> <maj:min> <root> <mount point> ... - <fstype> ..."
    std::istringstream words(line);
    std::string id, parent, dev, root, point;
    if (!(words >> id >> parent >> dev >> root >> point) || point != "/") continue;
    const auto dash = line.find(" - ");
    if (dash != std::string::npos && line.compare(dash + 3, 7, "rootfs ") == 0) return true;
  }
  return false;
}

int RunOutcome::exit_code() const {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

std::string describe_wait_status(int wait_status) {
  if (WIFEXITED(wait_status))
    return "exited with status " + std::to_string(WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    return "killed by signal " + std::to_string(sig) + " (" + signal_name(sig) + ")";
  }
  return "ended with wait status " + std::to_string(wait_status);
}

NetPlan plan_net(pid_t mininer_pid) {
  const unsigned idx = static_cast<unsigned>(mininer_pid) % 16384;
  const unsigned third = idx / 64, base = (idx % 64) * 4;
  NetPlan n;
  n.host_if = fmt::format("mnr{}h", mininer_pid);
  n.container_if_tmp = fmt::format("mnr{}c", mininer_pid);
  n.host_ip = fmt::format("10.200.{}.{}", third, base + 1);
  n.container_ip = fmt::format("10.200.{}.{}", third, base + 2);
  return n;
}

RunOutcome run_container(const RunSpec& spec) {
  validate(spec);
  if (::geteuid() != 0)
    throw gpulab::Unsupported(
        "mininer needs root for namespaces, mounts and cgroups: run it with sudo");

  ChildConfig cfg;
  cfg.spec = &spec;
  char real[PATH_MAX];
  if (!::realpath(spec.rootfs.c_str(), real))
    throw gpulab::UsageError("rootfs '" + spec.rootfs + "': " + errno_text(errno));
  cfg.rootfs = real;
  if (cfg.rootfs == "/") throw gpulab::UsageError("the rootfs cannot be the host's /");

  // Devices and what the devices cgroup will allow.
  std::vector<DeviceRule> allow{kDevNull};
  if (spec.allow_standard_devices)
    for (const auto& n : kStandardNodes)
      if (std::find(allow.begin(), allow.end(), DeviceRule{'c', n.major, n.minor}) == allow.end())
        allow.push_back(DeviceRule{'c', n.major, n.minor});
  for (const auto& d : spec.devices) {
    const DeviceSource src = inspect_device(d.host_path);
    cfg.devices.emplace_back(d, src);
    if (src.is_node) {
      if (std::find(allow.begin(), allow.end(), src.rule) == allow.end()) allow.push_back(src.rule);
      say(fmt::format("device {}: {} {}:{} -> {} ({})", d.host_path,
                      src.rule.type == 'b' ? "block" : "char", src.rule.major, src.rule.minor,
                      d.container_path, spec.userns ? "bind mount" : "mknod"));
    } else {
      say(
          fmt::format("device {}: a {}, not a device node -> {} (bind mount); the devices cgroup "
                      "does not govern it",
                      d.host_path, src.on_fuse ? "FUSE file" : "regular file", d.container_path));
    }
  }
  // The toolkit hook's other half: with a device comes the host's user-mode
  // side. Here that is the static fakegpu client, when it sits beside mininer.
  cfg.injects = spec.injects;
  if (!spec.devices.empty() && spec.inject_device_client) {
    const std::string client = self_dir() + "/fakegpu-client-static";
    const bool already =
        std::any_of(spec.injects.begin(), spec.injects.end(), [&](const InjectRequest& i) {
          return basename_of(i.host_path) == "fakegpu-client-static";
        });
    if (!already && ::access(client.c_str(), R_OK) == 0)
      cfg.injects.push_back(parse_inject_request(client));
  }
  for (const auto& inj : cfg.injects) {
    say(fmt::format("inject {} -> {} (read-only bind)", inj.host_path, inj.container_path));
    // The mount point is created here, by real root: with --userns the
    // child's root (host uid 100000) may not write into the rootfs. (A
    // tmpfs rootfs does not exist yet; the child makes it there.)
    if (spec.rootfs_tmpfs) continue;
    try {
      make_file_mount_point(cfg.rootfs + inj.container_path);
    } catch (const SysError& e) {
      throw gpulab::UsageError(std::string("--inject: ") + e.what());
    }
  }

  if (!spec.binds.empty() || !spec.tmpfs.empty()) {
    std::size_t read_only = 0;
    for (const auto& b : spec.binds) read_only += b.read_only ? 1 : 0;
    std::string fresh;
    for (const auto& t : spec.tmpfs) fresh += " " + t;
    say(fmt::format("mounts: {} host paths bound ({} read-only, {} writable){}{}", spec.binds.size(),
                    read_only, spec.binds.size() - read_only,
                    fresh.empty() ? "" : ", fresh tmpfs on", fresh));
  }

  if (spec.net) {
    cfg.ip_binary = find_ip_binary();
    if (cfg.ip_binary.empty())
      throw gpulab::Unsupported("--net needs the 'ip' tool (apt-get install iproute2)");
    cfg.net = plan_net(::getpid());
  }

  // cgroups, created (and limited) before the child exists.
  std::optional<ContainerCgroups> cgroups;
  if (spec.memory_mb || spec.device_cgroup) {
    const CgroupMounts mounts = parse_mountinfo(read_file("/proc/self/mountinfo").value_or(""));
    const std::string unified_ctl =
        mounts.unified.empty() ? ""
                               : read_file(mounts.unified + "/cgroup.controllers").value_or("");
    const CgroupPlan plan = plan_cgroups(mounts, unified_ctl, spec.cgroup,
                                         spec.memory_mb.has_value(), spec.device_cgroup);
    // A mininer killed with SIGKILL could not remove its groups: this run does.
    const StaleCgroups stale = remove_stale_cgroups();
    // Worded like the usual "removed cgroup" line, which README blocks filter out.
    for (const auto& p : stale.removed) say("removed cgroup " + p + " (stale: its mininer was killed)");
    for (const auto& f : stale.failures) say("warning: stale cgroup: " + f);
    try {
      cgroups.emplace(plan, cgroup_name_for(::getpid()));
      for (const auto& line : cgroups->describe()) say("cgroup " + line);
      if (spec.memory_mb) {
        cgroups->set_memory_limit(*spec.memory_mb * 1024 * 1024);
        say(fmt::format("memory limit {} MiB ({} {}), swap off", *spec.memory_mb,
                        plan.memory == CgroupVersion::kV2 ? "memory.max" : "memory.limit_in_bytes",
                        to_string(*plan.memory)));
      }
      if (spec.device_cgroup) {
        cgroups->restrict_devices(allow);
        std::string list;
        for (const auto& r : allow) list += (list.empty() ? "" : ", ") + r.text();
        say(fmt::format("devices allowed: {}; every other device refused ({})", list,
                        plan.devices == CgroupVersion::kV2 ? "eBPF program, cgroup v2"
                                                           : "devices.allow, cgroup v1"));
      }
    } catch (const SysError& e) {
      throw gpulab::RunError(std::string("cgroup setup failed: ") + e.what());
    }
  }

  Pipe to_child, to_parent;
  cfg.from_parent = to_child.fd[0];
  cfg.to_parent = to_parent.fd[1];
  cfg.parent_ends[0] = to_child.fd[1];
  cfg.parent_ends[1] = to_parent.fd[0];
  // Both pipes are close-on-exec: EOF on to_parent means the command started.
  int flags = CLONE_NEWUTS | CLONE_NEWPID | CLONE_NEWNS | SIGCHLD;
  if (spec.net) flags |= CLONE_NEWNET;
  if (spec.userns) flags |= CLONE_NEWUSER;
  if (spec.ipc) flags |= CLONE_NEWIPC;

  struct sigaction sa {};
  sa.sa_handler = forward_signal;
  sa.sa_flags = SA_RESTART;
  ::sigemptyset(&sa.sa_mask);
  struct sigaction old_int {
  }, old_term{}, old_hup{};
  ::sigaction(SIGINT, &sa, &old_int);
  ::sigaction(SIGTERM, &sa, &old_term);
  ::sigaction(SIGHUP, &sa, &old_hup);
  g_signal = 0;

  // The raw system call with no new stack: the child continues on a copy of
  // this stack, like fork(2), but in new namespaces. (glibc's clone() wants a
  // separate stack, which also confuses AddressSanitizer's stack bookkeeping.)
  const pid_t child = static_cast<pid_t>(
      ::syscall(SYS_clone, static_cast<unsigned long>(flags), nullptr, nullptr, nullptr, 0UL));
  if (child == 0) {
    child_main(&cfg);
    ::_exit(1);
  }
  if (child < 0) {
    const int error = errno;
    throw gpulab::RunError("clone(" + std::string(spec.userns ? "CLONE_NEWUSER|" : "") +
                           (spec.net ? "CLONE_NEWNET|" : "") + (spec.ipc ? "CLONE_NEWIPC|" : "") +
                           "CLONE_NEWUTS|CLONE_NEWPID|CLONE_NEWNS): " + errno_text(error));
  }
  g_child_pid = child;
  to_child.close_end(0);
  to_parent.close_end(1);

  std::optional<ChildFailure> failure;
  VethGuard veth;
  bool started = false;
  try {
    if (spec.userns) {
      const std::string map = fmt::format("0 {} {}", kUsernsHostBase, kUsernsSize);
      write_file(fmt::format("/proc/{}/uid_map", child), map);
      write_file(fmt::format("/proc/{}/gid_map", child), map);
      say(fmt::format("user namespace: container uid/gid 0-{} = host {}-{}", kUsernsSize - 1,
                      kUsernsHostBase, kUsernsHostBase + kUsernsSize - 1));
    }
    if (cfg.net) {
      const NetPlan& n = *cfg.net;
      veth = VethGuard{cfg.ip_binary, n.host_if};
      run_tool_checked({cfg.ip_binary, "link", "add", n.host_if, "type", "veth", "peer", "name",
                        n.container_if_tmp});
      run_tool_checked(
          {cfg.ip_binary, "link", "set", n.container_if_tmp, "netns", std::to_string(child)});
      run_tool_checked({cfg.ip_binary, "addr", "add", n.host_ip + "/30", "dev", n.host_if});
      run_tool_checked({cfg.ip_binary, "link", "set", n.host_if, "up"});
      say(fmt::format("net: host {} {}/30 <-> container eth0 {}/30", n.host_if, n.host_ip,
                      n.container_ip));
    }
    if (::write(to_child.fd[1], "1", 1) != 1) throw_errno("signalling the container");
    bool ready = false;
    failure = read_report(to_parent.fd[0], &ready);
    if (ready) {
      // The handshake: the child is blocked until it is in every group, so
      // not one instruction of the command runs outside its limits.
      if (cgroups) cgroups->add_process(child);
      say(fmt::format("container {}: pid {} on the host, pid 1 inside, {} {}", spec.hostname, child,
                      spec.chroot_only ? "chroot into" : "pivot_root into", cfg.rootfs));
      if (::write(to_child.fd[1], "G", 1) != 1) throw_errno("signalling the container");
      failure = read_report(to_parent.fd[0], &ready);
      started = !failure;
    } else if (!failure) {
      failure = ChildFailure{'E', "the container died during setup"};
    }
  } catch (const std::exception& e) {
    ::kill(child, SIGKILL);
    failure = ChildFailure{'E', e.what()};
  }
  to_child.close_end(1);

  RunOutcome out;
  while (::waitpid(child, &out.wait_status, 0) < 0 && errno == EINTR) {
  }
  g_child_pid = 0;
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  ::sigaction(SIGHUP, &old_hup, nullptr);

  if (g_signal != 0)
    say(fmt::format("received {}: the container was killed", signal_name(g_signal)));
  if (started || !failure) say("container " + describe_wait_status(out.wait_status));
  if (cgroups) {
    out.oom_kills = cgroups->oom_kills();
    out.peak_bytes = cgroups->memory_peak_bytes();
    if (spec.memory_mb)
      say(fmt::format("memory: oom_kill {}, peak {} of {} MiB",
                      out.oom_kills ? std::to_string(*out.oom_kills) : "unknown",
                      out.peak_bytes ? mib(*out.peak_bytes) : "unknown", *spec.memory_mb));
    const auto paths = cgroups->paths();
    const auto failures = cgroups->remove_all();
    for (const auto& f : failures) say("warning: " + f);
    for (const auto& p : paths)
      if (!path_exists(p)) {
        out.cgroups_removed.push_back(p);
        say("removed cgroup " + p);
      }
  }
  if (failure) {
    if (failure->kind == 'U') throw gpulab::UsageError(failure->message);
    throw gpulab::RunError(failure->message);
  }
  return out;
}

}  // namespace mininer
