// The connections of an HTTP server, kept off its worker threads while they
// are idle. cpp-httplib gives each accepted connection a worker until the
// client closes it or a timeout fires, so fifty idle or slow clients (or
// fifty agents between keep-alive requests) could hold every worker and leave
// an API call queued. Here a connection waits for its first byte on one
// watcher thread, with a deadline counted from accept (or from its previous
// response); only a connection with bytes to read gets a worker, and its
// request must then arrive whole within the read timeout.
#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gpulab::http {

using SteadyTime = std::chrono::steady_clock::time_point;

// One client connection between requests.
struct Connection {
  int fd = -1;
  std::string buffered;           // bytes read past the previous request (pipelining)
  std::size_t requests_left = 0;  // keep-alive budget
};

class ConnectionPool {
 public:
  using Serve = std::function<void(Connection)>;
  // `serve` runs on one of `workers` threads once the connection has bytes.
  ConnectionPool(std::size_t workers, std::size_t max_idle, Serve serve);
  ~ConnectionPool();
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  // Waits (off the workers) until the connection is readable, then serves it;
  // closes it at `deadline` if nothing arrived, or at once when shut down or
  // when max_idle connections already wait.
  void park(Connection c, SteadyTime deadline);
  // Closes the waiting connections and joins the workers (after the requests
  // they are serving). Idempotent.
  void shutdown();

 private:
  struct Idle {
    Connection conn;
    SteadyTime deadline;
  };
  void watch();
  void dispatch(Connection c);
  void wake() const;

  std::size_t max_idle_;
  Serve serve_;
  std::unique_ptr<httplib::ThreadPool> workers_;
  int wake_fd_[2] = {-1, -1};
  std::mutex mu_;
  std::vector<Idle> idle_;
  bool stopping_ = false;
  std::thread watcher_;
};

// httplib's Stream over a socket: reads end at one deadline (the whole request
// must arrive by then), each write waits at most `write_timeout`. Reads are
// buffered; what was read past the request is left in take_buffered().
class DeadlineStream : public httplib::Stream {
 public:
  DeadlineStream(int fd, std::string buffered, SteadyTime read_deadline, std::chrono::milliseconds write_timeout);
  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return fd_; }
  std::string take_buffered();

 private:
  bool wait(short events, SteadyTime until) const;
  int fd_;
  std::string buf_;
  std::size_t pos_ = 0;
  SteadyTime read_deadline_;
  std::chrono::milliseconds write_timeout_;
};

// Shuts down and closes a client socket.
void close_connection(int fd);

}  // namespace gpulab::http
