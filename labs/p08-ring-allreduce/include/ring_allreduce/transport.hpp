// A rank's connections to its peers and the one primitive every collective is
// built from: exchange(), which drives any number of sends and receives at
// once. Because a rank never waits for its send to finish before it reads,
// two neighbours that both send first can never deadlock on full buffers
// (pitfall 1).
//
// Two data paths sit behind exchange(), chosen per peer at the rendezvous the
// way NCCL picks SHM inside a node and sockets across nodes: shared-memory
// rings (shm_channel.hpp) to ranks on this host, non-blocking TCP sockets
// driven by poll() to the others. Every peer keeps its TCP connection either
// way: it is how the watchdog tells a dead rank from a slow one.
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
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ring_allreduce/shm_channel.hpp"
#include "ring_allreduce/socket.hpp"

namespace ring {

class RelayPlan;  // relay.hpp

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
  // Where the message lands. With `consume` set it is only scratch space of
  // the message's size: TCP receives into it, shared memory leaves it alone.
  std::span<std::byte> bytes;
  // When set, the arrived bytes are handed to consume(offset, data) in whole
  // multiples of `unit` (one element) instead of being left in `bytes`; over
  // shared memory straight from the ring, so a reduction adds them without a
  // copy, while the rest of the message is still on its way.
  std::function<void(std::size_t offset, std::span<const std::byte> data)> consume;
  std::size_t unit = 1;
};

// --transport: which data path carries the bytes between ranks.
enum class TransportKind {
  kAuto,  // shared memory to ranks on this host, TCP to the others
  kShm,   // shared memory to every peer; an error when one is on another host
  kTcp,   // TCP to every peer, also on this host (the lab's original path)
};
std::string_view transport_kind_name(TransportKind k);
// Throws std::invalid_argument for anything but auto, shm or tcp.
TransportKind parse_transport_kind(std::string_view name);

struct TransportOptions {
  // TCP unless asked: labs built on this one (p08-topology's calibration,
  // p12-platform's gangs) keep the path their READMEs describe until they opt
  // in. ring-allreduce's --transport defaults to auto.
  TransportKind kind = TransportKind::kTcp;
  // How long a rank with nothing to do spins on its doorbell before it sleeps
  // on the futex. Negative: spin 50 us when this host has a core for every
  // rank on it, otherwise not at all (a spinning rank would steal the core the
  // rank it waits for needs).
  std::chrono::microseconds spin{-1};
  // Bytes of each shared-memory ring (shm_channel.hpp: a power of two, at
  // least kShmMinRingBytes). The ring all-reduce cuts its chunks into slices
  // of half a ring, so it must be the same on every rank.
  std::size_t ring_bytes = kShmRingBytes;
  // Tests only: the ring all-reduce in one round whatever the ring size, so
  // each message may be many rings long and only relay()'s rules keep it
  // from deadlocking (relay.cpp).
  bool unsliced = false;
};

// Bytes on the wire per direction and peer kind, for the byte-count proof.
enum class Path { kTcp, kShm };
std::string_view path_name(Path p);

struct Endpoint {
  std::string address;
  std::uint16_t port = 0;
};

class Transport {
 public:
  // `peers[p]` is the connection to rank p (invalid for p == rank); every
  // peer is on TCP until enable_shm().
  Transport(int rank, int world, std::vector<Fd> peers, std::chrono::milliseconds timeout);
  Transport(Transport&&) noexcept;
  Transport& operator=(Transport&&) noexcept;
  ~Transport();

  // The rendezvous's second half: swaps host identities with every peer over
  // its connection and maps shared memory with those on this host (all of
  // them for kShm, which throws when one is elsewhere or cannot be mapped;
  // kAuto keeps such a pair on TCP). Collective: every rank calls it with the
  // same kind, before the first exchange.
  void setup_paths(const TransportOptions& opts, Clock::time_point deadline);

  // The path the data to and from `peer` takes now.
  [[nodiscard]] Path path_to(int peer) const;
  // "shm", "tcp" or "shm+tcp": what the paths in use are.
  [[nodiscard]] std::string paths_name() const;
  [[nodiscard]] bool has_shm() const { return shm_ != nullptr; }
  // Sends everything over TCP while `on` (to time both paths in one run);
  // every rank must switch between the same two collectives.
  void force_tcp(bool on) { force_tcp_ = on; }
  // Ranks on this host sharing memory with us, ourselves included.
  [[nodiscard]] int ranks_on_shm() const;

  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int world() const { return world_; }
  [[nodiscard]] std::chrono::milliseconds timeout() const { return timeout_; }

  // Runs all sends and receives to completion. `what` names the step in errors.
  void exchange(std::span<const SendOp> sends, std::span<RecvOp> recvs, std::string_view what);

  // Streams `plan`'s messages to `to` while receiving its messages from
  // `from`, forwarding what arrives in the same pass where it can
  // (relay.hpp: NCCL's recvReduceSend / recvCopySend). The watchdog as in
  // exchange(); src/relay.cpp says why it cannot deadlock.
  void relay(int to, int from, RelayPlan& plan);

  // Bytes per message slice that every rank of this job agrees on: half a
  // shared ring (two slices in flight per link) unless every byte goes over
  // TCP, where slices buy nothing (0: no limit).
  [[nodiscard]] std::size_t slice_bytes() const;

  // Payload bytes written to / read from the transport (sockets or shared
  // rings; padding and handshakes not counted) since the last reset.
  [[nodiscard]] std::uint64_t bytes_sent() const { return bytes_sent_; }
  [[nodiscard]] std::uint64_t bytes_received() const { return bytes_received_; }
  // Of bytes_sent(): those relay() forwarded from the incoming ring to the
  // outgoing one in one pass (the rest were sent from local memory).
  [[nodiscard]] std::uint64_t bytes_forwarded() const { return bytes_forwarded_; }
  void reset_counters() { bytes_sent_ = bytes_received_ = bytes_forwarded_ = 0; }

  // Ranks whose connection to us reads as closed right now.
  [[nodiscard]] std::vector<int> closed_peers() const;

 private:
  [[noreturn]] void fail(std::string_view what, const std::vector<int>& waiting_on, std::vector<int> closed) const;

  struct Shm;  // this rank's segment and its same-host peers'

  int rank_;
  int world_;
  std::vector<Fd> peers_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<Shm> shm_;
  bool force_tcp_ = false;
  TransportKind kind_ = TransportKind::kTcp;  // what setup_paths() was asked for
  std::size_t ring_bytes_ = kShmRingBytes;
  bool unsliced_ = false;
  std::vector<std::byte> tcp_scratch_;  // relay(): TCP bytes land here before they are reduced
  std::uint64_t bytes_sent_ = 0;
  std::uint64_t bytes_received_ = 0;
  std::uint64_t bytes_forwarded_ = 0;
};

// Builds the full mesh: rank r connects to every lower rank and accepts every
// higher one; a 4-byte rank id handshake says who is who (not counted as
// payload). Then setup_paths(opts) picks shared memory or TCP for each peer.
Transport connect_mesh(int rank, const std::vector<Endpoint>& endpoints, Fd listener,
                       std::chrono::milliseconds timeout, Clock::time_point setup_deadline,
                       const TransportOptions& opts = {});

}  // namespace ring
