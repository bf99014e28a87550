#include "gpulab/http/connection_pool.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace gpulab::http {
namespace {

constexpr std::size_t kReadChunk = 4096;

int poll_ms(SteadyTime until) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, 60'000));
}

void address_of(int fd, bool peer, std::string& ip, int& port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  const int rc = peer ? ::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len)
                      : ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  if (rc != 0) return;
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
    ::inet_ntop(AF_INET, &a->sin_addr, text, sizeof text);
    port = ntohs(a->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
    ::inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof text);
    port = ntohs(a->sin6_port);
  }
  ip = text;
}

}  // namespace

void close_connection(int fd) {
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

ConnectionPool::ConnectionPool(std::size_t workers, std::size_t max_idle, Serve serve)
    : max_idle_(max_idle), serve_(std::move(serve)), workers_(std::make_unique<httplib::ThreadPool>(workers)) {
  if (::pipe2(wake_fd_, O_NONBLOCK | O_CLOEXEC) != 0) wake_fd_[0] = wake_fd_[1] = -1;
  watcher_ = std::thread([this] { watch(); });
}

ConnectionPool::~ConnectionPool() {
  shutdown();
  for (int fd : wake_fd_) {
    if (fd >= 0) ::close(fd);
  }
}

void ConnectionPool::wake() const {
  const char b = 1;
  if (wake_fd_[1] >= 0) [[maybe_unused]] auto n = ::write(wake_fd_[1], &b, 1);
}

void ConnectionPool::dispatch(Connection c) {
  auto shared = std::make_shared<Connection>(std::move(c));
  workers_->enqueue([this, shared] { serve_(std::move(*shared)); });
}

void ConnectionPool::park(Connection c, SteadyTime deadline) {
  std::unique_lock lock(mu_);
  if (stopping_ || c.requests_left == 0) {
    lock.unlock();
    close_connection(c.fd);
    return;
  }
  if (!c.buffered.empty()) {  // the next request is already here
    dispatch(std::move(c));
    return;
  }
  if (idle_.size() >= max_idle_) {
    lock.unlock();
    close_connection(c.fd);
    return;
  }
  idle_.push_back(Idle{std::move(c), deadline});
  lock.unlock();
  wake();
}

void ConnectionPool::watch() {
  std::vector<pollfd> fds;
  for (;;) {
    SteadyTime next = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      fds.assign(1, pollfd{wake_fd_[0], POLLIN, 0});
      for (const auto& i : idle_) {
        fds.push_back(pollfd{i.conn.fd, POLLIN, 0});
        next = std::min(next, i.deadline);
      }
    }
    ::poll(fds.data(), fds.size(), poll_ms(next));
    if ((fds[0].revents & POLLIN) != 0) {
      char drain[64];
      while (::read(wake_fd_[0], drain, sizeof drain) > 0) {
      }
    }
    std::vector<int> ready;
    for (std::size_t k = 1; k < fds.size(); ++k) {
      if (fds[k].revents != 0) ready.push_back(fds[k].fd);  // bytes, or a hang-up the read will see
    }
    std::vector<int> expired;
    std::lock_guard lock(mu_);
    if (stopping_) return;
    const auto now = std::chrono::steady_clock::now();
    for (auto it = idle_.begin(); it != idle_.end();) {
      if (std::find(ready.begin(), ready.end(), it->conn.fd) != ready.end()) {
        dispatch(std::move(it->conn));
        it = idle_.erase(it);
      } else if (it->deadline <= now) {
        close_connection(it->conn.fd);
        it = idle_.erase(it);
      } else {
        ++it;
      }
    }
  }
}

void ConnectionPool::shutdown() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    for (auto& i : idle_) close_connection(i.conn.fd);
    idle_.clear();
  }
  wake();
  if (watcher_.joinable()) watcher_.join();
  workers_->shutdown();
}

DeadlineStream::DeadlineStream(int fd, std::string buffered, SteadyTime read_deadline,
                               std::chrono::milliseconds write_timeout)
    : fd_(fd), buf_(std::move(buffered)), read_deadline_(read_deadline), write_timeout_(write_timeout) {}

bool DeadlineStream::wait(short events, SteadyTime until) const {
  for (;;) {
    pollfd p{fd_, events, 0};
    const int rc = ::poll(&p, 1, poll_ms(until));
    if (rc > 0) return true;
    if (rc == 0 || errno != EINTR) return false;
  }
}

bool DeadlineStream::is_readable() const { return pos_ < buf_.size() || wait(POLLIN, read_deadline_); }

bool DeadlineStream::is_writable() const { return wait(POLLOUT, std::chrono::steady_clock::now() + write_timeout_); }

ssize_t DeadlineStream::read(char* ptr, size_t size) {
  if (pos_ >= buf_.size()) {
    buf_.clear();
    pos_ = 0;
    if (!wait(POLLIN, read_deadline_)) return -1;
    buf_.resize(std::max(kReadChunk, size));
    const ssize_t n = ::recv(fd_, buf_.data(), buf_.size(), 0);
    if (n <= 0) {
      buf_.clear();
      return n;
    }
    buf_.resize(static_cast<std::size_t>(n));
  }
  const std::size_t n = std::min(size, buf_.size() - pos_);
  std::copy_n(buf_.data() + pos_, n, ptr);
  pos_ += n;
  return static_cast<ssize_t>(n);
}

ssize_t DeadlineStream::write(const char* ptr, size_t size) {
  if (!is_writable()) return -1;
  return ::send(fd_, ptr, size, MSG_NOSIGNAL);
}

void DeadlineStream::get_remote_ip_and_port(std::string& ip, int& port) const { address_of(fd_, true, ip, port); }
void DeadlineStream::get_local_ip_and_port(std::string& ip, int& port) const { address_of(fd_, false, ip, port); }

std::string DeadlineStream::take_buffered() {
  std::string rest = buf_.substr(pos_);
  buf_.clear();
  pos_ = 0;
  return rest;
}

}  // namespace gpulab::http
