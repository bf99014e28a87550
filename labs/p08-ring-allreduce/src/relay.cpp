// Transport::relay(): one outgoing and one incoming stream of messages, where
// outgoing message i+1 is made of incoming message i (relay.hpp).
//
// Why it cannot deadlock, for any ratio of message to ring size. Every rank
// follows three rules:
//   1. Outgoing bytes already in local memory are written whenever the link
//      takes them (a send only ever waits for room, never for anything else).
//   2. An incoming piece is forwarded in one pass when the outgoing stream has
//      caught up to it and the outgoing ring has room; otherwise it is landed
//      in local memory (to be sent from there by rule 1) — except that a rank
//      may leave it in its incoming ring while that ring is not full, so that
//      it can still be forwarded in one pass once the right neighbour drains.
//   3. Over TCP, incoming bytes are always landed at once.
// Suppose every rank waited forever. A rank that leaves input in its ring does
// so only while its outgoing ring is full and its incoming ring is not; but
// then its right neighbour's incoming ring is full, and that neighbour must
// land its input (rule 2): not all can wait. So no rank holds input back, and
// each waits with an empty incoming ring and nothing it could send. Its
// outgoing stream then waits on its incoming one (outgoing message i+1 needs
// incoming i), which waits on the left neighbour's outgoing stream at a lower
// message index; around the ring that is a strictly decreasing cycle,
// impossible, unless some rank is at a message that needs no input (step 0),
// which it can always send. So a relay only stops when a peer dies, and the
// watchdog says which. The ring size only decides how often the one-pass path
// is taken; the ring all-reduce slices its messages to half a ring so that in
// the steady state it always is (ring_pipeline.hpp).
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ring_allreduce/relay.hpp"
#include "ring_allreduce/transport.hpp"
#include "transport_shm.hpp"

