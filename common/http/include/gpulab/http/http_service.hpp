// The HTTP server under every gpulab daemon that faces a network (the
// platform's control plane and agents, the serving engine): cpp-httplib with
// the limits such a server needs. It binds with SO_REUSEADDR only (httplib's
// default adds SO_REUSEPORT, which would let a second daemon on the same port
// silently take half the requests), raises httplib's backlog of 5, and caps
// request bodies. httplib parses and routes; the connections are
// ConnectionPool's: an idle connection holds no worker, waits at most
// idle_timeout from accept (or from its last response) for a request, and a
// request must arrive whole within read_timeout, so idle or slow-header
// clients cannot keep a request waiting for a worker.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <string>

#include "gpulab/http/connection_pool.hpp"

namespace gpulab::http {

struct HttpLimits {
  std::size_t threads = 32;  // workers; each request in flight (a long poll, a stream) holds one
  std::size_t max_idle_connections = 4096;  // waiting for a request; more are closed
  std::size_t max_requests_per_connection = 1000;
  std::size_t max_body_bytes = 1 << 20;
  std::chrono::milliseconds idle_timeout{5000};  // accept (or last response) -> first byte of a request
  std::chrono::milliseconds read_timeout{5000};  // first byte -> the whole request
  std::chrono::milliseconds write_timeout{5000};
};

// SO_REUSEADDR and nothing else, for a listening socket (see above).
void reuse_address_only(socket_t sock);

class HttpService : public httplib::Server {
 public:
  explicit HttpService(const HttpLimits& limits = {});
  ~HttpService() override;
  // Binds host:port (port 0: any free one) and returns the port. Throws
  // gpulab::RunError when it cannot ("cannot listen on 127.0.0.1:7070: Address
  // already in use").
  int bind(const std::string& host, int port);
  // Serves until stop(); returns after the requests in flight are answered.
  bool listen_after_bind();
  // Asks the server to stop, from any thread (a signal-waiting thread, a test), before or
  // while it listens; returns at once. httplib's own stop() closes the listening socket on
  // the calling thread while the accept thread may be inside poll() or accept() on that
  // number, which the next open() can reuse; and it does nothing before the loop runs. This
  // one leaves the close to the accept thread itself, which looks at the request after each
  // accepted connection and every kStopPoll while idle.
  // Hides httplib::Server::stop(), which is not virtual: call it through HttpService.
  void stop();
  static constexpr std::chrono::milliseconds kStopPoll{50};

 private:
  // httplib hands each accepted socket here (on its one accept-side thread).
  bool process_and_close_socket(socket_t sock) override;
  void serve(Connection c);

  // Runs on the accept thread: httplib's stop() once stop() was asked for.
  void stop_if_asked();

  HttpLimits limits_;
  ConnectionPool connections_;
  std::atomic<bool> stop_asked_{false};
};

}  // namespace gpulab::http
