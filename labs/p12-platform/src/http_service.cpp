#include "platform/http_service.hpp"

#include <fmt/format.h>

#include "exporter/http_server.hpp"
#include "platform/control_plane.hpp"

namespace platform {

HttpService::HttpService(const HttpLimits& limits) : gpulab::http::HttpService(limits) {
  set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    try {
      std::rethrow_exception(ep);
    } catch (const ApiError& e) {
      reply_error(res, e.status, e.what());
    } catch (const std::exception& e) {
      reply_error(res, 500, e.what());
    }
  });
}

int HttpService::bind(std::string_view listen) {
  const auto address = exporter::parse_listen_address(listen);
  return gpulab::http::HttpService::bind(address.host, address.port);
}

void reply_json(httplib::Response& res, int status, const gpulab::Json& body) {
  res.status = status;
  res.set_content(body.dump() + "\n", "application/json");
}

void reply_error(httplib::Response& res, int status, const std::string& message) {
  reply_json(res, status, gpulab::Json{{"error", message}});
}

gpulab::Json body_json(const httplib::Request& req) {
  try {
    return gpulab::Json::parse(req.body);
  } catch (const gpulab::Json::parse_error& e) {
    throw ApiError(400, fmt::format("body: malformed JSON at byte {}", e.byte));
  }
}

}  // namespace platform
