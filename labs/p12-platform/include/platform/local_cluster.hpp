// A platform on this machine as real processes: `gpulabd control` and any
// number of `gpulabd agent`s, each started with fork/exec, found through the
// URL it writes to its ready file, and killable with SIGKILL — what the demo
// and the failure tests drive. By default every daemon is on loopback; a
// DaemonHost puts one elsewhere (another network namespace, say).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace platform {

struct Daemon {
  pid_t pid = -1;
  std::string url;
  std::filesystem::path log;  // its stderr
};

// Where a daemon runs. `prefix` is a command that runs the daemon, e.g.
// {"ip", "netns", "exec", "gl-42-a"} (it must exec the daemon in the same
// process, so the pid stays the daemon's for kill9); `host` is the address it
// listens on, and so the one agents and ranks are reached at.
struct DaemonHost {
  std::vector<std::string> prefix;
  std::string host = "127.0.0.1";
};

class LocalCluster {
 public:
  // `bin_dir` holds gpulabd and gpulab-task; `dir` the state and logs.
  LocalCluster(std::filesystem::path bin_dir, std::filesystem::path dir);
  ~LocalCluster();  // SIGTERM to everything still running, then SIGKILL
  LocalCluster(const LocalCluster&) = delete;
  LocalCluster& operator=(const LocalCluster&) = delete;

  // Starts the control plane on `where.host` (a free port, the same one again
  // after a restart); extra flags appended. Waits until it serves.
  const Daemon& start_control(const std::vector<std::string>& extra = {}, const DaemonHost& where = {});
  // Starts an agent listening on `where.host` (its ranks listen there too).
  const Daemon& start_agent(const std::string& name, const std::string& devices,
                            const std::vector<std::string>& extra = {}, const DaemonHost& where = {});
  // SIGKILL, reaped; the daemon's entry stays for restarts.
  void kill9(const std::string& who);  // "control" or an agent name
  void terminate(const std::string& who);
  [[nodiscard]] const Daemon& daemon(const std::string& who) const;
  [[nodiscard]] std::string control_url() const { return daemon("control").url; }
  [[nodiscard]] const std::filesystem::path& state_dir() const { return state_; }

 private:
  const Daemon& spawn(const std::string& who, std::vector<std::string> args, const DaemonHost& where);
  std::filesystem::path bin_;
  std::filesystem::path dir_;
  std::filesystem::path state_;
  int control_port_ = 0;
  std::map<std::string, Daemon> daemons_;
};

// Polls `predicate` every 20 ms until it holds or `timeout` passes.
bool wait_until(const std::function<bool()>& predicate, std::chrono::milliseconds timeout);

}  // namespace platform