namespace ring {
namespace {

// TCP bytes of a message to be reduced land here first: small enough to stay
// in L2, so the add reads them back from cache, not from memory.
constexpr std::size_t kTcpScratchBytes = std::size_t{256} << 10;

bool transient(int err) { return err == EAGAIN || err == EWOULDBLOCK || err == EINTR; }

}  // namespace

void Transport::relay(int to, int from, RelayPlan& plan) {
  const std::size_t count = plan.messages();
  if (count == 0) return;
  const bool out_shm = path_to(to) == Path::kShm;
  const bool in_shm = path_to(from) == Path::kShm;
  const RingView out_ring = out_shm ? shm_->peer.at(static_cast<std::size_t>(to)).ring(rank_) : RingView{};
  const RingView in_ring = in_shm ? shm_->mine.ring(from) : RingView{};
  const int out_fd = peers_.at(static_cast<std::size_t>(to)).get();
  const int in_fd = peers_.at(static_cast<std::size_t>(from)).get();
  if (!in_shm && tcp_scratch_.size() < kTcpScratchBytes) tcp_scratch_.resize(kTcpScratchBytes);
  std::size_t have = 0;  // TCP: bytes of incoming message ii at offset io waiting in tcp_scratch_

  std::size_t oi = 0, oo = 0;  // outgoing: message, bytes of it sent
  std::size_t ii = 0, io = 0;  // incoming: message, bytes of it landed or forwarded
  std::size_t begun = 0;
  const auto out_size = [&](std::size_t i) { return plan.out_bytes(i).size(); };
  // Moves both cursors past finished (and empty) messages; a message begins
  // when the outgoing cursor reaches it, before its first byte is sent.
  const auto settle = [&] {
    for (;;) {
      while (begun <= oi && begun < count) plan.begin(begun++);
      bool moved = false;
      if (oi < count && oo == out_size(oi)) {
        ++oi;
        oo = 0;
        moved = true;
      }
      if (ii < count && io == plan.in_size(ii)) {
        ++ii;
        io = 0;
        moved = true;
      }
      if (!moved) return;
    }
  };
  // How much of outgoing message oi is in local memory by now.
  const auto ready = [&]() -> std::size_t {
    if (!plan.derived(oi) || ii >= oi) return out_size(oi);
    return ii + 1 == oi ? io : 0;
  };
  const auto ring_to = [&] { ring_doorbell(shm_->peer[static_cast<std::size_t>(to)].doorbell()); };
  const auto ring_from = [&] { ring_doorbell(shm_->peer[static_cast<std::size_t>(from)].doorbell()); };

  bool in_dead = false;
  bool out_dead = false;
  std::vector<int> closed;
  const bool watchdog = timeout_.count() > 0;
  auto deadline = watchdog ? Clock::now() + timeout_ : Clock::time_point::max();
  settle();
  for (;;) {
    // The doorbell's value before looking at the rings: a wake-up after this
    // read changes it, so the wait below cannot miss one.
    const std::uint32_t bell = shm_ ? shm_->mine.doorbell().seq.load(std::memory_order_acquire) : 0;
    bool progress = false;

    // Rule 1: outgoing bytes already in local memory.
    while (oi < count && !out_dead) {
      const std::size_t r = ready();
      if (r <= oo) break;
      std::size_t n = 0;
      if (out_shm) {
        n = ring_write(out_ring, plan.out_bytes(oi), oo, r);
        if (n > 0) ring_to();
      } else {
        const ssize_t got = ::send(out_fd, plan.out_bytes(oi).data() + oo, r - oo, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (got > 0) {
          n = static_cast<std::size_t>(got);
        } else if (!transient(errno)) {
          out_dead = true;  // EPIPE, ECONNRESET: this peer is gone; keep waiting for the watchdog
          closed.push_back(to);
        }
      }
      if (n == 0) break;
      oo += n;
      bytes_sent_ += n;
      progress = true;
      settle();
    }

    // Rules 2 and 3: one incoming piece, then back to rule 1, so what it
    // made ready goes out before the next piece comes in.
    for (int pieces = 0; ii < count && pieces < 1; ++pieces) {
      const std::size_t total = plan.in_size(ii);
      std::span<const std::byte> piece;
      if (in_shm) {
        piece = ring_peek(in_ring, total, io);
        if (piece.empty()) break;
      } else {
        const auto place = plan.in_place(ii);
        if (!place.empty() && !out_shm) {  // a copy, sent on from there: read it straight into place
          if (in_dead) break;
          const ssize_t got = ::recv(in_fd, place.data() + io, total - io, MSG_DONTWAIT);
          if (got > 0) {
            io += static_cast<std::size_t>(got);
            bytes_received_ += static_cast<std::uint64_t>(got);
            progress = true;
            settle();
            continue;
          }
          if (got == 0 || !transient(errno)) {
            in_dead = true;  // end of file: the peer closed
            closed.push_back(from);
          }
          break;
        }
        if (!in_dead && io + have < total && have < tcp_scratch_.size()) {
          const ssize_t got = ::recv(in_fd, tcp_scratch_.data() + have,
                                     std::min(tcp_scratch_.size() - have, total - io - have), MSG_DONTWAIT);
          if (got > 0) {
            have += static_cast<std::size_t>(got);
            bytes_received_ += static_cast<std::uint64_t>(got);
            progress = true;
          } else if (got == 0 || !transient(errno)) {
            in_dead = true;
            closed.push_back(from);
          }
        }
        std::size_t n = have;
        if (io + n < total) n &= ~std::size_t{7};  // whole 8-byte units, as the shared rings hand them over
        if (n == 0) break;
        piece = std::span<const std::byte>(tcp_scratch_.data(), n);
      }

      const bool forwardable = ii + 1 < count && plan.derived(ii + 1) && out_shm;
      std::size_t used = 0;
      if (forwardable && oi == ii + 1 && oo == io) {
        const auto room = ring_reserve(out_ring, out_size(oi), oo);
        std::size_t n = std::min(room.size(), piece.size());
        if (io + n < total) n &= ~std::size_t{7};
        if (n > 0) {
          plan.forward(ii, io, piece.first(n), room.first(n));
          ring_publish(out_ring, n, oo + n == out_size(oi));
          ring_to();
          oo += n;
          bytes_sent_ += n;
          bytes_forwarded_ += n;
          used = n;
        }
      }
      if (used == 0) {
        // The outgoing ring is full. Keep the piece for a one-pass forward
        // later, unless that could make the left neighbour wait on us.
        if (forwardable && in_shm && !ring_full(in_ring)) break;
        plan.land(ii, io, piece);
        used = piece.size();
      }
      io += used;
      progress = true;
      if (in_shm) {
        bytes_received_ += used;
        ring_release(in_ring, used, io == total);
        ring_from();  // room for the sender
      } else {
        have -= used;
        std::memmove(tcp_scratch_.data(), tcp_scratch_.data() + used, have);
      }
      settle();
    }

    if (oi == count && ii == count) return;

    // Nothing more moves now: wait for a socket or the doorbell.
    if (!progress) {
      const bool tcp_in = !in_shm && ii < count && !in_dead;
      const bool tcp_out = !out_shm && oi < count && !out_dead && ready() > oo;
      const bool shm_pending = (in_shm && ii < count) || (out_shm && oi < count);
      if (tcp_in || tcp_out || !shm_pending) {
        pollfd fds[2];
        nfds_t nfds = 0;
        if (tcp_in) fds[nfds++] = {in_fd, POLLIN, 0};
        if (tcp_out) fds[nfds++] = {out_fd, POLLOUT, 0};
        int wait_ms = watchdog ? ms_until(deadline) : -1;
        if (shm_pending) wait_ms = wait_ms < 0 ? 1 : std::min(wait_ms, 1);
        if (::poll(fds, nfds, wait_ms) < 0 && errno != EINTR)
          throw std::runtime_error(fmt::format("poll: {}", std::strerror(errno)));
      } else {
        wait_doorbell(shm_->mine.doorbell(), bell, shm_->spin, deadline);
      }
    }
    if (progress) {
      if (watchdog) deadline = Clock::now() + timeout_;
    } else if (watchdog && Clock::now() >= deadline) {
      std::vector<int> waiting;
      if (ii < count) waiting.push_back(from);
      if (oi < count && ready() > oo && std::find(waiting.begin(), waiting.end(), to) == waiting.end())
        waiting.push_back(to);
      if (waiting.empty()) waiting.push_back(to);
      fail(plan.describe(ii < count ? ii : oi), waiting, closed);
    }
  }
}

}  // namespace ring
