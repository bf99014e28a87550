// Hosts on a private switch, for root tests whose traffic must cross real
// interfaces. Each host is a network namespace `gl-<pid>-<name>` holding `lo`
// and one veth, `eth0`, cabled to a bridge `br0` in a namespace of its own,
// `gl-<pid>-sw`. Every interface is created inside these namespaces (`ip -n`,
// the veth's peer straight into its host): nothing is added to, addressed in
// or routed from the machine's own namespace, so no test packet can leave the
// switch. Addresses are 172.31.<pid % 250 + 1>.<10 + i>/24, on eth0 only.
//
// Namespaces outlive a crashed test (they are mounts under /run/netns), so
// the constructor first deletes any `gl-<pid>-*` set whose pid is dead (or is
// this process's: one NetnsHosts at a time per process).
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpulab_test {

struct ShellRun {
  int exit_code = -1;
  std::string out;  // stdout and stderr
};

inline ShellRun shell(const std::string& command) {
  ShellRun r;
  if (FILE* p = popen((command + " 2>&1").c_str(), "r")) {
    char buf[4096];
    for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
    const int status = pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  return r;
}

// Runs `command`; throws with its output when it fails.
inline std::string shell_or_throw(const std::string& command) {
  auto r = shell(command);
  if (r.exit_code != 0) throw std::runtime_error(command + ": exit " + std::to_string(r.exit_code) + ": " + r.out);
  return r.out;
}

inline bool ip_installed() { return shell("command -v ip").exit_code == 0; }

// Deletes the namespaces of earlier runs that died before their teardown.
inline void remove_stale_netns() {
  const std::filesystem::path dir = "/run/netns";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return;
  const std::regex ours(R"(gl-([0-9]+)-[a-z0-9]+)");
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    std::smatch m;
    if (!std::regex_match(name, m, ours)) continue;
    const long pid = std::stol(m[1].str());
    const bool owner_runs = ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH;
    if (pid != ::getpid() && owner_runs) continue;
    shell("ip netns del " + name);
  }
}

class NetnsHosts {
 public:
  static constexpr const char* kLink = "eth0";  // every host's one interface

  explicit NetnsHosts(const std::vector<std::string>& names) : prefix_("gl-" + std::to_string(::getpid()) + "-") {
    remove_stale_netns();
    const std::string subnet = "172.31." + std::to_string(::getpid() % 250 + 1) + ".";
    try {
      const std::string sw = add_netns("sw");
      shell_or_throw("ip -n " + sw + " link set lo up");
      shell_or_throw("ip -n " + sw + " link add br0 type bridge");
      shell_or_throw("ip -n " + sw + " link set br0 up");
      int i = 0;
      for (const auto& name : names) {
        const std::string ns = add_netns(name);
        const std::string port = "port-" + name;
        ips_[name] = subnet + std::to_string(10 + i++);
        shell_or_throw("ip -n " + sw + " link add " + port + " type veth peer name " + kLink + " netns " + ns);
        shell_or_throw("ip -n " + sw + " link set " + port + " master br0 up");
        shell_or_throw("ip -n " + ns + " link set lo up");
        shell_or_throw("ip -n " + ns + " addr add " + ips_[name] + "/24 dev " + kLink);
        shell_or_throw("ip -n " + ns + " link set " + kLink + " up");
      }
    } catch (...) {
      remove_all();
      throw;
    }
  }
  // Deleting a namespace deletes its veth end, and with it the pair.
  ~NetnsHosts() { remove_all(); }
  NetnsHosts(const NetnsHosts&) = delete;
  NetnsHosts& operator=(const NetnsHosts&) = delete;

  [[nodiscard]] std::string netns(const std::string& name) const { return prefix_ + name; }
  [[nodiscard]] const std::string& ip(const std::string& name) const { return ips_.at(name); }
  // A command prefix that runs a program on host `name`.
  [[nodiscard]] std::vector<std::string> exec_prefix(const std::string& name) const {
    return {"ip", "netns", "exec", netns(name)};
  }
  // /sys/class/net/eth0/statistics/<counter> as seen inside the host (`ip netns
  // exec` mounts that namespace's sysfs; the machine's /sys shows its own).
  [[nodiscard]] unsigned long long counter(const std::string& name, const std::string& counter) const {
    return std::stoull(shell_or_throw("ip netns exec " + netns(name) + " cat /sys/class/net/" + kLink +
                                      "/statistics/" + counter));
  }
  void set_link(const std::string& name, bool up) const {
    shell_or_throw("ip -n " + netns(name) + " link set " + kLink + (up ? " up" : " down"));
  }

 private:
  std::string add_netns(const std::string& name) {
    shell_or_throw("ip netns add " + netns(name));
    created_.push_back(netns(name));
    return netns(name);
  }
  void remove_all() {
    for (auto it = created_.rbegin(); it != created_.rend(); ++it) shell("ip netns del " + *it);
    created_.clear();
  }

  std::string prefix_;
  std::vector<std::string> created_;
  std::map<std::string, std::string> ips_;
};

}  // namespace gpulab_test
