#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "fakegpu/evil.hpp"
#include "fakegpu/ioctls.hpp"

namespace fakegpu {
namespace {

std::string u64(std::uint64_t v) {
  return std::to_string(v);
}
std::string e(int rc) {
  return errno_name(-rc);
}

class Evil : private Ioctls {
 public:
  Evil(Device& dev, std::string path, std::FILE* out, int per_thread)
      : Ioctls(dev), path_(std::move(path)), out_(out), per_thread_(per_thread) {}
  ClientReport run();

 private:
  void check(const std::string& name, bool ok, const std::string& detail) {
    report_.checks.push_back({name, ok ? Verdict::kPass : Verdict::kFail, detail});
    if (out_ == nullptr) return;
    std::fprintf(out_, "%s  %-18s %s\n", ok ? "PASS" : "FAIL", name.c_str(), detail.c_str());
    std::fflush(out_);
  }
  void skip(const std::string& name, const std::string& detail) {
    report_.checks.push_back({name, Verdict::kSkip, detail});
    if (out_ != nullptr) std::fprintf(out_, "SKIP  %-18s %s\n", name.c_str(), detail.c_str());
  }
  void handles(int fd);
  void sizes(int fd);
  void reserved(int fd);
  void closed_fds();
  void race_submit();
  void race_free_submit();
  void commands(int fd);
  void pointers(int fd);
  void wait_cases(int fd);
  void mmap_cases(int fd, const fakegpu_info& base);

