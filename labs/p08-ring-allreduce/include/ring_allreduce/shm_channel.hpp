// The shared-memory data path between ranks on one host (NCCL's SHM
// transport, in miniature). Every rank owns one memfd segment holding its
// doorbell and one byte ring per peer: ring p of rank r's segment carries the
// stream p -> r. A sender copies into the receiver's ring and rings the
// receiver's doorbell; the receiver consumes the bytes where they lie (the
// ring all-reduce adds them straight from the ring, no inbox copy) and rings
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

// Bytes each directed ring can hold. A power of two, a multiple of 8 (so an
// element never straddles the wrap), small enough that the rings a rank uses
// stay in the shared L3 and large enough that a 4 MiB chunk costs a handful of wake-ups.
inline constexpr std::size_t kShmRingBytes = std::size_t{1} << 20;
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

// A memfd segment mapped into this process (a rank's own, or a peer's).
class ShmSegment {
 public:
  ShmSegment() = default;
  // Creates and maps a zeroed segment for a world of `world` ranks; throws std::runtime_error.
  static ShmSegment create(int world, int owner_rank);
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
  [[nodiscard]] RingHeader& header(int from) const;
  [[nodiscard]] std::byte* data(int from) const;

  [[nodiscard]] static std::size_t bytes_for(int world);

 private:
  ShmSegment(int world, std::byte* base, std::size_t size, int fd)
      : world_(world), base_(base), size_(size), fd_(fd) {}
  int world_ = 0;
  std::byte* base_ = nullptr;
  std::size_t size_ = 0;
  int fd_ = -1;
};

// Bumps `bell` and wakes its sleepers, if any.
void ring_doorbell(Doorbell& bell);

// How a rank waits on its doorbell once it has nothing to do: spin up to
// `spin` watching the word (cheap when the peer runs on another core and is
// about to publish), then FUTEX_WAIT. Returns when the word differs from
// `seen` or at `deadline`.
void wait_doorbell(Doorbell& bell, std::uint32_t seen, std::chrono::microseconds spin,
                   std::chrono::steady_clock::time_point deadline);

// Moves up to one piece of `src` into the ring `h`/`data`; returns the payload
// bytes written (0 when the ring is full). `sent` is how much of the message
// went before; the message's last piece pads the stream to 8 bytes, so every
// message starts aligned and no element straddles the wrap.
std::size_t ring_write(RingHeader& h, std::byte* data, std::span<const std::byte> src,
                       std::size_t sent);
// The next bytes of a `total`-byte message of which `received` were
// consumed, where they lie in the ring: at most one piece, a multiple of 8
// bytes except the message's last; empty when nothing has arrived.
std::span<const std::byte> ring_peek(const RingHeader& h, const std::byte* data, std::size_t total,
                                     std::size_t received);
// Gives the `n` bytes ring_peek() returned back to the writer (with the
// message's padding once `message_done`).
void ring_release(RingHeader& h, std::size_t n, bool message_done);

}  // namespace ring
