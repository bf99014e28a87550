// The HTTP server under the control plane and the agents: common's
// gpulab::http::HttpService (connections off the workers, deadlines from
// accept, SO_REUSEADDR only) with the platform's errors: an ApiError thrown by
// a route becomes its HTTP status and {"error": ...}, anything else a 500.
#pragma once

#include <httplib.h>

#include <string>
#include <string_view>

#include "gpulab/http/http_service.hpp"
#include "gpulab/json.hpp"

namespace platform {

using gpulab::http::HttpLimits;

class HttpService : public gpulab::http::HttpService {
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
