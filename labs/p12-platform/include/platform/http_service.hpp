// The HTTP server under the control plane and the agents: cpp-httplib with
// the limits a server facing a network needs. It binds with SO_REUSEADDR only
// (httplib's default adds SO_REUSEPORT, which would let a second daemon on the
// same port silently take half the requests), raises httplib's backlog of 5,
// and caps request bodies. httplib parses and routes; the connections are
// ConnectionPool's: an idle connection holds no worker, waits at most
// idle_timeout from accept (or from its last response) for a request, and a
// request must arrive whole within read_timeout, so idle or slow-header
// clients cannot keep an API call waiting for a worker.
#pragma once

#include <httplib.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "gpulab/json.hpp"
#include "platform/connection_pool.hpp"

namespace platform {

struct HttpLimits {
  std::size_t threads = 32;  // workers; agents long-poll: one each while they wait
  std::size_t max_idle_connections = 4096;  // waiting for a request; more are closed
  std::size_t max_requests_per_connection = 1000;
  std::size_t max_body_bytes = 1 << 20;
  std::chrono::milliseconds idle_timeout{5000};  // accept (or last response) -> first byte of a request
  std::chrono::milliseconds read_timeout{5000};  // first byte -> the whole request
  std::chrono::milliseconds write_timeout{5000};
};

class HttpService : public httplib::Server {
 public:
  explicit HttpService(const HttpLimits& limits = {});
  ~HttpService();
  // Binds "HOST:PORT" (port 0: any free one) and returns the port. Throws
  // gpulab::UsageError for a malformed address, gpulab::RunError when the
  // port is taken ("cannot listen on 127.0.0.1:7070: Address already in use").
  int bind(std::string_view listen);
  // Serves until stop(); returns after the requests in flight are answered.
  bool listen_after_bind();

 private:
  // httplib hands each accepted socket here (on its one accept-side thread).
  bool process_and_close_socket(socket_t sock) override;
  void serve(Connection c);

  HttpLimits limits_;
  ConnectionPool connections_;
};

// Responses every route shares.
void reply_json(httplib::Response& res, int status, const gpulab::Json& body);
void reply_error(httplib::Response& res, int status, const std::string& message);
// The request body as JSON; throws ApiError(400) naming the problem.
gpulab::Json body_json(const httplib::Request& req);

}  // namespace platform
