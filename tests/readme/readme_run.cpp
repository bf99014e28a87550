#include "readme_run.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace readme {

RunResult run_command(const std::string& command, const std::string& bin, const std::string& cwd) {
  char err_path[] = "/tmp/gpulab-readme-XXXXXX";
  const int err_fd = mkstemp(err_path);
  if (err_fd < 0) throw std::runtime_error("cannot create a temporary file");
  int out_pipe[2];
  if (pipe(out_pipe) != 0) {
    close(err_fd);
    std::remove(err_path);
    throw std::runtime_error("cannot create a pipe");
  }
  const std::string path =
      bin + ":" + (std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("cannot fork to run: " + command);
  if (pid == 0) {
    const int in = open("/dev/null", O_RDONLY);
    if (in < 0 || dup2(in, 0) < 0 || dup2(out_pipe[1], 1) < 0 || dup2(err_fd, 2) < 0) _exit(126);
    close(out_pipe[0]);
    close(out_pipe[1]);
    if (chdir(cwd.c_str()) != 0) {
      fmt::print(stderr, "gpulab-readme-check: cannot cd to {}\n", cwd);
      _exit(126);
    }
    setenv("PATH", path.c_str(), 1);
    execl("/bin/bash", "bash", "-o", "pipefail", "-c", command.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_fd);
  RunResult r;
  char buf[4096];
  for (ssize_t n; (n = read(out_pipe[0], buf, sizeof buf)) != 0;) {
    if (n < 0) break;
    r.out.append(buf, static_cast<std::size_t>(n));
  }
  close(out_pipe[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream in(err_path);
  std::stringstream ss;
  ss << in.rdbuf();
  r.err = ss.str();
  std::remove(err_path);
  return r;
}

Verdict judge(const Block& block, const RunResult& r, const Options& options) {
  if (r.exit_code == 127 && block.command.rfind("bench-", 0) == 0 && !options.bench_built)
    return {Outcome::kSkip, "benchmarks are not built in this preset"};
  if (r.exit_code == 77 && block.expected_exit != 77) {
    const auto err = split_lines(r.err);
    return {Outcome::kSkip, err.empty() ? "exit 77, nothing on stderr" : err.back()};
  }
  if (r.exit_code != block.expected_exit)
    return {Outcome::kFail, fmt::format("exit code {} (README expects {}); stderr: {}", r.exit_code,
                                        block.expected_exit, r.err.empty() ? "(empty)\n" : r.err)};
  const auto why = compare(block, shown_output(block, r.out, r.err));
  if (!why.empty()) return {Outcome::kFail, why};
  return {Outcome::kPass, ""};
}

int readme_exit_code(const std::vector<Verdict>& verdicts) {
  const auto count = [&](Outcome o) {
    return std::count_if(verdicts.begin(), verdicts.end(),
                         [o](const Verdict& v) { return v.outcome == o; });
  };
  if (count(Outcome::kFail) > 0) return 1;
  if (!verdicts.empty() && count(Outcome::kSkip) == static_cast<long>(verdicts.size())) return 77;
  return 0;
}

}  // namespace readme
