#include "exporter/connection_gate.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <string_view>

namespace exporter {
namespace {

std::string peer_address(const sockaddr_storage& ss) {
  std::array<char, INET6_ADDRSTRLEN> text{};
  if (ss.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr, text.data(), text.size());
  else if (ss.ss_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr, text.data(), text.size());
  return text.data();
}

void close_socket(int fd) {
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

constexpr std::string_view kTooLarge =
    "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

}  // namespace

ConnectionGate::ConnectionGate(int listen_fd, GateLimits limits, Dispatch dispatch)
    : listen_fd_(listen_fd),
      wake_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      limits_(limits),
      dispatch_(std::move(dispatch)) {
  ::fcntl(listen_fd_, F_SETFL, ::fcntl(listen_fd_, F_GETFL) | O_NONBLOCK);
}

ConnectionGate::~ConnectionGate() {
  for (auto& w : waiting_) close_socket(w.conn.fd);
  for (auto& c : returned_) close_socket(c.fd);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void ConnectionGate::stop() {
  {
    const std::lock_guard lock(mu_);
    stopping_ = true;
  }
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto n = ::write(wake_fd_, &one, sizeof one);
}

void ConnectionGate::keep(ReadyConnection c) {
  {
    const std::lock_guard lock(mu_);
    if (!stopping_) {
      returned_.push_back(std::move(c));
      c.fd = -1;
    }
  }
  if (c.fd >= 0) {
    finished(std::move(c));
    return;
  }
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto n = ::write(wake_fd_, &one, sizeof one);
}

void ConnectionGate::finished(ReadyConnection c) { release(c.fd, c.peer); }

void ConnectionGate::release(int fd, const std::string& peer) {
  close_socket(fd);
  const std::lock_guard lock(mu_);
  --open_;
  if (auto it = per_client_.find(peer); it != per_client_.end() && --it->second == 0)
    per_client_.erase(it);
}

ConnectionGate::Counters ConnectionGate::counters() const {
  const std::lock_guard lock(mu_);
  return counters_;
}

bool ConnectionGate::header_complete(const std::string& s) const {
  return s.find("\r\n\r\n") != std::string::npos || s.find("\n\n") != std::string::npos;
}

void ConnectionGate::close_waiting(std::size_t index) {
  const ReadyConnection c = std::move(waiting_[index].conn);
  waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(index));
  release(c.fd, c.peer);
}

bool ConnectionGate::evict_oldest(const std::string* peer) {
  std::size_t oldest = waiting_.size();
  for (std::size_t i = 0; i < waiting_.size(); ++i) {
    if (peer != nullptr && waiting_[i].conn.peer != *peer) continue;
    if (oldest == waiting_.size() || waiting_[i].since < waiting_[oldest].since) oldest = i;
  }
  if (oldest == waiting_.size()) return false;
  close_waiting(oldest);
  const std::lock_guard lock(mu_);
  ++counters_.evicted;
  return true;
}

void ConnectionGate::admit(int fd, std::string peer) {
  std::size_t from_peer = 0;
  std::size_t open = 0;
  {
    const std::lock_guard lock(mu_);
    ++counters_.accepted;
    from_peer = per_client_[peer];
    open = open_;
  }
  // Over a bound: the oldest waiting connection makes room. When every one
  // is being served, the newcomer is the one turned away.
  const bool room = from_peer >= limits_.max_per_client ? evict_oldest(&peer)
                    : open >= limits_.max_connections    ? evict_oldest(nullptr)
                                                         : true;
  if (!room) {
    close_socket(fd);
    return;
  }
  {
    const std::lock_guard lock(mu_);
    ++open_;
    ++per_client_[peer];
  }
  const auto now = Clock::now();
  waiting_.push_back({ReadyConnection{fd, std::move(peer), {}, 0}, now, now + limits_.request_timeout, false});
}

void ConnectionGate::accept_all() {
  // A bounded batch per round, so waiting connections are read in between.
  for (int i = 0; i < 64; ++i) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      // Out of descriptors: free the oldest waiting one instead of spinning.
      if ((errno == EMFILE || errno == ENFILE) && !waiting_.empty()) evict_oldest(nullptr);
      return;
    }
    admit(fd, peer_address(ss));
  }
}

