// fakegpu_core through CoreDevice: the device semantics without any transport.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <thread>
#include <vector>

#include "fakegpu/core_device.hpp"
#include "fakegpu_core.h"

namespace {

constexpr std::uint64_t kMiB = 1ull << 20;

class CoreTest : public ::testing::Test {
 protected:
  fakegpu::CoreDevice dev{small()};
  static fg_config small() {
    fg_config c{};
    c.mem_total = 8 * kMiB;
    c.ctx_quota = 4 * kMiB;
    c.max_handles = 4;
    return c;
  }
  fakegpu_info info(std::uint64_t ctx) {
    fakegpu_info i{};
    EXPECT_EQ(dev.ioctl(ctx, FAKEGPU_IOC_INFO, &i), 0);
    return i;
  }
  long alloc(std::uint64_t ctx, std::uint64_t size, std::uint32_t* h = nullptr) {
    fakegpu_alloc a{};
    a.size = size;
    const long rc = dev.ioctl(ctx, FAKEGPU_IOC_ALLOC, &a);
    if (h != nullptr) *h = a.handle;
    return rc;
  }
  long free_(std::uint64_t ctx, std::uint32_t h) {
    fakegpu_free f{};
    f.handle = h;
    return dev.ioctl(ctx, FAKEGPU_IOC_FREE, &f);
  }
  long submit(std::uint64_t ctx, std::uint32_t h, std::uint64_t* seq = nullptr) {
    fakegpu_submit s{};
    s.handle = h;
    const long rc = dev.ioctl(ctx, FAKEGPU_IOC_SUBMIT, &s);
    if (seq != nullptr) *seq = s.seqno;
    return rc;
  }
  long wait(std::uint64_t ctx, std::uint64_t seq, std::uint32_t timeout_ms = 0) {
    fakegpu_wait w{};
    w.seqno = seq;
    w.timeout_ms = timeout_ms;
    return dev.ioctl(ctx, FAKEGPU_IOC_WAIT, &w);
  }
};

TEST(Abi, NumbersAreTheDocumentedOnes) {
  EXPECT_EQ(FAKEGPU_IOC_INFO, 0x80604600u);
  EXPECT_EQ(FAKEGPU_IOC_ALLOC, 0xc0104601u);
  EXPECT_EQ(FAKEGPU_IOC_FREE, 0x40084602u);
  EXPECT_EQ(FAKEGPU_IOC_SUBMIT, 0xc0104603u);
  EXPECT_EQ(FAKEGPU_IOC_WAIT, 0x40104604u);
  EXPECT_EQ(fg_cmd_size(FAKEGPU_IOC_INFO), 96);
  EXPECT_EQ(fg_cmd_size(_IOWR('F', 1, std::uint64_t)), -ENOTTY);  // right number, wrong size
  EXPECT_EQ(fg_cmd_size(_IOR('F', 2, fakegpu_free)), -ENOTTY);    // right number, wrong direction
  EXPECT_EQ(fg_cmd_size(_IO('F', 99)), -ENOTTY);
}

TEST(Config, RejectsUnusableConfigurations) {
  fg_config c = fakegpu::default_config();
  EXPECT_EQ(fg_config_check(&c), 0);
  c.ctx_quota = c.mem_total + 1;
  EXPECT_EQ(fg_config_check(&c), -EINVAL);
  c = fakegpu::default_config();
  c.max_handles = 0;
  EXPECT_THROW(fakegpu::CoreDevice{c}, std::invalid_argument);
}

TEST_F(CoreTest, InfoOfAFreshContext) {
  const auto ctx = dev.open();
  const fakegpu_info i = info(ctx);
  EXPECT_EQ(i.abi_version, 1u);
  EXPECT_EQ(i.mem_total, 8 * kMiB);
  EXPECT_EQ(i.ctx_quota, 4 * kMiB);
  EXPECT_EQ(i.ctx_used, 0u);
  EXPECT_EQ(i.dev_contexts, 1u);
  EXPECT_EQ(i.flags, 0u);
  for (auto r : i.reserved) EXPECT_EQ(r, 0u);
}

TEST_F(CoreTest, HandlesAreUniqueAcrossContextsAndNeverReused) {
  const auto a = dev.open();
  const auto b = dev.open();
  std::uint32_t h1 = 0, h2 = 0, h3 = 0;
  ASSERT_EQ(alloc(a, 4096, &h1), 0);
  ASSERT_EQ(alloc(b, 4096, &h2), 0);
  EXPECT_NE(h1, 0u);
  EXPECT_NE(h1, h2);
  ASSERT_EQ(free_(a, h1), 0);
  ASSERT_EQ(alloc(a, 4096, &h3), 0);
  EXPECT_NE(h3, h1);
  EXPECT_NE(h3, h2);
  EXPECT_EQ(free_(a, h2), -EINVAL);  // b's handle is not a's
  EXPECT_EQ(submit(b, h3), -EINVAL);
}

TEST_F(CoreTest, QuotaIsEnospcPoolIsEnomem) {
  const auto a = dev.open();
  EXPECT_EQ(alloc(a, 4 * kMiB), 0);
  EXPECT_EQ(alloc(a, 1), -ENOSPC);
  const auto b = dev.open();
  EXPECT_EQ(alloc(b, 3 * kMiB), 0);
  const auto c = dev.open();
  EXPECT_EQ(alloc(c, 2 * kMiB), -ENOMEM);  // c's quota is untouched: the pool is out
  EXPECT_EQ(alloc(c, 1 * kMiB), 0);
  const fg_stats s = dev.stats();
  EXPECT_EQ(s.quota_rejections, 1u);
  EXPECT_EQ(s.pool_rejections, 1u);
  EXPECT_EQ(s.bytes_in_use, 8 * kMiB);
}

TEST_F(CoreTest, HandleTableFullIsEnospc) {
  const auto a = dev.open();
  for (int i = 0; i < 4; ++i) ASSERT_EQ(alloc(a, 1), 0);
  EXPECT_EQ(alloc(a, 1), -ENOSPC);
}

TEST_F(CoreTest, SizesThatCanNeverSucceedAreEinval) {
  const auto a = dev.open();
  EXPECT_EQ(alloc(a, 0), -EINVAL);
  EXPECT_EQ(alloc(a, 8 * kMiB + 1), -EINVAL);
  EXPECT_EQ(alloc(a, UINT64_MAX), -EINVAL);
  EXPECT_EQ(alloc(a, 8 * kMiB), -ENOSPC);  // fits the device, not the quota
}

TEST_F(CoreTest, NonzeroFlagsAreEinval) {
  const auto a = dev.open();
  fakegpu_alloc al{};
  al.size = 1;
  al.flags = 1;
  EXPECT_EQ(dev.ioctl(a, FAKEGPU_IOC_ALLOC, &al), -EINVAL);
  fakegpu_wait w{};
  w.flags = 4;
  EXPECT_EQ(dev.ioctl(a, FAKEGPU_IOC_WAIT, &w), -EINVAL);
}

TEST_F(CoreTest, SeqnosAreContiguousPerContextAndCompleteAfterTheLatency) {
  const auto a = dev.open();
  const auto b = dev.open();
  std::uint32_t h = 0, hb = 0;
  ASSERT_EQ(alloc(a, 1, &h), 0);
  ASSERT_EQ(alloc(b, 1, &hb), 0);
  std::uint64_t s = 0;
  const std::uint64_t t0 = fakegpu::now_ns();  // before every SUBMIT below
  for (std::uint64_t want = 1; want <= 5; ++want) {
    ASSERT_EQ(submit(a, h, &s), 0);
    EXPECT_EQ(s, want);
  }
  ASSERT_EQ(submit(b, hb, &s), 0);
  EXPECT_EQ(s, 1u);                // b counts on its own
  EXPECT_EQ(wait(a, 6), -EINVAL);  // never submitted
  EXPECT_EQ(wait(a, 0), 0);
  EXPECT_EQ(wait(a, 5), 0);
  EXPECT_GE(info(a).completed_seq, 5u);
  // The fence held until the job's deadline: 10 ms after its SUBMIT, which followed t0.
  EXPECT_GE(fakegpu::now_ns(), t0 + FAKEGPU_JOB_LATENCY_NS);
}

TEST(CoreDirect, CompletionFollowsTheClockInOrder) {
  // The raw core with a hand-driven clock: nothing completes early, all in order.
  fg_ops ops{};
  ops.zalloc = [](std::size_t n) -> void* { return std::calloc(1, n); };
  ops.free = [](void* p) { std::free(p); };
  fg_config cfg = fakegpu::default_config();
  fg_device dev{};
  fg_device_init(&dev, &cfg, &ops);
  fg_context* ctx = fg_context_create(&dev);
  ASSERT_NE(ctx, nullptr);
  fg_wait_req w{};
  fakegpu_alloc a{};
  a.size = 4096;
  ASSERT_EQ(fg_dispatch(ctx, FAKEGPU_IOC_ALLOC, &a, 0, &w), 0);
  for (std::uint64_t t = 0; t < 3; ++t) {
    fakegpu_submit s{};
    s.handle = a.handle;
    ASSERT_EQ(fg_dispatch(ctx, FAKEGPU_IOC_SUBMIT, &s, t * 1000000, &w), 0);  // at 0, 1, 2 ms
  }
  fakegpu_wait wt{};
  wt.seqno = 3;
  wt.timeout_ms = 7;
  EXPECT_EQ(fg_dispatch(ctx, FAKEGPU_IOC_WAIT, &wt, 5000000, &w), FG_WAIT_BLOCK);
  EXPECT_EQ(w.seqno, 3u);
  EXPECT_EQ(w.timeout_ms, 7u);
  __u64 next = 0;
  ASSERT_EQ(fg_next_deadline(ctx, &next), 1);
  EXPECT_EQ(next, FAKEGPU_JOB_LATENCY_NS);
  EXPECT_EQ(fg_complete_due(ctx, FAKEGPU_JOB_LATENCY_NS - 1), 0u);
  EXPECT_EQ(fg_complete_due(ctx, FAKEGPU_JOB_LATENCY_NS + 1000000), 2u);
  EXPECT_EQ(ctx->completed_seq, 2u);
  fakegpu_free f{};
  f.handle = a.handle;
  EXPECT_EQ(fg_dispatch(ctx, FAKEGPU_IOC_FREE, &f, FAKEGPU_JOB_LATENCY_NS + 1000000, &w),
            -EBUSY);  // job 3 runs
  EXPECT_EQ(fg_dispatch(ctx, FAKEGPU_IOC_FREE, &f, FAKEGPU_JOB_LATENCY_NS + 2000000, &w), 0);
  EXPECT_EQ(fg_wait_done(ctx, 3), 1);
  fg_context_destroy(ctx);
  fg_stats s{};
  fg_device_stats(&dev, &s);
  EXPECT_EQ(s.contexts, 0u);
  EXPECT_EQ(s.completed, 3u);
}

TEST_F(CoreTest, WaitTimesOutAndIsInterruptible) {
  const auto a = dev.open();
  std::uint32_t h = 0;
  ASSERT_EQ(alloc(a, 1, &h), 0);
  std::uint64_t s = 0;
  ASSERT_EQ(submit(a, h, &s), 0);
  // A deadline 10 ms out cannot be met by a 1 ms timeout unless this thread slept 9 ms in between.
  const long rc = wait(a, s, 1);
  EXPECT_TRUE(rc == -ETIMEDOUT || (rc == 0 && info(a).completed_seq >= s)) << rc;
  const std::uint64_t submitted = fakegpu::now_ns();  // the job's deadline is >= this + 10 ms
  ASSERT_EQ(submit(a, h, &s), 0);
  fakegpu_wait w{};
  w.seqno = s;
  const long intr = dev.ioctl(a, FAKEGPU_IOC_WAIT, &w, [] { return true; });
  if (fakegpu::now_ns() < submitted + FAKEGPU_JOB_LATENCY_NS) {
    EXPECT_EQ(intr, -EINTR);  // the job could not have completed: only the interruption ends it
  } else {
    // This thread was descheduled past the deadline; a done fence is checked first and wins.
    EXPECT_TRUE(intr == -EINTR || intr == 0) << intr;
  }
}

TEST_F(CoreTest, ReleaseReturnsEverythingToThePool) {
  const auto a = dev.open();
  std::uint32_t h = 0;
  ASSERT_EQ(alloc(a, 3 * kMiB, &h), 0);
  ASSERT_EQ(submit(a, h), 0);  // unfinished job at release
  EXPECT_TRUE(dev.release(a));
  EXPECT_FALSE(dev.release(a));
  const fg_stats s = dev.stats();
  EXPECT_EQ(s.contexts, 0u);
  EXPECT_EQ(s.buffers, 0u);
  EXPECT_EQ(s.bytes_in_use, 0u);
  EXPECT_EQ(dev.ioctl(a, FAKEGPU_IOC_INFO, nullptr), -EBADF);
}

TEST_F(CoreTest, RacingSubmitsGetEverySeqnoOnce) {
  const auto a = dev.open();
  std::uint32_t h = 0;
  ASSERT_EQ(alloc(a, 1, &h), 0);
  std::vector<std::uint64_t> seen[4];
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        std::uint64_t s = 0;
        if (submit(a, h, &s) == 0) seen[t].push_back(s);
      }
    });
  for (auto& t : ts) t.join();
  std::vector<bool> hit(801, false);
  std::size_t n = 0;
  for (auto& v : seen)
    for (auto s : v) {
      ASSERT_LE(s, 800u);
      EXPECT_FALSE(hit[s]) << s;
      hit[s] = true;
      ++n;
    }
  EXPECT_EQ(n, 800u);
}

TEST(Stats, FormatNamesEveryCounter) {
  fg_stats s{};
  s.contexts = 2;
  s.quota_rejections = 7;
  char buf[512];
  const int n = fg_format_stats(&s, buf, sizeof buf);
  ASSERT_GT(n, 0);
  const std::string text(buf, static_cast<std::size_t>(n));
  EXPECT_NE(text.find("contexts 2\n"), std::string::npos);
  EXPECT_NE(text.find("quota_rejections 7\n"), std::string::npos);
  EXPECT_NE(text.find("invalid_requests 0\n"), std::string::npos);
}

}  // namespace
