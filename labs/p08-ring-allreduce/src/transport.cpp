#include "ring_allreduce/transport.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ring {

Transport::Transport(int rank, int world, std::vector<Fd> peers, std::chrono::milliseconds timeout)
    : rank_(rank), world_(world), peers_(std::move(peers)), timeout_(timeout) {
  for (auto& fd : peers_) {
    if (!fd.valid()) continue;
    set_nonblocking(fd);
    set_nodelay(fd);
  }
}

std::vector<int> Transport::closed_peers() const {
  std::vector<int> closed;
  for (int p = 0; p < world_; ++p) {
    if (p == rank_ || !peers_[p].valid()) continue;
    char c = 0;
    const ssize_t n = ::recv(peers_[p].get(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) closed.push_back(p);
  }
  return closed;
}

void Transport::fail(std::string_view what, const std::vector<int>& waiting_on, std::vector<int> closed) const {
  for (int p : closed_peers())
    if (std::find(closed.begin(), closed.end(), p) == closed.end()) closed.push_back(p);
  std::sort(closed.begin(), closed.end());
  std::string msg = fmt::format("watchdog: no progress for {} ms in {} (waiting on rank {}); ", timeout_.count(), what,
                                fmt::join(waiting_on, ", "));
  if (closed.empty()) {
    msg += "every peer connection is still open: a peer is alive but stalled";
  } else {
    msg += fmt::format("culprit: rank {} (connection closed: the process is gone)", fmt::join(closed, ", rank "));
  }
  throw PeerFailure(msg, std::move(closed));
}

void Transport::exchange(std::span<const SendOp> sends, std::span<RecvOp> recvs, std::string_view what) {
  struct Op {
    int fd;
    int peer;
    bool is_send;
    std::size_t index;
    std::size_t done = 0;
    std::size_t total;
    bool dead = false;
  };
  std::vector<Op> ops;
  ops.reserve(sends.size() + recvs.size());
  for (std::size_t i = 0; i < sends.size(); ++i)
    if (!sends[i].bytes.empty()) ops.push_back({peers_.at(sends[i].peer).get(), sends[i].peer, true, i, 0, sends[i].bytes.size()});
  for (std::size_t i = 0; i < recvs.size(); ++i)
    if (!recvs[i].bytes.empty()) ops.push_back({peers_.at(recvs[i].peer).get(), recvs[i].peer, false, i, 0, recvs[i].bytes.size()});

  const bool watchdog = timeout_.count() > 0;
  auto deadline = Clock::now() + timeout_;
  std::vector<pollfd> pfds;
  std::vector<Op*> polled;
  std::vector<int> closed;
  for (;;) {
    pfds.clear();
    polled.clear();
    for (auto& op : ops) {
      if (op.done == op.total || op.dead) continue;
      pfds.push_back({op.fd, static_cast<short>(op.is_send ? POLLOUT : POLLIN), 0});
      polled.push_back(&op);
    }
    const bool all_done = std::all_of(ops.begin(), ops.end(), [](const Op& o) { return o.done == o.total; });
    if (all_done) return;
    // With every remaining op on a dead peer nothing can finish: poll(nothing)
    // then only waits for the watchdog — or, without one, forever (the hang).
    const int n = ::poll(pfds.data(), pfds.size(), watchdog ? ms_until(deadline) : -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(fmt::format("poll: {}", std::strerror(errno)));
    }
    if (n == 0) {
      if (watchdog && Clock::now() >= deadline) {
        std::vector<int> waiting;
        for (const auto& op : ops)
          if (op.done < op.total && std::find(waiting.begin(), waiting.end(), op.peer) == waiting.end())
            waiting.push_back(op.peer);
        fail(what, waiting, closed);
      }
      continue;
    }
    bool progress = false;
    for (std::size_t i = 0; i < pfds.size(); ++i) {
      if (pfds[i].revents == 0) continue;
      Op& op = *polled[i];
      ssize_t got = 0;
      if (op.is_send) {
        const auto bytes = sends[op.index].bytes;
        got = ::send(op.fd, bytes.data() + op.done, op.total - op.done, MSG_NOSIGNAL | MSG_DONTWAIT);
      } else {
        const auto bytes = recvs[op.index].bytes;
        got = ::recv(op.fd, bytes.data() + op.done, op.total - op.done, MSG_DONTWAIT);
        if (got == 0) errno = ECONNRESET;  // end of file: the peer closed
      }
      if (got > 0) {
        const auto from = op.done;
        op.done += static_cast<std::size_t>(got);
        progress = true;
        if (op.is_send) {
          bytes_sent_ += static_cast<std::uint64_t>(got);
        } else {
          bytes_received_ += static_cast<std::uint64_t>(got);
          if (recvs[op.index].on_data) recvs[op.index].on_data(from, op.done);
        }
      } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        op.dead = true;  // EOF, EPIPE, ECONNRESET: this peer is gone; keep waiting for the watchdog
        closed.push_back(op.peer);
      }
    }
    if (progress) deadline = Clock::now() + timeout_;
  }
}

Transport connect_mesh(int rank, const std::vector<Endpoint>& endpoints, Fd listener,
                       std::chrono::milliseconds timeout, Clock::time_point setup_deadline) {
  const int world = static_cast<int>(endpoints.size());
  std::vector<Fd> peers(endpoints.size());
  for (int p = 0; p < rank; ++p) {
    Fd fd = connect_tcp(endpoints[p].address, endpoints[p].port, setup_deadline);
    const auto id = static_cast<std::uint32_t>(rank);
    send_exact(fd, std::as_bytes(std::span(&id, 1)), setup_deadline);
    peers[p] = std::move(fd);
  }
  for (int accepted = rank + 1; accepted < world; ++accepted) {
    Fd fd = accept_tcp(listener, setup_deadline);
    std::uint32_t id = 0;
    recv_exact(fd, std::as_writable_bytes(std::span(&id, 1)), setup_deadline);
    if (id <= static_cast<std::uint32_t>(rank) || id >= static_cast<std::uint32_t>(world) || peers[id].valid())
      throw std::runtime_error(fmt::format("rank {}: unexpected handshake from rank id {}", rank, id));
    peers[id] = std::move(fd);
  }
  return Transport(rank, world, std::move(peers), timeout);
}

}  // namespace ring