  std::string path_;
  std::FILE* out_;
  int per_thread_;
  ClientReport report_;
};

void Evil::handles(int fd) {
  std::uint32_t live = 0;
  std::uint32_t freed = 0;
  alloc(fd, 4096, &live);
  alloc(fd, 4096, &freed);
  free_(fd, freed);
  const int other = dev_.open(path_);
  std::uint32_t foreign = 0;
  if (other >= 0) alloc(other, 4096, &foreign);
  std::uint64_t seq = 0;
  const std::uint32_t bad[] = {0u, UINT32_MAX, freed, foreign, live + 1000000u};
  bool ok = other >= 0 && live != 0;
  std::string detail;
  for (std::uint32_t h : bad) {
    const int a = submit(fd, h, &seq);
    const int b = free_(fd, h);
    ok = ok && a == -EINVAL && b == -EINVAL;
    detail += (detail.empty() ? "" : " ") + e(a) + "/" + e(b);
  }
  // The foreign buffer survived every attempt on it.
  const int f = other >= 0 ? free_(other, foreign) : -EBADF;
  const int l = free_(fd, live);
  check("bad-handles", ok && f == 0 && l == 0,
        "SUBMIT/FREE of 0, 2^32-1, freed, foreign, never-issued -> " + detail +
            "; owner frees foreign -> " + e(f));
  if (other >= 0) dev_.close(other);
}

void Evil::sizes(int fd) {
  std::uint32_t h = 0;
  fakegpu_info i{};
  info(fd, &i);
  const int a = alloc(fd, 0, &h);
  const int b = alloc(fd, UINT64_MAX, &h);
  std::uint32_t one = 0;
  alloc(fd, 1, &one);
  // ctx_used (1) + this wraps to 0 if added naively
  const int c = alloc(fd, UINT64_MAX, &h);
  const int d = alloc(fd, i.ctx_quota, &h);  // 1 byte over the quota
  const int g = alloc(fd, i.mem_total, &h);  // fits the device, not the quota
  free_(fd, one);
  fakegpu_info after{};
  info(fd, &after);
  check("sizes",
        a == -EINVAL && b == -EINVAL && c == -EINVAL && d == -ENOSPC && g == -ENOSPC &&
            after.ctx_used == 0,
        "0, 2^64-1, wrapping ctx_used+size -> " + e(a) + " " + e(b) + " " + e(c) +
            "; quota+1, mem_total -> " + e(d) + " " + e(g) + "; ctx_used " + u64(after.ctx_used));
}

void Evil::reserved(int fd) {
  std::uint32_t h = 0;
  const int a = alloc(fd, 4096, &h, 1);
  std::uint32_t good = 0;
  alloc(fd, 4096, &good);
  std::uint64_t seq = 0;
  const int b = submit(fd, good, &seq, 0x80000000u);
  const int c = free_(fd, good, 2);
  const int d = wait(fd, 0, 0, 1);
  const int f = free_(fd, good);
  check("nonzero-flags", a == -EINVAL && b == -EINVAL && c == -EINVAL && d == -EINVAL && f == 0,
        "ALLOC/SUBMIT/FREE/WAIT with flags != 0 -> " + e(a) + " " + e(b) + " " + e(c) + " " + e(d));
}

void Evil::closed_fds() {
  const int fd = dev_.open(path_);
  std::uint32_t h = 0;
  alloc(fd, 4096, &h);
  dev_.close(fd);
  fakegpu_info i{};
  const int a = info(fd, &i);  // the fd number is closed (nothing reopened yet)
  const int fd2 = dev_.open(path_);
  std::uint64_t seq = 0;
  const int b = submit(fd2, h, &seq);
  const int c = free_(fd2, h);
  info(fd2, &i);
  check("closed-fd", a == -EBADF && b == -EINVAL && c == -EINVAL && i.ctx_used == 0,
        "INFO on a closed fd -> " + e(a) + "; old handle on the reopened fd" +
            (fd2 == fd ? " (same number)" : "") + " -> " + e(b) + " " + e(c));
  dev_.close(fd2);
}

void Evil::race_submit() {
  const int fd = dev_.open(path_);
  std::uint32_t h = 0;
  alloc(fd, 4096, &h);
  std::vector<std::uint64_t> seqs[2];
  std::atomic<int> errors{0};
  std::atomic<bool> go{false};
  auto body = [&](int t) {
    while (!go.load()) std::this_thread::yield();
    for (int i = 0; i < per_thread_; ++i) {
      std::uint64_t s = 0;
      const int rc = submit(fd, h, &s);
      if (rc == -EAGAIN) {  // the in-flight limit: back off, retry
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        --i;
        continue;
      }
      if (rc != 0) {
        errors.fetch_add(1);
        continue;
      }
      seqs[t].push_back(s);
    }
  };
  std::thread a(body, 0);
  std::thread b(body, 1);
  go.store(true);
  a.join();
  b.join();
  std::vector<std::uint64_t> all = seqs[0];
  all.insert(all.end(), seqs[1].begin(), seqs[1].end());
  std::sort(all.begin(), all.end());
  bool contiguous = all.size() == static_cast<std::size_t>(2 * per_thread_);
  for (std::size_t i = 0; contiguous && i < all.size(); ++i) contiguous = all[i] == i + 1;
  const bool each_ordered = std::is_sorted(seqs[0].begin(), seqs[0].end()) &&
                            std::is_sorted(seqs[1].begin(), seqs[1].end());
  const int w = all.empty() ? -EINVAL : wait(fd, all.back());
  fakegpu_info i{};
  info(fd, &i);
  check("race-submit",
        errors.load() == 0 && contiguous && each_ordered && w == 0 &&
            i.completed_seq == static_cast<std::uint64_t>(2 * per_thread_),
        "2 threads x " + u64(static_cast<std::uint64_t>(per_thread_)) +
            " SUBMITs on one fd -> seqnos 1.." + u64(all.empty() ? 0 : all.back()) +
            (contiguous ? ", each once" : ", NOT contiguous") +
            ", increasing per thread; WAIT(last) -> " + e(w));
  dev_.close(fd);
}

void Evil::race_free_submit() {
  const int fd = dev_.open(path_);
  std::uint32_t h = 0;
  alloc(fd, 4096, &h);
  std::atomic<bool> stop{false};
  std::atomic<bool> started{false};  // FREE starts racing once a job is in flight
  std::vector<int> submit_rcs;
  std::vector<int> free_rcs;
  std::thread submitter([&] {
    // bursts with pauses longer than the 10 ms job latency, so the buffer goes idle between them
    for (int round = 0; round < 200 && !stop.load(); ++round) {
      for (int i = 0; i < 5; ++i) {
        std::uint64_t s = 0;
        const int rc = submit(fd, h, &s);
        submit_rcs.push_back(rc);
        started.store(true);
        if (rc != 0) {
          stop.store(true);
          break;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(12));
    }
  });
  std::thread freer([&] {
    while (!started.load()) std::this_thread::yield();
    for (int i = 0; i < 20000; ++i) {
      const int rc = free_(fd, h);
      free_rcs.push_back(rc);
      if (rc != -EBUSY) break;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  freer.join();
  submitter.join();
  // SUBMIT: successes, then (once FREE won) only EINVAL. FREE: EBUSY..., then exactly one 0.
  bool submit_ok = !submit_rcs.empty() && submit_rcs.front() == 0;
  bool seen_einval = false;
  for (int rc : submit_rcs) {
    if (rc == -EINVAL)
      seen_einval = true;
    else if (rc != 0 || seen_einval)
      submit_ok = false;
  }
  bool free_ok = !free_rcs.empty() && free_rcs.back() == 0;
  for (std::size_t i = 0; i + 1 < free_rcs.size(); ++i) free_ok = free_ok && free_rcs[i] == -EBUSY;
  std::uint64_t s = 0;
  const int after = submit(fd, h, &s);
  fakegpu_info i{};
  info(fd, &i);
  check("race-free-submit", submit_ok && free_ok && after == -EINVAL && i.ctx_buffers == 0,
        "FREE racing SUBMIT: FREE -> EBUSY x" + u64(free_rcs.empty() ? 0 : free_rcs.size() - 1) +
            " then " + (free_rcs.empty() ? std::string("nothing") : e(free_rcs.back())) +
            "; later SUBMIT -> " + e(after));
  dev_.close(fd);
}

void Evil::commands(int fd) {
  std::vector<unsigned char> big(16384, 0);
  const unsigned long cmds[] = {_IO('F', 99),
                                _IOWR('F', 1, std::uint64_t),
                                _IOW('F', 0, struct fakegpu_info),
                                _IOWR('F', 5, struct fakegpu_wait),
                                _IO('G', 1),
                                0xdeadbeefUL};
  bool ok = true;
  std::string detail;
  for (unsigned long c : cmds) {
    const int rc = dev_.ioctl(fd, c, big.data());
    ok = ok && rc == -ENOTTY;
    detail += (detail.empty() ? "" : " ") + e(rc);
  }
  check("unknown-commands", ok, "6 foreign/misencoded numbers (incl. 0xdeadbeef) -> " + detail);
}

void Evil::pointers(int fd) {
  const long page = sysconf(_SC_PAGESIZE);
  const auto psize = static_cast<std::size_t>(page);
  // Two pages: the first readable, the second PROT_NONE, so a struct can straddle into nothing.
  void* map =
      ::mmap(nullptr, 2 * psize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) {
    skip("bad-pointers", "cannot map a guard page");
    return;
  }
  ::mprotect(static_cast<char*>(map) + psize, psize, PROT_NONE);
  char* guard = static_cast<char*>(map) + psize;
  char* straddle = guard - 4;  // every struct is at least 8 bytes: half of it is unmapped
  void* kernel_addr = reinterpret_cast<void*>(0xffffffff81000000UL);
  void* ro = ::mmap(nullptr, psize, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  const unsigned long cmds[] = {FAKEGPU_IOC_INFO, FAKEGPU_IOC_ALLOC, FAKEGPU_IOC_FREE,
                                FAKEGPU_IOC_SUBMIT, FAKEGPU_IOC_WAIT};
  void* ptrs[] = {nullptr, reinterpret_cast<void*>(1), guard, straddle, kernel_addr};
  // The in-process device cannot probe mappings: only NULL and 1 for it.
  const std::size_t nptrs = dev_.checks_every_pointer() ? 5 : 2;
  int ok = 0;
  int total = 0;
  for (unsigned long c : cmds)
    for (std::size_t k = 0; k < nptrs; ++k) {
      ++total;
      ok += dev_.ioctl(fd, c, ptrs[k]) == -EFAULT ? 1 : 0;
    }
  // INFO and ALLOC write back: a read-only buffer must fail too, and ALLOC must not leak the buffer
  // it made.
  fakegpu_info before{};
  info(fd, &before);
  int ro_rc = 0;
  if (ro != MAP_FAILED && dev_.checks_every_pointer()) {
    ++total;
    ro_rc = dev_.ioctl(fd, FAKEGPU_IOC_INFO, ro);
    ok += ro_rc == -EFAULT ? 1 : 0;
  }
  if (ro != MAP_FAILED) ::munmap(ro, psize);
  fakegpu_info after{};
  info(fd, &after);
  ::munmap(map, 2 * psize);
  check("bad-pointers", ok == total && after.ctx_buffers == before.ctx_buffers,
        u64(static_cast<std::uint64_t>(ok)) + "/" + u64(static_cast<std::uint64_t>(total)) +
            (nptrs == 5 ? " of NULL, 1, guard page, straddling, kernel address, read-only -> EFAULT"
                        : " of NULL and (void*)1 -> EFAULT"));
}

void Evil::wait_cases(int fd) {
  fakegpu_info i{};
  info(fd, &i);
  const int a = wait(fd, i.submitted_seq + 1);
  const int b = wait(fd, UINT64_MAX);
  const int c = wait(fd, 0);
  std::uint32_t h = 0;
  alloc(fd, 4096, &h);
  std::uint64_t seq = 0;
  // 1 ms cannot cover a 10 ms job unless this thread slept 9 ms in between: up to 3 tries.
  int t = 0;
  bool timeout_ok = true;
  for (int attempt = 0; attempt < 3; ++attempt) {
    submit(fd, h, &seq);
    t = wait(fd, seq, 1);
    fakegpu_info at{};
    info(fd, &at);
    timeout_ok = t == -ETIMEDOUT || (t == 0 && at.completed_seq >= seq);
    if (t != 0) break;
  }
  wait(fd, seq);
  free_(fd, h);
  check("wait", a == -EINVAL && b == -EINVAL && c == 0 && timeout_ok,
        "WAIT(never submitted), WAIT(2^64-1) -> " + e(a) + " " + e(b) + "; WAIT(0) -> " + e(c) +
            "; 1 ms timeout on a 10 ms job -> " + e(t));
}

void Evil::mmap_cases(int fd, const fakegpu_info& base) {
  if ((base.flags & FAKEGPU_INFO_F_FENCE_MMAP) == 0) {
    int err = 0;
    void* p = dev_.mmap(fd, FAKEGPU_FENCE_PAGE_SIZE, PROT_READ, MAP_SHARED, 0, &err);
    if (p != nullptr) dev_.munmap(p, FAKEGPU_FENCE_PAGE_SIZE);
    check("mmap", p == nullptr, "no fence page on this device: mmap -> " + errno_name(err));
    return;
  }
  struct Case {
    std::size_t len;
    int prot;
    int flags;
    off_t off;
    int want;
  };
  const Case cases[] = {
      {FAKEGPU_FENCE_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, 0, EPERM},
      {2 * FAKEGPU_FENCE_PAGE_SIZE, PROT_READ, MAP_SHARED, 0, EINVAL},
      {FAKEGPU_FENCE_PAGE_SIZE, PROT_READ, MAP_SHARED, FAKEGPU_FENCE_PAGE_SIZE, EINVAL},
      {FAKEGPU_FENCE_PAGE_SIZE, PROT_READ | PROT_EXEC, MAP_SHARED, 0, EPERM}};
  bool ok = true;
  std::string detail;
  for (const Case& c : cases) {
    int err = 0;
    void* p = dev_.mmap(fd, c.len, c.prot, c.flags, c.off, &err);
    if (p != nullptr) dev_.munmap(p, c.len);
    ok = ok && p == nullptr && err == c.want;
    detail += (detail.empty() ? "" : " ") + errno_name(p ? 0 : err);
  }
  // A read-only mapping cannot be upgraded to writable later.
  int err = 0;
  void* p = dev_.mmap(fd, FAKEGPU_FENCE_PAGE_SIZE, PROT_READ, MAP_SHARED, 0, &err);
  int mp = 0;
  if (p != nullptr) {
    mp = ::mprotect(p, FAKEGPU_FENCE_PAGE_SIZE, PROT_READ | PROT_WRITE) == 0 ? 0 : errno;
    dev_.munmap(p, FAKEGPU_FENCE_PAGE_SIZE);
  }
  check("mmap", ok && p != nullptr && mp == EACCES,
        "write, 2 pages, offset 4096, exec -> " + detail +
            "; mprotect(PROT_WRITE) of the read-only page -> " + errno_name(mp));
}

ClientReport Evil::run() {
  const int fd = dev_.open(path_);
  if (fd < 0) {
    check("open", false, "open(" + path_ + "): " + errno_name(-fd));
    return report_;
  }
  fakegpu_info base{};
  const int rc = info(fd, &base);
  if (rc != 0) {
    check("info", false, "INFO -> " + e(rc));
    dev_.close(fd);
    return report_;
  }
  handles(fd);
  sizes(fd);
  reserved(fd);
  commands(fd);
  pointers(fd);
  wait_cases(fd);
  mmap_cases(fd, base);
  closed_fds();
  race_submit();
  race_free_submit();
  dev_.close(fd);

  // Nothing leaked: a fresh fd sees the device exactly as it was before (one context: itself).
  const int probe = dev_.open(path_);
  fakegpu_info end{};
  const int r = probe >= 0 ? info(probe, &end) : probe;
  check("no-leak",
        r == 0 && end.dev_mem_used == base.dev_mem_used && end.dev_buffers == base.dev_buffers &&
            end.dev_contexts == base.dev_contexts,
        "fresh fd: device bytes in use " + u64(end.dev_mem_used) + " (was " +
            u64(base.dev_mem_used) + "), buffers " + u64(end.dev_buffers) + " (was " +
            u64(base.dev_buffers) + "), open fds " + u64(end.dev_contexts) + " (was " +
            u64(base.dev_contexts) + ")");
  if (probe >= 0) dev_.close(probe);
  return report_;
}

}  // namespace

ClientReport run_evil_cases(Device& dev, const std::string& path, std::FILE* out,
                            int submits_per_thread) {
  Evil evil(dev, path, out, submits_per_thread);
  return evil.run();
}

}  // namespace fakegpu
