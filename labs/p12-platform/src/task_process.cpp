#include "platform/task_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <thread>

#include "gpulab/errors.hpp"

extern char** environ;

namespace platform {
namespace {

ChildExit decode(int status) {
  ChildExit e;
  if (WIFEXITED(status)) e.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) e.signal = WTERMSIG(status);
  return e;
}

}  // namespace

TaskProcess::TaskProcess(const std::filesystem::path& program, const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env, const std::filesystem::path& log_file) {
  const int log_fd = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) throw gpulab::RunError(fmt::format("cannot create '{}': {}", log_file.string(), std::strerror(errno)));
  // Everything the child needs is built before fork: after it, only
  // async-signal-safe calls.
  std::vector<std::string> args{program.string()};
  args.insert(args.end(), argv.begin(), argv.end());
  std::vector<char*> cargv;
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::vector<std::string> envs;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view kv(*e);
    const auto name = kv.substr(0, kv.find('='));
    if (env.count(std::string(name)) == 0) envs.emplace_back(kv);
  }
  for (const auto& [k, v] : env) envs.push_back(k + "=" + v);
  std::vector<char*> cenv;
  for (auto& e : envs) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  const pid_t parent = ::getpid();

  pid_ = ::fork();
  if (pid_ < 0) {
    ::close(log_fd);
    throw gpulab::RunError(fmt::format("fork: {}", std::strerror(errno)));
  }
  if (pid_ == 0) {
    // The agent's daemon blocks SIGTERM and SIGINT in every thread (one
    // thread sigwaits for them); a task must not inherit that, or stop()'s
    // SIGTERM would never reach it (nor the container runtime's handler).
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the agent died before prctl took effect
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    ::execve(cargv[0], cargv.data(), cenv.data());
    const char msg[] = "gpulab-agent: cannot exec the task program\n";
    [[maybe_unused]] auto n = ::write(STDERR_FILENO, msg, sizeof msg - 1);
    ::_exit(127);
  }
  ::setpgid(pid_, pid_);  // also here: no race with a kill before the child ran setpgid
  ::close(log_fd);
}

TaskProcess::~TaskProcess() {
  if (!exit_) stop(std::chrono::milliseconds(0));
}

std::optional<ChildExit> TaskProcess::poll() {
  if (exit_) return exit_;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) exit_ = decode(status);
  return exit_;
}

ChildExit TaskProcess::stop(std::chrono::milliseconds grace) {
  if (poll()) return *exit_;
  ::kill(-pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    if (poll()) return *exit_;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(-pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  exit_ = decode(status);
  return *exit_;
}

std::string read_tail(const std::filesystem::path& file, std::size_t max_bytes) {
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) return {};
  const auto size = static_cast<std::size_t>(in.tellg());
  const std::size_t from = size > max_bytes ? size - max_bytes : 0;
  in.seekg(static_cast<std::streamoff>(from));
  std::string out(size - from, '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  out.resize(static_cast<std::size_t>(in.gcount()));
  return out;
}

gpulab::Json done_line(const std::string& log) {
  std::size_t end = log.size();
  while (end > 0) {
    const auto start = log.rfind('\n', end - 1);
    const std::size_t from = start == std::string::npos ? 0 : start + 1;
    const std::string_view line(log.data() + from, end - from);
    if (line.find("\"event\":\"done\"") != std::string_view::npos) {
      try {
        return gpulab::Json::parse(line);
      } catch (const gpulab::Json::exception&) {
        return gpulab::Json();
      }
    }
    if (start == std::string::npos) break;
    end = start;
  }
  return gpulab::Json();
}

}  // namespace platform
