// One task as a child process of the agent: its own process group (so a
// cancel reaches everything it started), stdout and stderr into one log file,
// and PR_SET_PDEATHSIG so it dies with its agent — a task must never outlive
// the agent that would report it, or a rescheduled copy would run beside it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpulab/json.hpp"

namespace platform {

struct ChildExit {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
};

class TaskProcess {
 public:
  // Starts `program argv...` with `env` added to the agent's environment.
  // Throws gpulab::RunError when fork/exec or the log file fails.
  TaskProcess(const std::filesystem::path& program, const std::vector<std::string>& argv,
              const std::map<std::string, std::string>& env, const std::filesystem::path& log_file);
  ~TaskProcess();
  TaskProcess(const TaskProcess&) = delete;
  TaskProcess& operator=(const TaskProcess&) = delete;

  [[nodiscard]] pid_t pid() const { return pid_; }
  // Non-blocking: the exit once the child has ended.
  std::optional<ChildExit> poll();
  // SIGTERM to the group, SIGKILL after `grace`; returns once reaped.
  ChildExit stop(std::chrono::milliseconds grace);

 private:
  pid_t pid_ = -1;
  std::optional<ChildExit> exit_;
};

// The last `max_bytes` of a file (logs sent to the control plane).
std::string read_tail(const std::filesystem::path& file, std::size_t max_bytes);

// The "done" line a task prints last (gpulab-task --json) in `log`, or null:
// a task's result, whether its agent or Slurm ran it.
gpulab::Json done_line(const std::string& log);

}  // namespace platform
