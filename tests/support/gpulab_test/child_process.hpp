// A program a test starts and owns: polled for its exit, stopped with SIGTERM as a service
// manager would (or SIGKILL, as a crash would), and never left running when the test ends.
// The daemons the tests drive (fakegpud, the eBPF probe) are each one of these plus what is
// particular to them (a mount to wait for, a ready file).
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <optional>

namespace gpulab_test {

class ChildProcess {
 public:
  ChildProcess() = default;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess() { stop(); }

  // Forks; the child runs `in_child` (which must exec or _exit). false when fork fails.
  template <typename F>
  bool start(F&& in_child) {
    stop();
    pid_ = fork();
    if (pid_ == 0) {
      in_child();
      _exit(127);
    }
    return pid_ > 0;
  }

  [[nodiscard]] bool running() const { return pid_ > 0; }

  // Its exit code once it has exited (128 + the signal when one killed it); nullopt while it
  // runs or when it was never started.
  std::optional<int> poll() {
    if (pid_ <= 0) return std::nullopt;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) != pid_) return std::nullopt;
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  // SIGTERM, then its exit code; -1 when it was not running or died of a signal.
  int stop() {
    if (pid_ <= 0) return -1;
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // SIGKILL, as a crash would.
  void kill_hard() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
};

}  // namespace gpulab_test
