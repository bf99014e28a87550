// Test helpers for gpu-exporter as a process: start it on a free port, talk
// raw HTTP to it over real sockets, run promtool on what it prints.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "gpulab_test/raw_tcp.hpp"

namespace p10test {

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

// The absolute path of `name` on PATH, or "".
inline std::string find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  std::size_t pos = 0;
  while (pos <= dirs.size()) {
    std::size_t end = dirs.find(':', pos);
    if (end == std::string::npos) end = dirs.size();
    const std::string candidate = dirs.substr(pos, end - pos) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    pos = end + 1;
  }
  return "";
}

// Runs a program in the background with stdout+stderr to a log file.
class Process {
 public:
  Process(const std::string& program, const std::vector<std::string>& args) {
    char tmpl[] = "/tmp/p10-exporter-log-XXXXXX";
    const int fd = mkstemp(tmpl);
    log_path_ = tmpl;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      std::vector<char*> argv;
      argv.push_back(const_cast<char*>(program.c_str()));
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(program.c_str(), argv.data());
      _exit(127);
    }
    ::close(fd);
  }
  ~Process() {
    stop();
    std::remove(log_path_.c_str());
  }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  [[nodiscard]] bool alive() {
    if (pid_ <= 0) return false;
    int status = 0;
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == 0) return true;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    pid_ = -1;
    return false;
  }
  // SIGTERM and wait; the exit code (-1: killed by a signal).
  int stop() {
    if (alive()) {
      ::kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      pid_ = -1;
    }
    return exit_code_;
  }
  [[nodiscard]] std::string log() const { return read_file(log_path_); }

 private:
  pid_t pid_ = -1;
  int exit_code_ = -1;
  std::string log_path_;
};

// gpu-exporter serving on 127.0.0.1:0; port() is the one it announced (0: it did not).
class Exporter : public Process {
 public:
  explicit Exporter(std::vector<std::string> args)
      : Process(std::string(GPULAB_BIN_DIR) + "/gpu-exporter", with_listen(std::move(args))) {
    const std::regex announce("listening on http://127\\.0\\.0\\.1:([0-9]+)/metrics");
    for (int i = 0; i < 400 && port_ == 0 && alive(); ++i) {
      std::smatch m;
      const std::string text = log();
      if (std::regex_search(text, m, announce)) port_ = std::stoi(m[1]);
      if (port_ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
  }
  [[nodiscard]] int port() const { return port_; }

 private:
  static std::vector<std::string> with_listen(std::vector<std::string> args) {
    args.insert(args.begin(), {"--listen", "127.0.0.1:0"});
    return args;
  }
  int port_ = 0;
};

// Raw loopback clients for the hostile-connection tests (shared with the platform's).
using gpulab_test::connect_to;
using gpulab_test::read_until_close;
using gpulab_test::send_all;

struct HttpReply {
  int status = 0;  // 0: no HTTP answer
  std::string headers;
  std::string body;
};

inline HttpReply parse_reply(const std::string& raw) {
  HttpReply r;
  const auto end = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.1 ", 0) != 0 || end == std::string::npos) return r;
  r.status = std::atoi(raw.c_str() + 9);
  r.headers = raw.substr(0, end);
  r.body = raw.substr(end + 4);
  return r;
}

// Sends `request` as is and reads the answer until the server closes.
inline HttpReply http_raw(int port, const std::string& request, int timeout_ms = 10000) {
  const int fd = connect_to(port);
  if (fd < 0) return {};
  send_all(fd, request);
  const std::string raw = read_until_close(fd, timeout_ms);
  ::close(fd);
  return parse_reply(raw);
}

inline HttpReply http_get(int port, const std::string& path) {
  return http_raw(port,
                  "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
}

struct Shell {
  int rc = -1;
  std::string out;  // stdout + stderr
};
inline Shell shell(const std::string& cmd) {
  Shell s;
  if (FILE* p = popen((cmd + " 2>&1").c_str(), "r")) {
    char buf[4096];
    for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) s.out.append(buf, n);
    const int status = pclose(p);
    s.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  return s;
}

// promtool check metrics on `text`.
inline Shell promtool_check_metrics(const std::string& promtool, const std::string& text) {
  char tmpl[] = "/tmp/p10-exporter-metrics-XXXXXX";
  const int fd = mkstemp(tmpl);
  ::close(fd);
  std::ofstream(tmpl) << text;
  Shell s = shell(promtool + " check metrics < " + tmpl);
  std::remove(tmpl);
  return s;
}

}  // namespace p10test
