#include "ring_allreduce/shm_channel.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

namespace ring {
namespace {

// Layout: the doorbell, the ring size, one header per possible sender, then
// one ring per possible sender, page aligned. Rings from senders that never
// write stay untouched, so their pages are never allocated.
constexpr std::size_t kPage = 4096;
struct alignas(64) SegmentInfo {
  std::uint64_t ring_bytes;  // written once by the creator, before any peer maps it
};
constexpr std::size_t info_offset() {
  return sizeof(Doorbell);
}
constexpr std::size_t headers_offset() {
  return info_offset() + sizeof(SegmentInfo);
}
std::size_t rings_offset(int world) {
  const std::size_t end = headers_offset() + sizeof(RingHeader) * static_cast<std::size_t>(world);
  return (end + kPage - 1) / kPage * kPage;
}
constexpr std::size_t align8(std::size_t n) {
  return (n + 7) & ~std::size_t{7};
}

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(fmt::format("{}: {}", what, std::strerror(errno)));
}

std::byte* map(int fd, std::size_t size, const std::string& what) {
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) fail("mmap " + what);
  return static_cast<std::byte*>(p);
}

long futex(std::atomic<std::uint32_t>* word, int op, std::uint32_t val, const timespec* timeout) {
  // Not FUTEX_PRIVATE_FLAG: the word lives in memory shared between processes.
  return ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), op, val, timeout, nullptr, 0);
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

bool valid_ring_bytes(std::size_t bytes) {
  return bytes >= kShmMinRingBytes && bytes <= (std::size_t{1} << 30) && (bytes & (bytes - 1)) == 0;
}

std::size_t ShmSegment::bytes_for(int world, std::size_t ring_bytes) {
  return rings_offset(world) + ring_bytes * static_cast<std::size_t>(world);
}

ShmSegment ShmSegment::create(int world, int owner_rank, std::size_t ring_bytes) {
  if (!valid_ring_bytes(ring_bytes))
    throw std::runtime_error(fmt::format("shared-memory ring of {} bytes: not a power of two from {} to 1 GiB",
                                         ring_bytes, kShmMinRingBytes));
  const std::string name = fmt::format("gpulab-ring-rank{}", owner_rank);
  const int fd = ::memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd < 0) fail("memfd_create");
  const std::size_t size = bytes_for(world, ring_bytes);
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    const int e = errno;
    ::close(fd);
    errno = e;
    fail("ftruncate of the shared-memory segment");
  }
  std::byte* base = nullptr;
  try {
    base = map(fd, size, "of this rank's segment");
  } catch (...) {
    ::close(fd);
    throw;
  }
  ShmSegment s(world, base, size, fd, ring_bytes);
  new (&s.doorbell()) Doorbell();
  new (base + info_offset()) SegmentInfo{ring_bytes};
  for (int p = 0; p < world; ++p) new (&s.header(p)) RingHeader();
  return s;
}

ShmSegment ShmSegment::open_peer(int world, int owner_rank, int pid, int fd) {
  // Reopening the owner's descriptor through /proc gives this process its own
  // reference to the same memfd; no name exists that could outlive the job.
  const std::string path = fmt::format("/proc/{}/fd/{}", pid, fd);
  const int mine = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (mine < 0) fail(fmt::format("open rank {}'s segment {}", owner_rank, path));
  // The ring size is the owner's choice: read it from the segment (its first
  // page), then map the whole.
  SegmentInfo info{};
  if (::pread(mine, &info, sizeof info, static_cast<off_t>(info_offset())) != static_cast<ssize_t>(sizeof info)) {
    const int e = errno;
    ::close(mine);
    errno = e;
    fail(fmt::format("read rank {}'s segment header", owner_rank));
  }
  if (!valid_ring_bytes(info.ring_bytes)) {
    ::close(mine);
    throw std::runtime_error(fmt::format("rank {}'s segment: a ring of {} bytes", owner_rank, info.ring_bytes));
  }
  const std::size_t size = bytes_for(world, info.ring_bytes);
  std::byte* base = nullptr;
  try {
    base = map(mine, size, fmt::format("of rank {}'s segment", owner_rank));
  } catch (...) {
    ::close(mine);
    throw;
  }
  ::close(mine);  // the mapping holds the memory
  return ShmSegment(world, base, size, -1, info.ring_bytes);
}

ShmSegment::ShmSegment(ShmSegment&& o) noexcept
    : world_(o.world_),
      base_(std::exchange(o.base_, nullptr)),
      size_(o.size_),
      fd_(std::exchange(o.fd_, -1)),
      ring_bytes_(o.ring_bytes_) {}

ShmSegment& ShmSegment::operator=(ShmSegment&& o) noexcept {
  ShmSegment tmp(std::move(o));
  std::swap(world_, tmp.world_);
  std::swap(base_, tmp.base_);
  std::swap(size_, tmp.size_);
  std::swap(fd_, tmp.fd_);
  std::swap(ring_bytes_, tmp.ring_bytes_);
  return *this;
}

ShmSegment::~ShmSegment() {
  if (base_ != nullptr) ::munmap(base_, size_);
  close_fd();
}

