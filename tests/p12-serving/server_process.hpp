// Starts the real gpulab-serve on an ephemeral loopback port (--listen
// 127.0.0.1:0 --ready-file), waits for its URL, and stops it with SIGTERM,
// which must end it with exit 0.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

namespace serving_test {

class ServerProcess {
 public:
  // `port` 0: any free one (a restart passes the port it had before).
  explicit ServerProcess(std::vector<std::string> args, int port = 0) {
    char dir_template[] = "/tmp/gpulab-serve-test-XXXXXX";
    dir_ = mkdtemp(dir_template);
    const std::string ready = dir_ + "/ready", err = dir_ + "/stderr";
    args.insert(args.begin(), {std::string(GPULAB_BIN_DIR) + "/gpulab-serve", "--listen",
                               "127.0.0.1:" + std::to_string(port), "--ready-file", ready});
    pid_ = fork();
    if (pid_ == 0) {
      const int fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      dup2(fd, 2);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    // A generous deadline: loading the model on a loaded CI machine takes a while.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (std::chrono::steady_clock::now() < deadline) {
      std::ifstream in(ready);
      std::string url;
      if (in >> url && url.rfind("http://127.0.0.1:", 0) == 0) {
        port_ = std::stoi(url.substr(url.rfind(':') + 1));
        return;
      }
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        ADD_FAILURE() << "gpulab-serve exited before listening: " << stderr_text();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ADD_FAILURE() << "gpulab-serve did not write its ready file: " << stderr_text();
  }
  ~ServerProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "after SIGTERM: " << stderr_text();
    }
    std::filesystem::remove_all(dir_);
  }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // SIGKILL, as a crash or the OOM killer would; reaped.
  void kill9() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] bool up() const { return port_ > 0; }
  [[nodiscard]] const std::string& dir() const { return dir_; }
  [[nodiscard]] std::string stderr_text() const {
    std::ifstream in(dir_ + "/stderr");
    return {std::istreambuf_iterator<char>(in), {}};
  }

 private:
  std::string dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace serving_test
