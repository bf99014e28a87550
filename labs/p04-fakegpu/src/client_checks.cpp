#include "fakegpu/client_checks.hpp"

#include <sys/ioctl.h>
#include <sys/mman.h>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "fakegpu/ioctls.hpp"
#include "fakegpu/mount_point.hpp"

namespace fakegpu {

int ClientReport::passed() const {
  int n = 0;
  for (const auto& c : checks) n += c.verdict == Verdict::kPass ? 1 : 0;
  return n;
}
int ClientReport::failed() const {
  int n = 0;
  for (const auto& c : checks) n += c.verdict == Verdict::kFail ? 1 : 0;
  return n;
}
int ClientReport::skipped() const {
  int n = 0;
  for (const auto& c : checks) n += c.verdict == Verdict::kSkip ? 1 : 0;
  return n;
}

long poll_fence(Device& dev, int fd, const volatile void* page, unsigned long long seqno) {
  (void)dev;
  (void)fd;
  const auto* fence = static_cast<const volatile fakegpu_fence_page*>(page);
  long polls = 0;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (;;) {
    const std::uint64_t done =
        __atomic_load_n(const_cast<const __u64*>(&fence->completed_seq), __ATOMIC_ACQUIRE);
    ++polls;
    if (done >= seqno) return polls;
    if ((polls & 0xffff) == 0 && std::chrono::steady_clock::now() > give_up) return -ETIMEDOUT;
  }
}

namespace {

constexpr std::uint64_t kMiB = 1ull << 20;

std::string u64(std::uint64_t v) {
  return std::to_string(v);
}

class Checker : private Ioctls {
 public:
  Checker(Device& dev, std::string path, std::FILE* out)
      : Ioctls(dev), path_(std::move(path)), out_(out) {}

  ClientReport run();

 private:
  void record(const std::string& name, Verdict v, const std::string& detail) {
    report_.checks.push_back({name, v, detail});
    if (out_ == nullptr) return;
    const char* word = v == Verdict::kPass ? "PASS" : v == Verdict::kFail ? "FAIL" : "SKIP";
    std::fprintf(out_, "%s  %-13s %s\n", word, name.c_str(), detail.c_str());
    std::fflush(out_);
  }
  void check(const std::string& name, bool ok, const std::string& detail) {
    record(name, ok ? Verdict::kPass : Verdict::kFail, detail);
  }

  void fence_mmap_check(int fd, const fakegpu_info& first);
  void pool_check(const fakegpu_info& base);

