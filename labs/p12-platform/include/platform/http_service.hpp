// The HTTP server under the control plane and the agents: cpp-httplib with
// the limits a server facing a network needs. It binds with SO_REUSEADDR only
// (httplib's default adds SO_REUSEPORT, which would let a second daemon on the
// same port silently take half the requests), raises httplib's backlog of 5,
// caps request bodies, and times out slow reads and writes.
#pragma once

#include <httplib.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "gpulab/json.hpp"

namespace platform {

struct HttpLimits {
  std::size_t threads = 32;  // agents long-poll: one worker each while they wait
  std::size_t max_body_bytes = 1 << 20;
  std::chrono::seconds read_timeout{5};
  std::chrono::seconds write_timeout{5};
  std::chrono::seconds keep_alive_timeout{5};
};

class HttpService : public httplib::Server {
 public:
  explicit HttpService(const HttpLimits& limits = {});
  // Binds "HOST:PORT" (port 0: any free one) and returns the port. Throws
  // gpulab::UsageError for a malformed address, gpulab::RunError when the
  // port is taken ("cannot listen on 127.0.0.1:7070: Address already in use").
  int bind(std::string_view listen);
};

// Responses every route shares.
void reply_json(httplib::Response& res, int status, const gpulab::Json& body);
void reply_error(httplib::Response& res, int status, const std::string& message);
// The request body as JSON; throws ApiError(400) naming the problem.
gpulab::Json body_json(const httplib::Request& req);

}  // namespace platform
