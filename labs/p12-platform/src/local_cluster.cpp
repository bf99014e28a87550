#include "platform/local_cluster.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <thread>

#include "gpulab/errors.hpp"
#include "gpulab/file.hpp"

namespace platform {

bool wait_until(const std::function<bool()>& predicate, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (predicate()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

LocalCluster::LocalCluster(std::filesystem::path bin_dir, std::filesystem::path dir)
    : bin_(std::move(bin_dir)), dir_(std::move(dir)), state_(dir_ / "state") {
  std::filesystem::create_directories(state_);
}

LocalCluster::~LocalCluster() {
  for (auto& [who, d] : daemons_) {
    if (d.pid > 0) ::kill(d.pid, SIGTERM);
  }
  for (auto& [who, d] : daemons_) {
    if (d.pid <= 0) continue;
    const bool ended = wait_until([&] { return ::waitpid(d.pid, nullptr, WNOHANG) == d.pid; },
                                  std::chrono::milliseconds(3000));
    if (!ended) {
      ::kill(d.pid, SIGKILL);
      ::waitpid(d.pid, nullptr, 0);
    }
    d.pid = -1;
  }
}

const Daemon& LocalCluster::spawn(const std::string& who, std::vector<std::string> args, const DaemonHost& where) {
  Daemon d;
  d.log = dir_ / (who + ".log");
  const auto ready = dir_ / (who + ".ready");
  std::filesystem::remove(ready);
  args.emplace_back("--ready-file");
  args.push_back(ready.string());
  const auto program = bin_ / "gpulabd";
  std::vector<std::string> all = where.prefix;
  all.push_back(program.string());
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int log_fd = ::open(d.log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) throw gpulab::RunError(fmt::format("cannot create '{}': {}", d.log.string(), std::strerror(errno)));
  const pid_t parent = ::getpid();
  d.pid = ::fork();
  if (d.pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the demo or the test
    if (::getppid() != parent) ::_exit(127);
    ::dup2(log_fd, STDERR_FILENO);
    ::dup2(log_fd, STDOUT_FILENO);
    ::execvp(argv[0], argv.data());  // a prefix ("ip") is found on PATH
    ::_exit(127);
  }
  ::close(log_fd);
  if (d.pid < 0) throw gpulab::RunError(fmt::format("fork: {}", std::strerror(errno)));
  const bool up = wait_until(
      [&] {
        if (::waitpid(d.pid, nullptr, WNOHANG) == d.pid) {
          d.pid = -1;
          return true;
        }
        return std::filesystem::exists(ready);
      },
      std::chrono::milliseconds(60'000));
  if (!up || d.pid < 0) {
    auto log = gpulab::read_text_file(d.log.string(), 1 << 16);
    std::string last = log.ok() ? log.value() : "";
    while (!last.empty() && last.back() == '\n') last.pop_back();
    last = last.substr(last.rfind('\n') == std::string::npos ? 0 : last.rfind('\n') + 1);
    if (d.pid > 0) {
      ::kill(d.pid, SIGKILL);
      ::waitpid(d.pid, nullptr, 0);
    }
    throw gpulab::RunError(fmt::format("gpulabd {} did not start: {}", who, last.empty() ? "(no output)" : last));
  }
  auto url = gpulab::read_text_file(ready.string(), 4096);
  d.url = url.ok() ? url.value() : "";
  while (!d.url.empty() && (d.url.back() == '\n')) d.url.pop_back();
  daemons_[who] = d;
  return daemons_[who];
}

const Daemon& LocalCluster::start_control(const std::vector<std::string>& extra, const DaemonHost& where) {
  const std::string listen = fmt::format("{}:{}", where.host, control_port_);
  std::vector<std::string> args{"control", "--state", state_.string(), "--listen", listen};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto& d = spawn("control", args, where);
  if (control_port_ == 0) control_port_ = std::stoi(d.url.substr(d.url.rfind(':') + 1));
  return d;
}

const Daemon& LocalCluster::start_agent(const std::string& name, const std::string& devices,
                                        const std::vector<std::string>& extra, const DaemonHost& where) {
  std::vector<std::string> args{"agent",  "--name", name, "--devices", devices, "--control", control_url(),
                                "--work", (dir_ / ("agent-" + name)).string(), "--listen", where.host + ":0"};
  args.insert(args.end(), extra.begin(), extra.end());
  return spawn(name, args, where);
}

void LocalCluster::kill9(const std::string& who) {
  auto& d = daemons_.at(who);
  if (d.pid <= 0) return;
  ::kill(d.pid, SIGKILL);
  ::waitpid(d.pid, nullptr, 0);
  d.pid = -1;
}

void LocalCluster::terminate(const std::string& who) {
  auto& d = daemons_.at(who);
  if (d.pid <= 0) return;
  ::kill(d.pid, SIGTERM);
  ::waitpid(d.pid, nullptr, 0);
  d.pid = -1;
}

const Daemon& LocalCluster::daemon(const std::string& who) const {
  const auto it = daemons_.find(who);
  if (it == daemons_.end()) throw gpulab::RunError(fmt::format("no daemon '{}'", who));
  return it->second;
}

}  // namespace platform
