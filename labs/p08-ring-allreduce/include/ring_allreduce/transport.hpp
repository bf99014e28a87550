// A rank's connections to its peers and the one primitive every collective is
// built from: exchange(), which drives any number of sends and receives at
// once with non-blocking sockets and poll(). Because a rank never waits for
// its send to finish before it reads, two neighbours that both send first can
// never deadlock on full socket buffers (pitfall 1).
//
// exchange() is also the watchdog: when no byte moves for `timeout`, it probes
// every peer connection and throws PeerFailure naming the ranks whose
// connections were closed — a dead rank's kernel closes its sockets, so they
// read as end-of-file. With no timeout, a dead peer makes it wait forever,
// exactly like a NCCL job without NCCL_TIMEOUT.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ring_allreduce/socket.hpp"

namespace ring {

struct PeerFailure : std::runtime_error {
  PeerFailure(const std::string& what, std::vector<int> closed) : std::runtime_error(what), suspects(std::move(closed)) {}
  std::vector<int> suspects;  // ranks whose connection was closed (dead); empty when all are alive but silent
};

struct SendOp {
  int peer = 0;
  std::span<const std::byte> bytes;
};

struct RecvOp {
  int peer = 0;
  std::span<std::byte> bytes;
  // Called as bytes arrive with the newly filled byte range [from, to), so a
  // reduction can consume data while the rest is still on the wire.
  std::function<void(std::size_t from, std::size_t to)> on_data;
};

struct Endpoint {
  std::string address;
  std::uint16_t port = 0;
};

class Transport {
 public:
  // `peers[p]` is the connection to rank p (invalid for p == rank).
  Transport(int rank, int world, std::vector<Fd> peers, std::chrono::milliseconds timeout);

  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int world() const { return world_; }
  [[nodiscard]] std::chrono::milliseconds timeout() const { return timeout_; }

  // Runs all sends and receives to completion. `what` names the step in errors.
  void exchange(std::span<const SendOp> sends, std::span<RecvOp> recvs, std::string_view what);

  // Payload bytes written to / read from sockets since the last reset.
  [[nodiscard]] std::uint64_t bytes_sent() const { return bytes_sent_; }
  [[nodiscard]] std::uint64_t bytes_received() const { return bytes_received_; }
  void reset_counters() { bytes_sent_ = bytes_received_ = 0; }

  // Ranks whose connection to us reads as closed right now.
  [[nodiscard]] std::vector<int> closed_peers() const;

 private:
  [[noreturn]] void fail(std::string_view what, const std::vector<int>& waiting_on, std::vector<int> closed) const;

  int rank_;
  int world_;
  std::vector<Fd> peers_;
  std::chrono::milliseconds timeout_;
  std::uint64_t bytes_sent_ = 0;
  std::uint64_t bytes_received_ = 0;
};

// Builds the full mesh: rank r connects to every lower rank and accepts every
// higher one; a 4-byte rank id handshake says who is who (not counted as payload).
Transport connect_mesh(int rank, const std::vector<Endpoint>& endpoints, Fd listener,
                       std::chrono::milliseconds timeout, Clock::time_point setup_deadline);

}  // namespace ring
