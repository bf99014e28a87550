// A software TPM (swtpm, socket mode) for the attestation tests: its own
// state folder, a free loopback port pair chosen at run time (the swtpm TCTI
// talks to PORT and its control channel to PORT+1), killed by the destructor
// and, should the test process die first, by the kernel (PR_SET_PDEATHSIG).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "gpulab_test/raw_tcp.hpp"

namespace testing_support {

// True when `program` is an executable on PATH.
inline bool on_path(const std::string& program) {
  return std::system(("command -v " + program + " >/dev/null 2>&1").c_str()) == 0;
}

// Why the attestation tests cannot run here, or "" when they can.
inline std::string swtpm_missing() {
  if (!on_path("swtpm")) return "swtpm not installed (apt-get install swtpm)";
  for (const char* tool : {"tpm2_createprimary", "tpm2_quote", "tpm2_pcrread", "tpm2_pcrextend"})
    if (!on_path(tool)) return std::string(tool) + " not installed (apt-get install tpm2-tools)";
  return "";
}

class SwTpm {
 public:
  SwTpm() = default;
  SwTpm(const SwTpm&) = delete;
  SwTpm& operator=(const SwTpm&) = delete;
  ~SwTpm() { stop(); }

  // Starts swtpm on a fresh TPM whose state lives in `state_dir`; "" when it
  // answers on both ports, else why not. A port taken by someone else between
  // choosing and binding it makes swtpm exit: that attempt is retried on
  // another pair.
  std::string start(const std::filesystem::path& state_dir) {
    std::filesystem::create_directories(state_dir);
    const std::string log = (state_dir / "swtpm.log").string();
    for (int attempt = 0; attempt < 20; ++attempt) {
      port_ = gpulab_test::free_loopback_port();
      if (port_ >= 65535) continue;
      pid_ = fork();
      if (pid_ < 0) return "fork failed";
      if (pid_ == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        dup2(fd, 1);
        dup2(fd, 2);
        const std::string state = "dir=" + state_dir.string();
        const std::string server = "type=tcp,bindaddr=127.0.0.1,port=" + std::to_string(port_);
        const std::string ctrl = "type=tcp,bindaddr=127.0.0.1,port=" + std::to_string(port_ + 1);
        execlp("swtpm", "swtpm", "socket", "--tpm2", "--tpmstate", state.c_str(), "--server",
               server.c_str(), "--ctrl", ctrl.c_str(), "--flags", "not-need-init,startup-clear",
               static_cast<char*>(nullptr));
        _exit(127);
      }
      // Generous: a loaded 2-core machine may take seconds to schedule it.
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (std::chrono::steady_clock::now() < deadline) {
        int status = 0;
        if (waitpid(pid_, &status, WNOHANG) == pid_) {
          pid_ = -1;
          if (WIFEXITED(status) && WEXITSTATUS(status) == 127) return "cannot run swtpm";
          break;  // most likely a port was taken meanwhile: try another pair
        }
        if (answers(port_) && answers(port_ + 1)) return "";
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      if (pid_ > 0) return "swtpm did not answer within 60 s (log: " + log + ")";
    }
    return "swtpm could not bind a free port pair in 20 attempts (log: " + log + ")";
  }

  [[nodiscard]] std::string tcti() const {
    return "swtpm:host=127.0.0.1,port=" + std::to_string(port_);
  }

  void stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  static bool answers(int port) {
    const int fd = gpulab_test::connect_to(port);
    if (fd < 0) return false;
    ::close(fd);
    return true;
  }
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace testing_support
