#include "platform/http_service.hpp"

#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "exporter/http_server.hpp"
#include "gpulab/cli.hpp"
#include "platform/control_plane.hpp"

namespace platform {

namespace {
void reuse_addr_only(socket_t sock) {
  const int yes = 1;
  ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
}
}  // namespace

HttpService::HttpService(const HttpLimits& limits) {
  const std::size_t threads = std::max<std::size_t>(2, limits.threads);
  new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  set_socket_options(reuse_addr_only);
  // Without it a request's body waits for the ACK of its headers (Nagle vs
  // delayed ACK): 40 ms per submission.
  set_tcp_nodelay(true);
  set_payload_max_length(limits.max_body_bytes);
  set_read_timeout(limits.read_timeout.count(), 0);
  set_write_timeout(limits.write_timeout.count(), 0);
  set_keep_alive_timeout(limits.keep_alive_timeout.count());
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
  int port = address.port;
  if (port == 0) {
    port = bind_to_any_port(address.host);
    if (port <= 0) throw gpulab::RunError(fmt::format("cannot listen on {}: {}", listen, std::strerror(errno)));
  } else if (!bind_to_port(address.host, port)) {
    throw gpulab::RunError(fmt::format("cannot listen on {}: {}", listen, std::strerror(errno)));
  }
  ::listen(svr_sock_, SOMAXCONN);
  return port;
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
