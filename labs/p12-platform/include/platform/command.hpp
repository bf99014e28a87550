// Running a short-lived command to completion and keeping what it printed:
// the control plane's calls to sbatch, scontrol and scancel. Not for tasks
// (task_process.hpp: long-lived, logged to a file, killed with the agent).
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace platform {

struct CommandResult {
  int exit_code = -1;  // -1 when killed by a signal (the timeout's SIGKILL included)
  bool timed_out = false;
  std::string out;
  std::string err;
};

// Runs argv[0] (found on PATH) with `stdin_text` on its standard input and
// `env` added to this process's environment; waits at most `timeout`, then
// SIGKILLs it. Output beyond 1 MiB per stream is dropped. Throws
// gpulab::RunError only when it cannot start (fork or pipe failed); a program
// that is missing is exit code 127 with the reason in `err`.
CommandResult run_command(const std::vector<std::string>& argv, const std::string& stdin_text,
                          std::chrono::milliseconds timeout,
                          const std::map<std::string, std::string>& env = {});

// The first line of the text the command printed on stderr (else stdout), or
// "exit status N" when it printed nothing: what an error message quotes.
std::string first_error_line(const CommandResult& r);

// Whether `program` names an executable file, directly or on PATH.
bool find_on_path(const std::string& program);

}  // namespace platform
