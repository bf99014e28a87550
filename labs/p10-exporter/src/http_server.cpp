#include "exporter/http_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "exporter/connection_gate.hpp"
#include "gpulab/errors.hpp"
#include "gpulab/http/http_service.hpp"
#include "gpulab/prom_text.hpp"

namespace exporter {

using Clock = std::chrono::steady_clock;

ListenAddress parse_listen_address(std::string_view text) {
  ListenAddress a;
  std::string_view port;
  if (text.starts_with('[')) {
    const auto close = text.find("]:");
    if (close == std::string_view::npos) {
      throw gpulab::UsageError(fmt::format("--listen '{}': expected [IPV6]:PORT", text));
    }
    a.host = std::string(text.substr(1, close - 1));
    port = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos || colon == 0) {
      throw gpulab::UsageError(fmt::format(
          "--listen '{}': expected HOST:PORT, e.g. 127.0.0.1:9400 (0.0.0.0:9400 for every address)",
          text));
    }
    a.host = std::string(text.substr(0, colon));
    port = text.substr(colon + 1);
  }
  const auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), a.port);
  if (port.empty() || ec != std::errc() || p != port.data() + port.size() || a.port < 0 ||
      a.port > 65535) {
    throw gpulab::UsageError(fmt::format("--listen '{}': the port must be 0..65535", text));
  }
  in6_addr v6{};
  in_addr v4{};
  if (inet_pton(AF_INET, a.host.c_str(), &v4) != 1 &&
      inet_pton(AF_INET6, a.host.c_str(), &v6) != 1) {
    throw gpulab::UsageError(
        fmt::format("--listen '{}': '{}' is not a numeric IP address", text, a.host));
  }
  return a;
}

namespace {

// A connection whose reads stop at a deadline and a byte budget, reset for
// each request. Buffers what it receives (httplib reads a request line byte by byte).
class GuardedStream : public httplib::Stream {
 public:
  // `received`: what the connection gate already read (the request header).
  GuardedStream(int sock, std::chrono::milliseconds write_timeout, std::string received)
      : sock_(sock), write_timeout_(write_timeout), in_(std::move(received)) {}

  void start_request(Clock::time_point deadline, std::size_t budget) {
    deadline_ = deadline;
    budget_ = budget;
    response_started_ = false;
    error_response_ = false;
  }
  // The response to the last request was a 4xx/5xx (a bad request: the
  // connection is closed after it rather than kept alive).
  [[nodiscard]] bool error_response() const { return error_response_; }
  // What arrived but was not read: the start of a pipelined next request.
  std::string take_unread() {
    std::string rest = in_.substr(pos_);
    in_.clear();
    pos_ = 0;
    return rest;
  }

  bool is_readable() const override {
    if (pos_ < in_.size()) return true;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now());
    return left.count() > 0 && poll_for(POLLIN, left);
  }
  bool is_writable() const override { return poll_for(POLLOUT, write_timeout_); }

  ssize_t read(char* ptr, size_t size) override {
    if (pos_ == in_.size()) {
      if (budget_ == 0 || !is_readable()) return -1;  // too big, or too slow
      std::array<char, 4096> buf{};
      ssize_t n;
      do {
        n = ::recv(sock_, buf.data(), std::min(buf.size(), budget_), 0);
      } while (n < 0 && errno == EINTR);
      if (n <= 0) return n;
      in_.assign(buf.data(), static_cast<std::size_t>(n));
      pos_ = 0;
      budget_ -= in_.size();
    }
    const std::size_t k = std::min(size, in_.size() - pos_);
    std::copy_n(in_.data() + pos_, k, ptr);
    pos_ += k;
    return static_cast<ssize_t>(k);
  }

  // httplib writes a response in many small pieces (status line, each
  // header, body); they are gathered here and sent by flush() in one go.
  ssize_t write(const char* ptr, size_t size) override {
    if (!response_started_) {
      response_started_ = true;
      const std::string_view head(ptr, std::min<std::size_t>(size, 10));
      error_response_ = head.starts_with("HTTP/1.1 4") || head.starts_with("HTTP/1.1 5");
    }
    if (out_.size() + size > kMaxBuffered && !flush()) return -1;
    out_.append(ptr, size);
    return static_cast<ssize_t>(size);
  }