  std::string path_;
  std::FILE* out_;
  ClientReport report_;
};

ClientReport Checker::run() {
  // 1. open
  const int fd = dev_.open(path_);
  check("open", fd >= 0,
        fd >= 0 ? "open(" + path_ + ", O_RDWR) -> a context"
                : "open(" + path_ + "): " + errno_name(-fd) +
                      (-fd == ENOTCONN ? ": " + stale_mount_advice(parent_dir(path_)) : ""));
  if (fd < 0) return report_;

  // The curriculum's trace: INFO, ALLOC(1 MiB), SUBMIT, WAIT — nothing in between.
  fakegpu_info first{};
  const int rc_info = info(fd, &first);
  std::uint32_t h1 = 0;
  const int rc_alloc = alloc(fd, kMiB, &h1);
  std::uint64_t s1 = 0;
  const int rc_submit = submit(fd, h1, &s1);
  const int rc_wait = wait(fd, s1);

  // 2. info
  check("info",
        rc_info == 0 && first.abi_version == FAKEGPU_ABI_VERSION && first.mem_total > 0 &&
            first.ctx_used == 0 && first.ctx_quota > 0 && first.ctx_quota <= first.mem_total,
        rc_info != 0 ? "INFO -> " + errno_name(-rc_info)
                     : "abi_version " + u64(first.abi_version) + ", mem_total " +
                           u64(first.mem_total >> 20) + " MiB, ctx_quota " +
                           u64(first.ctx_quota >> 20) + " MiB, ctx_used " + u64(first.ctx_used));
  if (rc_info != 0) {
    dev_.close(fd);
    return report_;
  }

  // 3. alloc 1 MiB
  fakegpu_info after{};
  info(fd, &after);
  check("alloc", rc_alloc == 0 && h1 != 0 && after.ctx_used == kMiB && after.ctx_buffers == 1,
        "ALLOC(1048576) -> " + errno_name(-rc_alloc) + ", handle " + (h1 != 0 ? "!= 0" : "0") +
            ", ctx_used " + u64(after.ctx_used));

  // 4. seqno ordering: 1, then 2, 3
  std::uint64_t s2 = 0;
  std::uint64_t s3 = 0;
  const int r2 = submit(fd, h1, &s2);
  const int r3 = submit(fd, h1, &s3);
  check("seqno-order", rc_submit == 0 && r2 == 0 && r3 == 0 && s1 == 1 && s2 == 2 && s3 == 3,
        "SUBMIT x3 -> seqnos " + u64(s1) + ", " + u64(s2) + ", " + u64(s3));

  // 5. WAIT is a fence
  const int rw3 = wait(fd, s3);
  fakegpu_info fenced{};
  info(fd, &fenced);
  const int rw_future = wait(fd, s3 + 100);
  check("wait-fence",
        rc_wait == 0 && rw3 == 0 && fenced.completed_seq >= s3 && rw_future == -EINVAL,
        "WAIT(1) -> " + errno_name(-rc_wait) + ", WAIT(3) -> " + errno_name(-rw3) +
            " with completed_seq " + u64(fenced.completed_seq) + ", WAIT(103) -> " +
            errno_name(-rw_future));

  // 6. bad handles
  {
    std::uint64_t seq = 0;
    const int a = submit(fd, 0, &seq);
    const int b = submit(fd, 0xDEADBEEF, &seq);
    const int c = free_(fd, 0);
    const int d = free_(fd, 0xDEADBEEF);
    check("bad-handle", a == -EINVAL && b == -EINVAL && c == -EINVAL && d == -EINVAL,
          "SUBMIT/FREE of 0 and 0xdeadbeef -> " + errno_name(-a) + " " + errno_name(-b) + " " +
              errno_name(-c) + " " + errno_name(-d));
  }

  // 7. oversized
  {
    std::uint32_t h = 0;
    const int a = alloc(fd, 0, &h);
    const int b = alloc(fd, first.mem_total + 1, &h);
    const int c = alloc(fd, UINT64_MAX, &h);
    check("oversized", a == -EINVAL && b == -EINVAL && c == -EINVAL,
          "ALLOC(0), ALLOC(mem_total+1), ALLOC(2^64-1) -> " + errno_name(-a) + " " +
              errno_name(-b) + " " + errno_name(-c));
  }

  // 8. quota: fill this fd to the byte, one more byte is ENOSPC, nothing is lost
  std::uint32_t h_fill = 0;
  {
    fakegpu_info now{};
    info(fd, &now);
    const std::uint64_t rest = now.ctx_quota - now.ctx_used;
    const int a = alloc(fd, rest, &h_fill);
    std::uint32_t h = 0;
    const int b = alloc(fd, 1, &h);
    fakegpu_info full{};
    info(fd, &full);
    std::uint64_t seq = 0;
    const int c = submit(fd, h1, &seq);
    check("quota", a == 0 && b == -ENOSPC && full.ctx_used == full.ctx_quota && c == 0,
          "ALLOC up to " + u64(full.ctx_used >> 20) + " MiB -> " + errno_name(-a) +
              ", one more byte -> " + errno_name(-b) + ", old handle still SUBMITs -> " +
              errno_name(-c));
    wait(fd, seq);
    free_(fd, h_fill);
  }

  // 9. isolation: a second fd sees nothing of the first and cannot touch its handle
  {
    const int fd2 = dev_.open(path_);
    fakegpu_info other{};
    const int a = fd2 >= 0 ? info(fd2, &other) : fd2;
    std::uint64_t seq = 0;
    const int b = fd2 >= 0 ? free_(fd2, h1) : fd2;
    const int c = fd2 >= 0 ? submit(fd2, h1, &seq) : fd2;
    const int d = submit(fd, h1, &seq);
    wait(fd, seq);
    check("isolation",
          a == 0 && other.ctx_used == 0 && other.submitted_seq == 0 && b == -EINVAL &&
              c == -EINVAL && d == 0,
          "fd2 sees ctx_used " + u64(other.ctx_used) + "; fd2 FREE/SUBMIT of fd1's handle -> " +
              errno_name(-b) + " " + errno_name(-c) + "; fd1 still SUBMITs -> " + errno_name(-d));
    if (fd2 >= 0) dev_.close(fd2);
  }

  // 10. FREE while a job uses the buffer, FREE, double FREE
  {
    std::uint32_t h = 0;
    alloc(fd, kMiB, &h);
    // FREE right after SUBMIT is EBUSY, unless this process was descheduled for the
    // whole 10 ms job; then the buffer was idle and 0 is right. Up to 3 tries to see EBUSY.
    int busy = 0;
    bool busy_ok = true;
    std::uint64_t seq = 0;
    for (int attempt = 0; attempt < 3; ++attempt) {
      if (attempt > 0) alloc(fd, kMiB, &h);
      submit(fd, h, &seq);
      busy = free_(fd, h);
      fakegpu_info at_busy{};
      info(fd, &at_busy);
      busy_ok = busy == -EBUSY || (busy == 0 && at_busy.completed_seq >= seq);
      if (busy != 0) break;
    }
    wait(fd, seq);
    fakegpu_info before{};
    info(fd, &before);
    const int a = busy == 0 ? 0 : free_(fd, h);
    fakegpu_info mid{};
    info(fd, &mid);
    const int b = free_(fd, h);
    check("double-free",
          busy_ok && a == 0 && b == -EINVAL &&
              mid.ctx_used + (busy == 0 ? 0 : kMiB) == before.ctx_used,
          "FREE of a busy buffer -> " + errno_name(-busy) + ", after WAIT -> " + errno_name(-a) +
              ", again -> " + errno_name(-b));
  }

  // 11. unknown commands and wrong encodings
  {
    unsigned char scratch[64] = {};
    const int a = dev_.ioctl(fd, _IO('F', 99), nullptr);
    const int b =
        dev_.ioctl(fd, _IOWR('F', 1, std::uint64_t), scratch);  // ALLOC's number, 8-byte size
    const int c = dev_.ioctl(fd, _IOR('F', 2, struct fakegpu_free),
                             scratch);  // FREE's number, wrong direction
    check("unknown-cmd", a == -ENOTTY && b == -ENOTTY && c == -ENOTTY,
          "_IO('F',99), ALLOC with size 8, FREE as _IOR -> " + errno_name(-a) + " " +
              errno_name(-b) + " " + errno_name(-c));
  }

  // 12. bad pointers
  {
    const int a = dev_.ioctl(fd, FAKEGPU_IOC_INFO, nullptr);
    const int b = dev_.ioctl(fd, FAKEGPU_IOC_ALLOC, reinterpret_cast<void*>(1));
    fakegpu_info still{};
    info(fd, &still);
    check("bad-pointer", a == -EFAULT && b == -EFAULT && still.ctx_buffers == 1,
          "INFO(NULL), ALLOC((void*)1) -> " + errno_name(-a) + " " + errno_name(-b) +
              ", nothing allocated");
  }

  // 14 (extension 3). fence page
  fence_mmap_check(fd, first);

  // 13. release reclaims: close with a buffer held, reopen, the pool is whole again
  {
    dev_.close(fd);
    const int fd3 = dev_.open(path_);
    fakegpu_info fresh{};
    const int a = fd3 >= 0 ? info(fd3, &fresh) : fd3;
    check("release",
          a == 0 && fresh.ctx_used == 0 && fresh.submitted_seq == 0 &&
              fresh.dev_mem_used == first.dev_mem_used && fresh.dev_buffers == first.dev_buffers,
          "close with 1 MiB held, reopen -> ctx_used " + u64(fresh.ctx_used) +
              ", device bytes in use " + u64(fresh.dev_mem_used) + " (was " +
              u64(first.dev_mem_used) + ")");
    if (fd3 >= 0) dev_.close(fd3);
  }

  // 15 (extension 1). the device pool
  pool_check(first);
  return report_;
}

void Checker::fence_mmap_check(int fd, const fakegpu_info& first) {
  int err = 0;
  void* page = dev_.mmap(fd, FAKEGPU_FENCE_PAGE_SIZE, PROT_READ, MAP_SHARED, 0, &err);
  if ((first.flags & FAKEGPU_INFO_F_FENCE_MMAP) == 0) {
    if (page != nullptr) {
      dev_.munmap(page, FAKEGPU_FENCE_PAGE_SIZE);
      check("fence-mmap", false, "INFO says no fence page, but mmap succeeded");
    } else {
      record("fence-mmap", Verdict::kSkip,
             "no fence page on this device: mmap -> " + errno_name(err) +
                 " (FUSE cannot share a page; the kernel module can)");
    }
    return;
  }
  if (page == nullptr) {
    check("fence-mmap", false, "INFO offers the fence page but mmap -> " + errno_name(err));
    return;
  }
  std::uint64_t seq = 0;
  fakegpu_info now{};
  info(fd, &now);
  std::uint32_t h = 0;
  alloc(fd, 4096, &h);
  const int rs = submit(fd, h, &seq);
  const long polls = rs == 0 ? poll_fence(dev_, fd, page, seq) : -EINVAL;
  int werr = 0;
  void* writable =
      dev_.mmap(fd, FAKEGPU_FENCE_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, 0, &werr);
  if (writable != nullptr) dev_.munmap(writable, FAKEGPU_FENCE_PAGE_SIZE);
  int oerr = 0;
  void* offset =
      dev_.mmap(fd, FAKEGPU_FENCE_PAGE_SIZE, PROT_READ, MAP_SHARED, FAKEGPU_FENCE_PAGE_SIZE, &oerr);
  if (offset != nullptr) dev_.munmap(offset, FAKEGPU_FENCE_PAGE_SIZE);
  dev_.munmap(page, FAKEGPU_FENCE_PAGE_SIZE);
  wait(fd, seq);
  free_(fd, h);
  check("fence-mmap",
        polls > 0 && writable == nullptr && werr == EPERM && offset == nullptr && oerr == EINVAL,
        "SUBMIT then poll the mapped completed_seq: " +
            std::string(polls > 0 ? "reached" : "never reached") +
            " with no syscalls; PROT_WRITE -> " + errno_name(werr) + ", offset 4096 -> " +
            errno_name(oerr));
}

void Checker::pool_check(const fakegpu_info& base) {
  // Needs ceil(free pool / quota) + 1 fds; skip on absurd configurations.
  const std::uint64_t free_pool = base.mem_total - base.dev_mem_used;
  const std::uint64_t fds_needed = free_pool / base.ctx_quota + 1;
  if (fds_needed > 64) {
    record("pool", Verdict::kSkip, "pool/quota ratio needs " + u64(fds_needed) + " fds");
    return;
  }
  std::vector<int> fds;
  int last = 0;
  std::uint64_t taken = 0;
  for (std::uint64_t i = 0; i < fds_needed + 1 && last == 0; ++i) {
    const int f = dev_.open(path_);
    if (f < 0) {
      last = f;
      break;
    }
    fds.push_back(f);
    std::uint32_t h = 0;
    const std::uint64_t want =
        std::min<std::uint64_t>(base.ctx_quota, base.mem_total - base.dev_mem_used - taken);
    last = alloc(f, want == 0 ? 1 : want, &h);
    if (last == 0) taken += want;
  }
  fakegpu_info full{};
  if (!fds.empty()) info(fds.back(), &full);
  for (int f : fds) dev_.close(f);
  const int probe = dev_.open(path_);
  fakegpu_info after{};
  if (probe >= 0) {
    info(probe, &after);
    dev_.close(probe);
  }
  check("pool",
        last == -ENOMEM && full.dev_mem_used == base.mem_total &&
            after.dev_mem_used == base.dev_mem_used,
        u64(fds.size()) + " fds fill the " + u64(base.mem_total >> 20) +
            " MiB pool, the next ALLOC -> " + errno_name(-last) +
            " (not ENOSPC: its own quota is untouched); closing them returns it");
}

}  // namespace

ClientReport run_client_checks(Device& dev, const std::string& path, std::FILE* out) {
  Checker c(dev, path, out);
  return c.run();
}

}  // namespace fakegpu
