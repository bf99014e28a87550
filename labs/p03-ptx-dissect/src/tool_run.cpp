#include "ptx_dissect/tool_run.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <gpulab/errors.hpp>

extern char** environ;

namespace ptx_dissect {

ToolRun run_tool(const std::vector<std::string>& argv) {
  if (argv.empty()) throw gpulab::RunError("run_tool: no program");
  std::array<int, 2> pipe_fds{};
  if (pipe2(pipe_fds.data(), O_CLOEXEC) != 0)
    throw gpulab::RunError(fmt::format("cannot run {}: pipe: {}", argv[0], std::strerror(errno)));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int err = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (err != 0) {
    close(pipe_fds[0]);
    throw gpulab::RunError(fmt::format("cannot run {}: {}", argv[0], std::strerror(err)));
  }
  ToolRun run;
  std::array<char, 65536> buf{};
  bool too_long = false;
  for (;;) {
    const ssize_t got = read(pipe_fds[0], buf.data(), buf.size());
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    // Keep draining after the cap so the tool is not left blocked on a full pipe.
    if (run.output.size() + static_cast<std::size_t>(got) > kMaxToolOutputBytes) too_long = true;
    if (!too_long) run.output.append(buf.data(), static_cast<std::size_t>(got));
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (too_long)
    throw gpulab::RunError(
        fmt::format("{} printed more than {} MiB", argv[0], kMaxToolOutputBytes >> 20));
  return run;
}

}  // namespace ptx_dissect
