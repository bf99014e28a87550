// The shared-memory data path between ranks on one host (NCCL's SHM
// transport, in miniature). Every rank owns one memfd segment holding its
// doorbell and one byte ring per peer: ring p of rank r's segment carries the
// stream p -> r. A sender copies into the receiver's ring and rings the
// receiver's doorbell; the receiver consumes the bytes where they lie (the
// ring all-reduce adds them to its own slice and writes the sum straight into
// the next rank's ring, relay.hpp) and rings
// the sender's doorbell so it can refill. A rank with nothing to do sleeps on
// its own doorbell with FUTEX_WAIT, so four ranks on two cores hand the cores
// to whoever has work instead of spinning on them.
//
// The segments have no name: a memfd is freed by the kernel when its last
// mapping goes, so a rank that dies (or is SIGKILLed by the launcher) leaves
// nothing in /dev/shm. Peers reach it through /proc/<pid>/fd/<fd> while its
// owner is alive during the rendezvous; after that only mappings hold it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ring {

// Bytes each directed ring holds by default (TransportOptions::ring_bytes). A
// power of two, a multiple of 8 (so an element never straddles the wrap),
// small enough that the rings a rank uses stay in the shared L3 and large
// enough that a 4 MiB chunk costs a handful of wake-ups.
inline constexpr std::size_t kShmRingBytes = std::size_t{1} << 20;
// The smallest ring accepted: tests shrink the ring far below a chunk to
// prove the fused ring all-reduce cannot deadlock on any ratio of the two.
inline constexpr std::size_t kShmMinRingBytes = 64;
// A power of two from kShmMinRingBytes up to 1 GiB.
bool valid_ring_bytes(std::size_t bytes);
// Largest piece copied before it is published: the receiver starts reducing
// piece k while the sender still copies piece k+1.
inline constexpr std::size_t kShmPieceBytes = std::size_t{64} << 10;

// One rank's doorbell: a futex word bumped by anyone who made progress this
// rank may be waiting for, plus a count of sleepers so a notifier only makes
// the wake-up syscall when someone sleeps (the eventcount pattern).
struct alignas(64) Doorbell {
  std::atomic<std::uint32_t> seq{0};
  std::atomic<std::uint32_t> sleepers{0};
};

// Stream positions of one directed ring; each on its own cache line, since
// the writer owns head and the reader owns tail.
struct alignas(64) RingHeader {
  std::atomic<std::uint64_t> head{0};  // bytes published by the writer (padding included)
  alignas(64) std::atomic<std::uint64_t> tail{0};  // bytes released by the reader
};

// One directed ring as either end sees it: its positions, its bytes, its size
// (the receiver's segment decides it; a sender reads it from there).
struct RingView {
  RingHeader* header = nullptr;
  std::byte* data = nullptr;
  std::size_t capacity = 0;
};

// A memfd segment mapped into this process (a rank's own, or a peer's).
class ShmSegment {
 public:
  ShmSegment() = default;
  // Creates and maps a zeroed segment for a world of `world` ranks whose rings
  // hold `ring_bytes` each (valid_ring_bytes); throws std::runtime_error.
  static ShmSegment create(int world, int owner_rank, std::size_t ring_bytes = kShmRingBytes);
  // Maps the segment rank `owner_rank` created, through /proc/`pid`/fd/`fd`; throws
  // std::runtime_error.
  static ShmSegment open_peer(int world, int owner_rank, int pid, int fd);
  ShmSegment(ShmSegment&& o) noexcept;
  ShmSegment& operator=(ShmSegment&& o) noexcept;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;
  ~ShmSegment();

  [[nodiscard]] bool mapped() const { return base_ != nullptr; }
  // The creator's descriptor, open until close_fd(): peers open it through /proc during the
  // rendezvous.
  [[nodiscard]] int fd() const { return fd_; }
  void close_fd();

  [[nodiscard]] Doorbell& doorbell() const;
  // The ring carrying bytes from rank `from` to this segment's owner.
  [[nodiscard]] RingView ring(int from) const;
  [[nodiscard]] RingHeader& header(int from) const { return *ring(from).header; }
  [[nodiscard]] std::byte* data(int from) const { return ring(from).data; }
  [[nodiscard]] std::size_t ring_bytes() const { return ring_bytes_; }

  [[nodiscard]] static std::size_t bytes_for(int world, std::size_t ring_bytes = kShmRingBytes);

 private:
  ShmSegment(int world, std::byte* base, std::size_t size, int fd, std::size_t ring_bytes)
      : world_(world), base_(base), size_(size), fd_(fd), ring_bytes_(ring_bytes) {}
  int world_ = 0;
  std::byte* base_ = nullptr;
  std::size_t size_ = 0;
  int fd_ = -1;
  std::size_t ring_bytes_ = 0;
};

// Bumps `bell` and wakes its sleepers, if any.
void ring_doorbell(Doorbell& bell);

// How a rank waits on its doorbell once it has nothing to do: spin up to
// `spin` watching the word (cheap when the peer runs on another core and is
// about to publish), then FUTEX_WAIT. Returns when the word differs from
// `seen` or at `deadline`.
void wait_doorbell(Doorbell& bell, std::uint32_t seen, std::chrono::microseconds spin,
                   std::chrono::steady_clock::time_point deadline);

// Moves up to one piece of `src` (a whole message) into the ring, no further
// than `ready` bytes into it; returns the payload bytes written (0 when the
// ring is full). `sent` is how much of the message went before; the
// message's last piece pads the stream to 8 bytes, so every message starts
// aligned and no element straddles the wrap.
std::size_t ring_write(const RingView& r, std::span<const std::byte> src, std::size_t sent, std::size_t ready);
inline std::size_t ring_write(const RingView& r, std::span<const std::byte> src, std::size_t sent) {
  return ring_write(r, src, sent, src.size());
}
// The room for the next bytes of a `total`-byte message of which `sent` were
// published, where they will lie in the ring: at most one piece, a multiple
// of 8 bytes except the message's last; empty when the ring is full. The
// fused all-reduce writes its sums straight into it, then ring_publish().
std::span<std::byte> ring_reserve(const RingView& r, std::size_t total, std::size_t sent);
// Publishes the first `n` bytes of the last ring_reserve() (with the
// message's padding once `message_done`).
void ring_publish(const RingView& r, std::size_t n, bool message_done);
// The next bytes of a `total`-byte message of which `received` were
// consumed, where they lie in the ring: at most one piece, a multiple of 8
// bytes except the message's last; empty when nothing has arrived.
std::span<const std::byte> ring_peek(const RingView& r, std::size_t total, std::size_t received);
// Gives the `n` bytes ring_peek() returned back to the writer (with the
// message's padding once `message_done`).
void ring_release(const RingView& r, std::size_t n, bool message_done);
// The reader's view: is the ring so full that its writer cannot move a byte?
// (A writer only ever waits for that: it writes whatever multiple of 8 fits.)
bool ring_full(const RingView& r);

}  // namespace ring
