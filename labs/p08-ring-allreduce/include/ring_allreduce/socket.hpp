// Thin RAII over POSIX TCP sockets: a listener on an ephemeral port, connect
// and accept with deadlines, and the two options a collective needs
// (non-blocking, TCP_NODELAY). Nothing here knows about ranks or chunks.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>

namespace ring {

using Clock = std::chrono::steady_clock;

// Owns one file descriptor; closes it on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  [[nodiscard]] int get() const { return fd_; }
  [[nodiscard]] bool valid() const { return fd_ >= 0; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

struct Listener {
  Fd fd;
  std::string address;  // numeric IPv4 the peers connect to
  std::uint16_t port = 0;
};

// Binds `address`:0 (the kernel picks a free port, so parallel runs never collide) and listens.
Listener listen_tcp(const std::string& address, int backlog);

// Connects (blocking, bounded by `deadline`) and returns a connected socket.
Fd connect_tcp(const std::string& address, std::uint16_t port, Clock::time_point deadline);
// Accepts one connection on `listener` before `deadline`.
Fd accept_tcp(const Fd& listener, Clock::time_point deadline);

// Sends/receives exactly these bytes before `deadline` (used only for the
// small connection handshake; the collectives use Transport::exchange).
void send_exact(const Fd& fd, std::span<const std::byte> bytes, Clock::time_point deadline);
void recv_exact(const Fd& fd, std::span<std::byte> bytes, Clock::time_point deadline);

void set_nonblocking(const Fd& fd);
void set_nodelay(const Fd& fd);

// Milliseconds left until `deadline` for poll(): 0 when it has passed.
int ms_until(Clock::time_point deadline);

}  // namespace ring
