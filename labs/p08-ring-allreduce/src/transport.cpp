#include "ring_allreduce/transport.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <poll.h>
#include <sys/socket.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "ring_allreduce/host_identity.hpp"
#include "ring_allreduce/shm_channel.hpp"
#include "transport_shm.hpp"

namespace ring {


namespace {

// What a rank tells a same-host peer so it can open its segment.
struct SegmentAddress {
  std::int32_t pid;
  std::int32_t fd;
};

void send_blob(const Fd& fd, const std::string& text, Clock::time_point deadline) {
  const auto len = static_cast<std::uint32_t>(text.size());
  send_exact(fd, std::as_bytes(std::span(&len, 1)), deadline);
  send_exact(fd, std::as_bytes(std::span(text.data(), text.size())), deadline);
}

std::string recv_blob(const Fd& fd, Clock::time_point deadline) {
  std::uint32_t len = 0;
  recv_exact(fd, std::as_writable_bytes(std::span(&len, 1)), deadline);
  if (len > 4096) throw std::runtime_error(fmt::format("rendezvous: a peer's host identity of {} bytes", len));
  std::string text(len, '\0');
  recv_exact(fd, std::as_writable_bytes(std::span(text.data(), text.size())), deadline);
  return text;
}

}  // namespace

std::string_view transport_kind_name(TransportKind k) {
  switch (k) {
    case TransportKind::kAuto: return "auto";
    case TransportKind::kShm: return "shm";
    case TransportKind::kTcp: return "tcp";
  }
  return "?";
}

TransportKind parse_transport_kind(std::string_view name) {
  if (name == "auto") return TransportKind::kAuto;
  if (name == "shm") return TransportKind::kShm;
  if (name == "tcp") return TransportKind::kTcp;
  throw std::invalid_argument(fmt::format("unknown transport '{}' (auto, shm or tcp)", name));
}

std::string_view path_name(Path p) { return p == Path::kShm ? "shm" : "tcp"; }

Transport::Transport(int rank, int world, std::vector<Fd> peers, std::chrono::milliseconds timeout)
    : rank_(rank), world_(world), peers_(std::move(peers)), timeout_(timeout) {
  for (auto& fd : peers_) {
    if (!fd.valid()) continue;
    set_nonblocking(fd);
    set_nodelay(fd);
  }
}

Transport::Transport(Transport&&) noexcept = default;
Transport& Transport::operator=(Transport&&) noexcept = default;
Transport::~Transport() = default;

void Transport::setup_paths(const TransportOptions& opts, Clock::time_point deadline) {
  kind_ = opts.kind;
  ring_bytes_ = opts.ring_bytes;
  unsliced_ = opts.unsliced;
  if (opts.kind == TransportKind::kTcp || world_ < 2) return;
  // Every rank sends before it reads: a few hundred bytes each, which any
  // socket buffer holds, so the order cannot deadlock.
  const std::string me = host_identity();
  for (int p = 0; p < world_; ++p)
    if (p != rank_) send_blob(peers_[p], me, deadline);
  std::vector<int> local;
  for (int p = 0; p < world_; ++p) {
    if (p == rank_) continue;
    const std::string theirs = recv_blob(peers_[p], deadline);
    if (same_host(me, theirs)) {
      local.push_back(p);
    } else if (opts.kind == TransportKind::kShm) {
      throw std::runtime_error(fmt::format(
          "--transport shm: rank {} is not on this host ('{}', here '{}'); use --transport auto or tcp", p, theirs, me));
    }
  }
  if (local.empty()) return;

  auto shm = std::make_unique<Shm>();
  shm->mine = ShmSegment::create(world_, rank_, opts.ring_bytes);
  shm->peer.resize(static_cast<std::size_t>(world_));
  const SegmentAddress addr{static_cast<std::int32_t>(::getpid()), shm->mine.fd()};
  for (int p : local) send_exact(peers_[p], std::as_bytes(std::span(&addr, 1)), deadline);
  // Opening a peer's segment can fail where the identities match (a
  // /proc mounted hidepid, a peer of another uid): auto then keeps that pair
  // on TCP, shm says why it cannot run.
  std::vector<std::string> why(static_cast<std::size_t>(world_));
  for (int p : local) {
    SegmentAddress theirs{};
    recv_exact(peers_[p], std::as_writable_bytes(std::span(&theirs, 1)), deadline);
    try {
      shm->peer[static_cast<std::size_t>(p)] = ShmSegment::open_peer(world_, p, theirs.pid, theirs.fd);
    } catch (const std::exception& e) {
      why[static_cast<std::size_t>(p)] = e.what();
    }
  }
  // A pair shares memory only when each side mapped the other's segment
  // (data goes into the receiver's, wake-ups into both). Once every peer has
  // answered, it is done opening ours: only mappings hold it from here on,
  // and when the last rank exits, or is killed, the kernel frees it.
  for (int p : local) {
    const std::byte ok{static_cast<unsigned char>(shm->peer[static_cast<std::size_t>(p)].mapped() ? 1 : 0)};
    send_exact(peers_[p], std::span(&ok, 1), deadline);
  }
  int shared = 0;
  for (int p : local) {
    std::byte ok{0};
    recv_exact(peers_[p], std::span(&ok, 1), deadline);
    auto& seg = shm->peer[static_cast<std::size_t>(p)];
    if (ok != std::byte{1} && why[static_cast<std::size_t>(p)].empty())
      why[static_cast<std::size_t>(p)] = fmt::format("rank {} could not map this rank's segment", p);
    if (!why[static_cast<std::size_t>(p)].empty()) {
      seg = ShmSegment();
      if (opts.kind == TransportKind::kShm)
        throw std::runtime_error(fmt::format("--transport shm: no shared memory with rank {}: {}", p,
                                             why[static_cast<std::size_t>(p)]));
    } else {
      ++shared;
    }
  }
  shm->mine.close_fd();
  if (shared == 0) return;

  const auto here = static_cast<unsigned>(shared + 1);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  shm->spin = opts.spin.count() >= 0 ? opts.spin
                                     : (here <= cores ? std::chrono::microseconds(50) : std::chrono::microseconds(0));
  shm_ = std::move(shm);
}

std::size_t Transport::slice_bytes() const {
  if (force_tcp_ || kind_ == TransportKind::kTcp || unsliced_) return 0;
  return ring_bytes_ / 2;
}

Path Transport::path_to(int peer) const {
  if (force_tcp_ || !shm_ || !shm_->peer.at(static_cast<std::size_t>(peer)).mapped()) return Path::kTcp;
  return Path::kShm;
}

std::string Transport::paths_name() const {
  bool tcp = false;
  bool shm = false;
  for (int p = 0; p < world_; ++p) {
    if (p == rank_) continue;
    (path_to(p) == Path::kShm ? shm : tcp) = true;
  }
  return shm && tcp ? "shm+tcp" : (shm ? "shm" : "tcp");
}

int Transport::ranks_on_shm() const {
  if (!shm_) return 1;
  return 1 + static_cast<int>(std::count_if(shm_->peer.begin(), shm_->peer.end(),
                                            [](const ShmSegment& s) { return s.mapped(); }));
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
    bool shm;
    std::size_t index;
    std::size_t done = 0;
    std::size_t total;
    std::size_t consumed = 0;  // TCP receive with consume(): bytes handed over so far
    bool dead = false;
  };
  std::vector<Op> ops;
  ops.reserve(sends.size() + recvs.size());
  for (std::size_t i = 0; i < sends.size(); ++i)
    if (!sends[i].bytes.empty()) {
      const int p = sends[i].peer;
      ops.push_back({peers_.at(p).get(), p, true, path_to(p) == Path::kShm, i, 0, sends[i].bytes.size()});
    }
  for (std::size_t i = 0; i < recvs.size(); ++i)
    if (!recvs[i].bytes.empty()) {
      const int p = recvs[i].peer;
      ops.push_back({peers_.at(p).get(), p, false, path_to(p) == Path::kShm, i, 0, recvs[i].bytes.size()});
      if (ops.back().shm && (recvs[i].unit == 0 || 8 % recvs[i].unit != 0))
        throw std::logic_error("exchange: a shared-memory receive hands over elements of 1, 2, 4 or 8 bytes");
    }
  for (std::size_t i = 0; i < ops.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (ops[i].shm && ops[j].shm && ops[i].peer == ops[j].peer && ops[i].is_send == ops[j].is_send)
        throw std::logic_error("exchange: two messages to one shared-memory peer in one step would interleave");

  const bool watchdog = timeout_.count() > 0;
  auto deadline = watchdog ? Clock::now() + timeout_ : Clock::time_point::max();
  std::vector<pollfd> pfds;
  std::vector<Op*> polled;
  std::vector<int> closed;
  const auto fail_on_timeout = [&] {
    std::vector<int> waiting;
    for (const auto& op : ops)
      if (op.done < op.total && std::find(waiting.begin(), waiting.end(), op.peer) == waiting.end())
        waiting.push_back(op.peer);
    fail(what, waiting, closed);
  };
  // Hands a TCP receive's newly arrived whole elements to its consumer.
  const auto hand_over = [&](Op& op) {
    const RecvOp& r = recvs[op.index];
    if (!r.consume) return;
    std::size_t n = op.done - op.consumed;
    if (op.done < op.total) n -= n % r.unit;  // an element split across reads completes later
    if (n == 0) return;
    r.consume(op.consumed, std::span<const std::byte>(r.bytes.data() + op.consumed, n));
    op.consumed += n;
  };
  for (;;) {
    // The doorbell's value before looking at the rings: a wake-up after this
    // read changes it, so the wait below cannot miss one.
    const std::uint32_t bell = shm_ ? shm_->mine.doorbell().seq.load(std::memory_order_acquire) : 0;
    bool progress = false;
    bool tcp_pending = false;
    bool shm_pending = false;
    for (auto& op : ops) {
      if (op.done == op.total) continue;
      if (!op.shm) {
        tcp_pending = tcp_pending || !op.dead;
        continue;
      }
      if (op.is_send) {
        const ShmSegment& seg = shm_->peer.at(static_cast<std::size_t>(op.peer));
        const std::size_t n = ring_write(seg.ring(rank_), sends[op.index].bytes, op.done);
        if (n > 0) {
          op.done += n;
          bytes_sent_ += n;
          ring_doorbell(seg.doorbell());  // data for the receiver
        }
        progress = progress || n > 0;
      } else {
        const RecvOp& r = recvs[op.index];
        const RingView h = shm_->mine.ring(op.peer);
        const auto piece = ring_peek(h, op.total, op.done);
        if (!piece.empty()) {
          if (r.consume)
            r.consume(op.done, piece);
          else
            std::memcpy(r.bytes.data() + op.done, piece.data(), piece.size());
          op.done += piece.size();
          bytes_received_ += piece.size();
          ring_release(h, piece.size(), op.done == op.total);
          ring_doorbell(shm_->peer.at(static_cast<std::size_t>(op.peer)).doorbell());  // room for the sender
          progress = true;
        }
      }
      shm_pending = shm_pending || op.done < op.total;
    }
    const bool all_done = std::all_of(ops.begin(), ops.end(), [](const Op& o) { return o.done == o.total; });
    if (all_done) return;

    if (tcp_pending || !shm_pending) {
      pfds.clear();
      polled.clear();
      for (auto& op : ops) {
        if (op.done == op.total || op.dead || op.shm) continue;
        pfds.push_back({op.fd, static_cast<short>(op.is_send ? POLLOUT : POLLIN), 0});
        polled.push_back(&op);
      }
      // With every remaining op on a dead peer nothing can finish: poll(nothing)
      // then only waits for the watchdog — or, without one, forever (the hang).
      // Shared-memory ops still pending (peers on both paths): look again soon.
      int wait_ms = watchdog ? ms_until(deadline) : -1;
      if (shm_pending) wait_ms = progress ? 0 : (wait_ms < 0 ? 1 : std::min(wait_ms, 1));
      const int n = ::poll(pfds.data(), pfds.size(), wait_ms);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw std::runtime_error(fmt::format("poll: {}", std::strerror(errno)));
      }
      for (std::size_t i = 0; n > 0 && i < pfds.size(); ++i) {
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
          op.done += static_cast<std::size_t>(got);
          progress = true;
          if (op.is_send) {
            bytes_sent_ += static_cast<std::uint64_t>(got);
          } else {
            bytes_received_ += static_cast<std::uint64_t>(got);
            hand_over(op);
          }
        } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
          op.dead = true;  // EOF, EPIPE, ECONNRESET: this peer is gone; keep waiting for the watchdog
          closed.push_back(op.peer);
        }
      }
    } else if (!progress) {
      wait_doorbell(shm_->mine.doorbell(), bell, shm_->spin, deadline);
    }
    if (progress) {
      if (watchdog) deadline = Clock::now() + timeout_;
    } else if (watchdog && Clock::now() >= deadline) {
      fail_on_timeout();
    }
  }
}

Transport connect_mesh(int rank, const std::vector<Endpoint>& endpoints, Fd listener,
                       std::chrono::milliseconds timeout, Clock::time_point setup_deadline,
                       const TransportOptions& opts) {
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
  Transport t(rank, world, std::move(peers), timeout);
  t.setup_paths(opts, setup_deadline);
  return t;
}

}  // namespace ring
