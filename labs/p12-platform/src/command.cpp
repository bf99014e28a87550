#include "platform/command.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "gpulab/errors.hpp"
#include "gpulab/text.hpp"

namespace platform {
namespace {

constexpr std::size_t kMaxStreamBytes = 1 << 20;

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (::pipe2(fd, O_CLOEXEC) != 0)
      throw gpulab::RunError(fmt::format("pipe: {}", std::strerror(errno)));
  }
  ~Pipe() {
    for (int f : fd) {
      if (f >= 0) ::close(f);
    }
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  void close_end(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
};

}  // namespace

CommandResult run_command(const std::vector<std::string>& argv, const std::string& stdin_text,
                          std::chrono::milliseconds timeout,
                          const std::map<std::string, std::string>& env) {
  if (argv.empty()) throw gpulab::RunError("run_command: no program");
  Pipe in, out, err;
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw gpulab::RunError(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {
    ::dup2(in.fd[0], 0);
    ::dup2(out.fd[1], 1);
    ::dup2(err.fd[1], 2);
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    ::execvp(args[0], args.data());
    const std::string msg = fmt::format("{}: {}\n", argv[0], std::strerror(errno));
    [[maybe_unused]] const auto n = ::write(2, msg.data(), msg.size());
    ::_exit(127);
  }
  in.close_end(0);
  out.close_end(1);
  err.close_end(1);
  // The command's input is small (a batch script): a pipe buffer holds it, and
  // a command that does not read it gets EPIPE, which SIGPIPE must not turn
  // into our death.
  ::signal(SIGPIPE, SIG_IGN);
  if (!stdin_text.empty()) {
    [[maybe_unused]] const auto n = ::write(in.fd[1], stdin_text.data(), stdin_text.size());
  }
  in.close_end(1);

  CommandResult r;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  pollfd fds[2] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_streams = 2;
  while (open_streams > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    const int n = ::poll(fds, 2, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[4096];
      const ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        if (sinks[i]->size() < kMaxStreamBytes)
          sinks[i]->append(buf, static_cast<std::size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open_streams;
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string first_error_line(const CommandResult& r) {
  for (const std::string* s : {&r.err, &r.out}) {
    for (const auto& line : gpulab::split_fields(*s, '\n')) {
      const auto t = gpulab::trim(line);
      if (!t.empty()) return std::string(t);
    }
  }
  if (r.timed_out) return "no answer before the timeout";
  return r.exit_code < 0 ? "killed by a signal" : fmt::format("exit status {}", r.exit_code);
}

bool find_on_path(const std::string& program) {
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  for (const auto& dir : gpulab::split_fields(path ? path : "/usr/bin:/bin", ':')) {
    if (!dir.empty() && ::access((std::string(dir) + "/" + program).c_str(), X_OK) == 0)
      return true;
  }
  return false;
}

}  // namespace platform
