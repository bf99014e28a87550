#include "exporter/http_server.hpp"

#include <arpa/inet.h>
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
#include <string>
#include <string_view>

#include "gpulab/cli.hpp"
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
  GuardedStream(int sock, std::chrono::milliseconds write_timeout)
      : sock_(sock), write_timeout_(write_timeout) {}

  void start_request(Clock::time_point deadline, std::size_t budget) {
    deadline_ = deadline;
    budget_ = budget;
    response_started_ = false;
    error_response_ = false;
  }
  // The response to the last request was a 4xx/5xx (a bad request: the
  // connection is closed after it rather than kept alive).
  [[nodiscard]] bool error_response() const { return error_response_; }
  // True when a request has started to arrive (or is buffered) within `idle`.
  bool wait_for_request(std::chrono::milliseconds idle) const {
    return pos_ < len_ || poll_for(POLLIN, idle);
  }

  bool is_readable() const override {
    if (pos_ < len_) return true;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now());
    return left.count() > 0 && poll_for(POLLIN, left);
  }
  bool is_writable() const override { return poll_for(POLLOUT, write_timeout_); }

  ssize_t read(char* ptr, size_t size) override {
    if (pos_ == len_) {
      if (budget_ == 0 || !is_readable()) return -1;  // too big, or too slow
      ssize_t n;
      do {
        n = ::recv(sock_, buf_.data(), std::min(buf_.size(), budget_), 0);
      } while (n < 0 && errno == EINTR);
      if (n <= 0) return n;
      pos_ = 0;
      len_ = static_cast<std::size_t>(n);
      budget_ -= len_;
    }
    const std::size_t k = std::min(size, len_ - pos_);
    std::copy_n(buf_.data() + pos_, k, ptr);
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
  std::array<char, 4096> buf_{};
  std::size_t pos_ = 0;
  std::size_t len_ = 0;
  bool response_started_ = false;
  bool error_response_ = false;
  static constexpr std::size_t kMaxBuffered = 1 << 20;
  std::string out_;
};

}  // namespace

class MetricsServer::Impl : public httplib::Server {
 public:
  explicit Impl(ServerOptions o) : options_(o) {}

  // httplib 0.11 listens with a backlog of 5: a burst of connects overflows it
  // and the kernel drops SYNs (clients retry after 1 s). Linux lets listen()
  // on a listening socket raise it.
  void raise_backlog() { ::listen(svr_sock_, SOMAXCONN); }

 private:
  // Replaces httplib's per-connection loop with one that reads through
  // GuardedStream; httplib still parses and answers each request.
  bool process_and_close_socket(socket_t sock) override {
    const int one = 1;
    ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    GuardedStream strm(sock, options_.write_timeout);
    bool ok = false;
    for (std::size_t left = options_.keep_alive_max; left > 0 && is_running(); --left) {
      if (!strm.wait_for_request(options_.keep_alive_timeout)) break;
      strm.start_request(Clock::now() + options_.request_timeout, options_.max_request_bytes);
      bool closed = false;
      ok = process_request(strm, left == 1, closed, [](httplib::Request&) {});
      ok = strm.flush() && ok;
      if (!ok || closed || strm.error_response()) break;
    }
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
    return ok;
  }

  ServerOptions options_;
};

MetricsServer::MetricsServer(const Collector& collector, ServerOptions options)
    : impl_(std::make_unique<Impl>(options)) {
  const std::size_t threads = std::max<std::size_t>(1, options.threads);
  impl_->set_keep_alive_max_count(options.keep_alive_max);
  impl_->set_keep_alive_timeout(options.keep_alive_timeout.count());
  impl_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
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
  return impl_->listen_after_bind();
}

void MetricsServer::stop() {
  if (impl_) impl_->stop();
}

}  // namespace exporter
