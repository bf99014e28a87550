#include "ring_allreduce/socket.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/core.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace ring {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(fmt::format("{}: {}", what, std::strerror(errno)));
}

sockaddr_in make_addr(const std::string& address, std::uint16_t port) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  if (inet_pton(AF_INET, address.c_str(), &sa.sin_addr) != 1)
    throw std::runtime_error(fmt::format("'{}' is not a numeric IPv4 address", address));
  return sa;
}

// Waits until `fd` is ready for `events`; false when the deadline passed.
bool wait_for(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, ms_until(deadline));
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) fail("poll");
  }
}

}  // namespace

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) reset(o.release());
  return *this;
}

void Fd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

int ms_until(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (left <= 0) return 0;
  return left > 1'000'000'000 ? 1'000'000'000 : static_cast<int>(left) + 1;  // +1: never wake just early
}

Listener listen_tcp(const std::string& address, int backlog) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) fail("socket");
  const sockaddr_in sa = make_addr(address, 0);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0) fail("bind " + address);
  if (::listen(fd.get(), backlog) != 0) fail("listen");
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &len) != 0) fail("getsockname");
  return {std::move(fd), address, ntohs(bound.sin_port)};
}

Fd connect_tcp(const std::string& address, std::uint16_t port, Clock::time_point deadline) {
  const sockaddr_in sa = make_addr(address, port);
  for (;;) {
    Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd.valid()) fail("socket");
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&sa), sizeof sa) == 0) return fd;
    // A peer that has not called listen() yet refuses; retry until the deadline.
    if ((errno != ECONNREFUSED && errno != EINTR) || Clock::now() >= deadline)
      fail(fmt::format("connect {}:{}", address, port));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

Fd accept_tcp(const Fd& listener, Clock::time_point deadline) {
  for (;;) {
    if (!wait_for(listener.get(), POLLIN, deadline)) throw std::runtime_error("timed out waiting for a peer to connect");
    Fd fd(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (fd.valid()) return fd;
    if (errno != EINTR && errno != ECONNABORTED && errno != EAGAIN) fail("accept");
  }
}

void send_exact(const Fd& fd, std::span<const std::byte> bytes, Clock::time_point deadline) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    if (!wait_for(fd.get(), POLLOUT, deadline)) throw std::runtime_error("timed out sending the handshake");
    const ssize_t n = ::send(fd.get(), bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (errno != EAGAIN && errno != EINTR) {
      fail("send");
    }
  }
}

void recv_exact(const Fd& fd, std::span<std::byte> bytes, Clock::time_point deadline) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    if (!wait_for(fd.get(), POLLIN, deadline)) throw std::runtime_error("timed out receiving the handshake");
    const ssize_t n = ::recv(fd.get(), bytes.data() + done, bytes.size() - done, MSG_DONTWAIT);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n == 0) {
      throw std::runtime_error("peer closed the connection during the handshake");
    } else if (errno != EAGAIN && errno != EINTR) {
      fail("recv");
    }
  }
}

void set_nonblocking(const Fd& fd) {
  const int flags = ::fcntl(fd.get(), F_GETFL, 0);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags | O_NONBLOCK) != 0) fail("fcntl O_NONBLOCK");
}

void set_nodelay(const Fd& fd) {
  const int one = 1;
  if (::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) fail("setsockopt TCP_NODELAY");
}

}  // namespace ring
