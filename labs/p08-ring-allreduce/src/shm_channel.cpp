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

// Layout: the doorbell, one header per possible sender, then one ring per
// possible sender, page aligned. Rings from senders that never write stay
// untouched, so their pages are never allocated.
constexpr std::size_t kPage = 4096;
constexpr std::size_t headers_offset() {
  return sizeof(Doorbell);
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

std::size_t ShmSegment::bytes_for(int world) {
  return rings_offset(world) + kShmRingBytes * static_cast<std::size_t>(world);
}

ShmSegment ShmSegment::create(int world, int owner_rank) {
  const std::string name = fmt::format("gpulab-ring-rank{}", owner_rank);
  const int fd = ::memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd < 0) fail("memfd_create");
  const std::size_t size = bytes_for(world);
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
  ShmSegment s(world, base, size, fd);
  new (&s.doorbell()) Doorbell();
  for (int p = 0; p < world; ++p) new (&s.header(p)) RingHeader();
  return s;
}

ShmSegment ShmSegment::open_peer(int world, int owner_rank, int pid, int fd) {
  // Reopening the owner's descriptor through /proc gives this process its own
  // reference to the same memfd; no name exists that could outlive the job.
  const std::string path = fmt::format("/proc/{}/fd/{}", pid, fd);
  const int mine = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (mine < 0) fail(fmt::format("open rank {}'s segment {}", owner_rank, path));
  const std::size_t size = bytes_for(world);
  std::byte* base = nullptr;
  try {
    base = map(mine, size, fmt::format("of rank {}'s segment", owner_rank));
  } catch (...) {
    ::close(mine);
    throw;
  }
  ::close(mine);  // the mapping holds the memory
  return ShmSegment(world, base, size, -1);
}

ShmSegment::ShmSegment(ShmSegment&& o) noexcept
    : world_(o.world_),
      base_(std::exchange(o.base_, nullptr)),
      size_(o.size_),
      fd_(std::exchange(o.fd_, -1)) {}

ShmSegment& ShmSegment::operator=(ShmSegment&& o) noexcept {
  ShmSegment tmp(std::move(o));
  std::swap(world_, tmp.world_);
  std::swap(base_, tmp.base_);
  std::swap(size_, tmp.size_);
  std::swap(fd_, tmp.fd_);
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

RingHeader& ShmSegment::header(int from) const {
  return *std::launder(reinterpret_cast<RingHeader*>(
      base_ + headers_offset() + sizeof(RingHeader) * static_cast<std::size_t>(from)));
}

std::byte* ShmSegment::data(int from) const {
  return base_ + rings_offset(world_) + kShmRingBytes * static_cast<std::size_t>(from);
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

std::size_t ring_write(RingHeader& h, std::byte* data, std::span<const std::byte> src,
                       std::size_t sent) {
  const std::uint64_t head = h.head.load(std::memory_order_relaxed);  // only this process writes it
  const std::uint64_t tail =
      h.tail.load(std::memory_order_acquire);  // the reader is done with what lies before
  const std::size_t free = kShmRingBytes - static_cast<std::size_t>(head - tail);
  const std::size_t at = static_cast<std::size_t>(head % kShmRingBytes);
  const std::size_t left = src.size() - sent;
  std::size_t n = std::min({left, free, kShmRingBytes - at, kShmPieceBytes});
  if (n < left)
    n &= ~std::size_t{7};  // only the message's last piece may end off an 8-byte boundary
  if (n == 0) return 0;
  std::memcpy(data + at, src.data() + sent, n);
  const std::uint64_t next = sent + n == src.size() ? head + align8(n) : head + n;
  h.head.store(next, std::memory_order_release);
  return n;
}

std::span<const std::byte> ring_peek(const RingHeader& h, const std::byte* data, std::size_t total,
                                     std::size_t received) {
  const std::uint64_t tail = h.tail.load(std::memory_order_relaxed);  // only this process writes it
  const std::uint64_t head =
      h.head.load(std::memory_order_acquire);  // the bytes before it are written
  const std::size_t avail = static_cast<std::size_t>(head - tail);
  const std::size_t at = static_cast<std::size_t>(tail % kShmRingBytes);
  const std::size_t left = total - received;
  std::size_t n = std::min({left, avail, kShmRingBytes - at, kShmPieceBytes});
  if (n < left) n &= ~std::size_t{7};
  return {data + at, n};
}

void ring_release(RingHeader& h, std::size_t n, bool message_done) {
  const std::uint64_t tail = h.tail.load(std::memory_order_relaxed);
  h.tail.store(tail + (message_done ? align8(n) : n), std::memory_order_release);
}

}  // namespace ring
