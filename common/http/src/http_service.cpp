#include "gpulab/http/http_service.hpp"

#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "gpulab/errors.hpp"

namespace gpulab::http {
namespace {

// httplib's accept-side queue (one thread that hands sockets to the pool), with a hook that
// runs on the accept thread: httplib calls enqueue() there after each accept, and on_idle()
// there after each idle interval without a connection.
class AcceptQueue : public httplib::ThreadPool {
 public:
  explicit AcceptQueue(std::function<void()> on_accept_thread)
      : httplib::ThreadPool(1), on_accept_thread_(std::move(on_accept_thread)) {}
  void enqueue(std::function<void()> fn) override {
    httplib::ThreadPool::enqueue(std::move(fn));
    on_accept_thread_();
  }
  void on_idle() override { on_accept_thread_(); }

 private:
  std::function<void()> on_accept_thread_;
};

}  // namespace

void reuse_address_only(socket_t sock) {
  const int yes = 1;
  ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
}

HttpService::HttpService(const HttpLimits& limits)
    : limits_(limits),
      connections_(std::max<std::size_t>(2, limits.threads), limits.max_idle_connections,
                   [this](Connection c) { serve(std::move(c)); }) {
  // httplib's own queue only passes accepted sockets to the pool: one thread. It also
  // carries out stop() on the accept thread, which wakes every kStopPoll to look.
  new_task_queue = [this] { return new AcceptQueue([this] { stop_if_asked(); }); };
  set_idle_interval(kStopPoll);
  set_socket_options(reuse_address_only);
  // Without it a request's body waits for the ACK of its headers (Nagle vs
  // delayed ACK): 40 ms per request.
  set_tcp_nodelay(true);
  set_payload_max_length(limits.max_body_bytes);
}

HttpService::~HttpService() { connections_.shutdown(); }

bool HttpService::listen_after_bind() {
  const bool ok = httplib::Server::listen_after_bind();
  connections_.shutdown();
  return ok;
}

void HttpService::stop() { stop_asked_ = true; }

void HttpService::stop_if_asked() {
  if (stop_asked_) httplib::Server::stop();  // this thread polls the socket: closing it here races nothing
}

bool HttpService::process_and_close_socket(socket_t sock) {
  connections_.park(Connection{sock, {}, limits_.max_requests_per_connection},
                    std::chrono::steady_clock::now() + limits_.idle_timeout);
  return true;
}

// One request on a worker, then the connection goes back to wait off the workers.
void HttpService::serve(Connection c) {
  DeadlineStream strm(c.fd, std::move(c.buffered), std::chrono::steady_clock::now() + limits_.read_timeout,
                      limits_.write_timeout);
  const bool last = c.requests_left <= 1 || !is_running();
  bool closed = false;
  const bool ok = process_request(strm, last, closed, nullptr);
  if (!ok || closed || last) {
    close_connection(c.fd);
    return;
  }
  c.buffered = strm.take_buffered();
  --c.requests_left;
  connections_.park(std::move(c), std::chrono::steady_clock::now() + limits_.idle_timeout);
}

int HttpService::bind(const std::string& host, int port) {
  const std::string where = host.find(':') == std::string::npos ? fmt::format("{}:{}", host, port)
                                                                  : fmt::format("[{}]:{}", host, port);
  if (port == 0) {
    port = bind_to_any_port(host);
    if (port <= 0) throw gpulab::RunError(fmt::format("cannot listen on {}: {}", where, std::strerror(errno)));
  } else if (!bind_to_port(host, port)) {
    throw gpulab::RunError(fmt::format("cannot listen on {}: {}", where, std::strerror(errno)));
  }
  ::listen(svr_sock_, SOMAXCONN);
  return port;
}

}  // namespace gpulab::http