void ShmSegment::close_fd() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Doorbell& ShmSegment::doorbell() const {
  return *std::launder(reinterpret_cast<Doorbell*>(base_));
}

RingView ShmSegment::ring(int from) const {
  const auto p = static_cast<std::size_t>(from);
  return {std::launder(reinterpret_cast<RingHeader*>(base_ + headers_offset() + sizeof(RingHeader) * p)),
          base_ + rings_offset(world_) + ring_bytes_ * p, ring_bytes_};
}

void ring_doorbell(Doorbell& bell) {
  // seq_cst on both sides of the eventcount: either the sleeper registered
  // before this load (and is woken), or its FUTEX_WAIT sees the new seq.
  bell.seq.fetch_add(1, std::memory_order_seq_cst);
  if (bell.sleepers.load(std::memory_order_seq_cst) != 0)
    futex(&bell.seq, FUTEX_WAKE, INT_MAX, nullptr);
}

void wait_doorbell(Doorbell& bell, std::uint32_t seen, std::chrono::microseconds spin,
                   std::chrono::steady_clock::time_point deadline) {
  using SteadyClock = std::chrono::steady_clock;
  if (spin.count() > 0) {
    const auto stop = std::min(deadline, SteadyClock::now() + spin);
    for (int i = 0;; ++i) {
      if (bell.seq.load(std::memory_order_acquire) != seen) return;
      if ((i & 63) == 63 && SteadyClock::now() >= stop) break;
      cpu_relax();
    }
  }
  bell.sleepers.fetch_add(1, std::memory_order_seq_cst);
  const auto left = deadline - SteadyClock::now();
  if (left > SteadyClock::duration::zero()) {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
    // Bounded even without a watchdog deadline, so a lost wake-up (there
    // should be none) costs a second, not forever.
    const long long capped = std::min<long long>(ns, 1'000'000'000LL);
    const timespec ts{static_cast<time_t>(capped / 1'000'000'000LL),
                      static_cast<long>(capped % 1'000'000'000LL)};
    futex(&bell.seq, FUTEX_WAIT, seen,
          &ts);  // EAGAIN (seq moved), ETIMEDOUT, EINTR: the caller re-checks
  }
  bell.sleepers.fetch_sub(1, std::memory_order_seq_cst);
}

std::span<std::byte> ring_reserve(const RingView& r, std::size_t total, std::size_t sent) {
  RingHeader& h = *r.header;
  const std::uint64_t head = h.head.load(std::memory_order_relaxed);  // only this process writes it
  const std::uint64_t tail =
      h.tail.load(std::memory_order_acquire);  // the reader is done with what lies before
  const std::size_t free = r.capacity - static_cast<std::size_t>(head - tail);
  const std::size_t at = static_cast<std::size_t>(head % r.capacity);
  const std::size_t left = total - sent;
  std::size_t n = std::min({left, free, r.capacity - at, kShmPieceBytes});
  if (n < left) n &= ~std::size_t{7};  // only the message's last piece may end off an 8-byte boundary
  return {r.data + at, n};
}

void ring_publish(const RingView& r, std::size_t n, bool message_done) {
  RingHeader& h = *r.header;
  const std::uint64_t head = h.head.load(std::memory_order_relaxed);
  h.head.store(head + (message_done ? align8(n) : n), std::memory_order_release);
}

std::size_t ring_write(const RingView& r, std::span<const std::byte> src, std::size_t sent, std::size_t ready) {
  auto room = ring_reserve(r, src.size(), sent);
  std::size_t n = std::min(room.size(), ready - sent);
  if (sent + n < src.size()) n &= ~std::size_t{7};
  if (n == 0) return 0;
  std::memcpy(room.data(), src.data() + sent, n);
  ring_publish(r, n, sent + n == src.size());
  return n;
}

std::span<const std::byte> ring_peek(const RingView& r, std::size_t total, std::size_t received) {
  const RingHeader& h = *r.header;
  const std::uint64_t tail = h.tail.load(std::memory_order_relaxed);  // only this process writes it
  const std::uint64_t head =
      h.head.load(std::memory_order_acquire);  // the bytes before it are written
  const std::size_t avail = static_cast<std::size_t>(head - tail);
  const std::size_t at = static_cast<std::size_t>(tail % r.capacity);
  const std::size_t left = total - received;
  std::size_t n = std::min({left, avail, r.capacity - at, kShmPieceBytes});
  if (n < left) n &= ~std::size_t{7};
  return {r.data + at, n};
}

void ring_release(const RingView& r, std::size_t n, bool message_done) {
  RingHeader& h = *r.header;
  const std::uint64_t tail = h.tail.load(std::memory_order_relaxed);
  h.tail.store(tail + (message_done ? align8(n) : n), std::memory_order_release);
}

bool ring_full(const RingView& r) {
  const RingHeader& h = *r.header;
  const std::uint64_t tail = h.tail.load(std::memory_order_relaxed);
  return h.head.load(std::memory_order_acquire) - tail >= r.capacity;
}

}  // namespace ring