ConnectionGate::ReadState ConnectionGate::read_from(Waiting& w) {
  std::string& in = w.conn.received;
  std::array<char, 4096> buf{};
  // One byte past the budget is enough to know the header is too large.
  const std::size_t room = limits_.max_request_bytes + 1 - std::min(in.size(), limits_.max_request_bytes);
  const ssize_t n = ::recv(w.conn.fd, buf.data(), std::min(buf.size(), room), 0);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return ReadState::kWaiting;
  if (n <= 0) return ReadState::kClosed;  // by the client, or an error
  in.append(buf.data(), static_cast<std::size_t>(n));
  if (w.idle) {
    w.idle = false;
    w.deadline = Clock::now() + limits_.request_timeout;
  }
  if (header_complete(in)) return ReadState::kComplete;
  return in.size() > limits_.max_request_bytes ? ReadState::kTooLarge : ReadState::kWaiting;
}

void ConnectionGate::take_returned() {
  std::vector<ReadyConnection> back;
  {
    const std::lock_guard lock(mu_);
    back.swap(returned_);
  }
  const auto now = Clock::now();
  for (auto& c : back) {
    // Pipelined: the next request may already be here whole.
    if (header_complete(c.received)) {
      dispatch_(std::move(c));
      continue;
    }
    const bool idle = c.received.empty();
    waiting_.push_back({std::move(c), now,
                        now + (idle ? limits_.keep_alive_timeout : limits_.request_timeout), idle});
  }
}

bool ConnectionGate::run() {
  std::vector<pollfd> pfds;
  for (;;) {
    {
      const std::lock_guard lock(mu_);
      if (stopping_) return true;
    }
    take_returned();

    // Deadlines first: whoever has had its time is closed before anything new is read.
    auto now = Clock::now();
    auto next = now + std::chrono::seconds(1);
    for (std::size_t i = waiting_.size(); i-- > 0;) {
      if (waiting_[i].deadline <= now) {
        close_waiting(i);
        const std::lock_guard lock(mu_);
        ++counters_.timed_out;
      } else {
        next = std::min(next, waiting_[i].deadline);
      }
    }

    pfds.clear();
    pfds.push_back({wake_fd_, POLLIN, 0});
    pfds.push_back({listen_fd_, POLLIN, 0});
    for (const auto& w : waiting_) pfds.push_back({w.conn.fd, POLLIN, 0});
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count() + 1;
    const int r = ::poll(pfds.data(), pfds.size(), static_cast<int>(std::max<std::int64_t>(wait, 0)));
    if (r < 0 && errno != EINTR) return false;
    if (r <= 0) continue;

    if ((pfds[0].revents & POLLIN) != 0) {
      std::uint64_t v = 0;
      [[maybe_unused]] const auto n = ::read(wake_fd_, &v, sizeof v);
    }
    // Waiting connections, from the back so erasing keeps earlier indexes valid;
    // those admitted by accept_all below are not in pfds yet.
    for (std::size_t i = waiting_.size(); i-- > 0;) {
      if (pfds[i + 2].revents == 0) continue;
      Waiting& w = waiting_[i];
      const ReadState state = read_from(w);
      if (state == ReadState::kWaiting) continue;
      ReadyConnection c = std::move(w.conn);
      waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(i));
      if (state == ReadState::kComplete) {
        dispatch_(std::move(c));
        continue;
      }
      if (state == ReadState::kTooLarge) {
        [[maybe_unused]] const auto n = ::send(c.fd, kTooLarge.data(), kTooLarge.size(), MSG_NOSIGNAL);
        const std::lock_guard lock(mu_);
        ++counters_.too_large;
      }
      release(c.fd, c.peer);
    }
    if ((pfds[1].revents & (POLLERR | POLLNVAL)) != 0) return false;
    if ((pfds[1].revents & POLLIN) != 0) accept_all();
  }
}

}  // namespace exporter