  // Sends what write() gathered; false if the peer is gone or too slow.
  bool flush() {
    std::size_t done = 0;
    while (done < out_.size()) {
      if (!is_writable()) break;
      ssize_t n;
      do {
        n = ::send(sock_, out_.data() + done, out_.size() - done, MSG_NOSIGNAL);
      } while (n < 0 && errno == EINTR);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    const bool ok = done == out_.size();
    out_.clear();
    return ok;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    address(::getpeername, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    address(::getsockname, ip, port);
  }
  socket_t socket() const override { return sock_; }

 private:
  bool poll_for(short events, std::chrono::milliseconds timeout) const {
    pollfd p{sock_, events, 0};
    int r;
    do {
      r = ::poll(&p, 1, static_cast<int>(std::max<std::int64_t>(0, timeout.count())));
    } while (r < 0 && errno == EINTR);
    return r > 0 && (p.revents & (events | POLLHUP | POLLERR)) != 0;
  }
  void address(int (*get)(int, sockaddr*, socklen_t*), std::string& ip, int& port) const {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    ip.clear();
    port = 0;
    if (get(sock_, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return;
    std::array<char, INET6_ADDRSTRLEN> text{};
    if (ss.ss_family == AF_INET) {
      const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
      inet_ntop(AF_INET, &a->sin_addr, text.data(), text.size());
      port = ntohs(a->sin_port);
    } else if (ss.ss_family == AF_INET6) {
      const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
      inet_ntop(AF_INET6, &a->sin6_addr, text.data(), text.size());
      port = ntohs(a->sin6_port);
    }
    ip = text.data();
  }

  int sock_;
  std::chrono::milliseconds write_timeout_;
  Clock::time_point deadline_{};
  std::size_t budget_ = 0;
  std::string in_;  // received, read up to pos_
  std::size_t pos_ = 0;
  bool response_started_ = false;
  bool error_response_ = false;
  static constexpr std::size_t kMaxBuffered = 1 << 20;
  std::string out_;
};

}  // namespace

class MetricsServer::Impl : public httplib::Server {
 public:
  explicit Impl(ServerOptions o) : options_(o) {}
  ~Impl() override {
    shut_pool();
    const socket_t sock = svr_sock_.exchange(INVALID_SOCKET);
    if (sock != INVALID_SOCKET) ::close(sock);
  }

  // httplib 0.11 listens with a backlog of 5: a burst of connects overflows it
  // and the kernel drops SYNs (clients retry after 1 s). Linux lets listen()
  // on a listening socket raise it.
  void raise_backlog() { ::listen(svr_sock_, SOMAXCONN); }

  // The connection gate accepts and holds connections until a request header
  // is whole; the workers only ever answer requests (connection_gate.hpp).
  bool serve() {
    {
      const std::lock_guard lock(mu_);
      if (stopped_) return true;
      gate_.emplace(svr_sock_, options_.gate, [this](ReadyConnection c) {
        pool_.enqueue([this, c = std::move(c)]() mutable { answer(std::move(c)); });
      });
    }
    const bool ok = gate_->run();
    shut_pool();  // lets the workers finish what they hold
    return ok;
  }

  void halt() {
    const std::lock_guard lock(mu_);
    stopped_ = true;
    if (gate_) gate_->stop();
  }

 private:
  void shut_pool() {
    if (!pool_down_) pool_.shutdown();  // joins: only once
    pool_down_ = true;
  }

  // One request on a worker; a kept-alive connection goes back to the gate.
  void answer(ReadyConnection c) {
    ::fcntl(c.fd, F_SETFL, ::fcntl(c.fd, F_GETFL) & ~O_NONBLOCK);
    const int one = 1;
    ::setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    GuardedStream strm(c.fd, options_.write_timeout, std::move(c.received));
    // The header is here; a body must follow within the same budget and time.
    strm.start_request(Clock::now() + options_.gate.request_timeout, options_.gate.max_request_bytes);
    ++c.served;
    const bool last = c.served >= options_.keep_alive_max;
    bool closed = false;
    bool ok = process_request(strm, last, closed, [](httplib::Request&) {});
    ok = strm.flush() && ok;
    if (ok && !closed && !last && !strm.error_response()) {
      c.received = strm.take_unread();
      gate_->keep(std::move(c));
    } else {
      gate_->finished(std::move(c));
    }
  }

  ServerOptions options_;
  httplib::ThreadPool pool_{std::max<std::size_t>(1, options_.threads)};
  bool pool_down_ = false;
  std::mutex mu_;
  bool stopped_ = false;
  std::optional<ConnectionGate> gate_;
};

MetricsServer::MetricsServer(const Collector& collector, ServerOptions options)
    : impl_(std::make_unique<Impl>(options)) {
  // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, which lets a second
  // exporter bind the same port and silently take half of the scrapes.
  impl_->set_socket_options(gpulab::http::reuse_address_only);
  impl_->Get("/metrics", [&collector](const httplib::Request&, httplib::Response& res) {
    const auto text = collector.snapshot();
    res.set_content(text ? *text : std::string(), std::string(gpulab::prom::kContentType));
  });
  impl_->Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("gpu-exporter: the metrics are at /metrics\n", "text/plain; charset=utf-8");
  });
}

MetricsServer::~MetricsServer() {
  stop();
}

int MetricsServer::bind(const ListenAddress& address) {
  if (address.port == 0) {
    const int port = impl_->bind_to_any_port(address.host);
    if (port <= 0) {
      throw gpulab::RunError(
          fmt::format("cannot listen on {}: {}", address.host, std::strerror(errno)));
    }
    impl_->raise_backlog();
    return port;
  }
  if (!impl_->bind_to_port(address.host, address.port)) {
    throw gpulab::RunError(fmt::format("cannot listen on {}:{}: {}", address.host, address.port,
                                       std::strerror(errno)));
  }
  impl_->raise_backlog();
  return address.port;
}

bool MetricsServer::run() {
  return impl_->serve();
}

void MetricsServer::stop() {
  if (impl_) impl_->halt();
}

}  // namespace exporter
