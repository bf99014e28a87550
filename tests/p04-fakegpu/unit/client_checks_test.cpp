// The client and evil suites against the in-process device, and against devices
// that break one rule each: a suite that cannot fail proves nothing.
#include "fakegpu/client_checks.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <functional>
#include <string>

#include "fakegpu/evil.hpp"

namespace {

using fakegpu::ClientReport;
using fakegpu::Device;
using fakegpu::Verdict;

Verdict verdict_of(const ClientReport& r, const std::string& name) {
  for (const auto& c : r.checks)
    if (c.name == name) return c.verdict;
  ADD_FAILURE() << "no check named " << name;
  return Verdict::kFail;
}

// Forwards to the sim, letting a test rewrite one ioctl's result.
class Faulty final : public Device {
 public:
  using Hook = std::function<int(int fd, unsigned long cmd, void* arg, int rc)>;
  explicit Faulty(Hook hook)
      : inner_(fakegpu::make_sim_device(fakegpu::default_config())), hook_(std::move(hook)) {}
  std::string name() const override { return "faulty"; }
  int open(const std::string& p) override { return inner_->open(p); }
  int close(int fd) override { return inner_->close(fd); }
  int ioctl(int fd, unsigned long cmd, void* arg) override {
    return hook_(fd, cmd, arg, inner_->ioctl(fd, cmd, arg));
  }
  void* mmap(int fd, std::size_t len, int prot, int flags, off_t off, int* err) override {
    return inner_->mmap(fd, len, prot, flags, off, err);
  }
  void munmap(void* a, std::size_t l) override { inner_->munmap(a, l); }
  bool checks_every_pointer() const override { return false; }

 private:
  std::unique_ptr<Device> inner_;
  Hook hook_;
};

TEST(ClientChecks, AllPassOnTheCore) {
  auto dev = fakegpu::make_sim_device(fakegpu::default_config());
  const ClientReport r = fakegpu::run_client_checks(*dev, "sim", nullptr);
  EXPECT_TRUE(r.all_passed());
  EXPECT_EQ(r.passed(), 14);
  EXPECT_EQ(r.skipped(), 1);  // the fence page: the sim has none
  EXPECT_EQ(verdict_of(r, "fence-mmap"), Verdict::kSkip);
}

TEST(ClientChecks, QuotaReportedAsEinvalFails) {
  Faulty dev([](int, unsigned long, void*, int rc) { return rc == -ENOSPC ? -EINVAL : rc; });
  const ClientReport r = fakegpu::run_client_checks(dev, "sim", nullptr);
  EXPECT_FALSE(r.all_passed());
  EXPECT_EQ(verdict_of(r, "quota"), Verdict::kFail);
  EXPECT_EQ(verdict_of(r, "isolation"), Verdict::kPass);
}

TEST(ClientChecks, SharedHandlesFailIsolation) {
  // A device whose second fd accepts the first fd's handle (SUBMIT succeeds).
  Faulty dev([](int fd, unsigned long cmd, void* arg, int rc) {
    if (fd != 3 && cmd == FAKEGPU_IOC_SUBMIT && rc == -EINVAL &&
        static_cast<fakegpu_submit*>(arg)->handle == 1)
      return 0;
    return rc;
  });
  const ClientReport r = fakegpu::run_client_checks(dev, "sim", nullptr);
  EXPECT_EQ(verdict_of(r, "isolation"), Verdict::kFail);
}

TEST(ClientChecks, UnknownCommandAsEinvalFails) {
  Faulty dev([](int, unsigned long, void*, int rc) { return rc == -ENOTTY ? -EINVAL : rc; });
  const ClientReport r = fakegpu::run_client_checks(dev, "sim", nullptr);
  EXPECT_EQ(verdict_of(r, "unknown-cmd"), Verdict::kFail);
}

TEST(ClientChecks, UnopenableDeviceStopsAtOpen) {
  class NoOpen final : public Device {
   public:
    std::string name() const override { return "none"; }
    int open(const std::string&) override { return -ENOENT; }
    int close(int) override { return 0; }
    int ioctl(int, unsigned long, void*) override { return -EBADF; }
    void* mmap(int, std::size_t, int, int, off_t, int* e) override {
      *e = EBADF;
      return nullptr;
    }
    void munmap(void*, std::size_t) override {}
  } dev;
  const ClientReport r = fakegpu::run_client_checks(dev, "/nowhere", nullptr);
  ASSERT_EQ(r.checks.size(), 1u);
  EXPECT_FALSE(r.all_passed());
}

TEST(EvilCases, AllFailCleanlyOnTheCore) {
  auto dev = fakegpu::make_sim_device(fakegpu::default_config());
  const ClientReport r = fakegpu::run_evil_cases(*dev, "sim", nullptr, 100);
  for (const auto& c : r.checks) EXPECT_NE(c.verdict, Verdict::kFail) << c.name << ": " << c.detail;
  EXPECT_TRUE(r.all_passed());
}

TEST(EvilCases, FreeThatFreesNothingIsCaught) {
  // The first FREE says 0 but frees nothing: the freed handle stays usable.
  class Leaky final : public Device {
   public:
    Leaky() : d_(fakegpu::make_sim_device(fakegpu::default_config())) {}
    std::string name() const override { return "leaky"; }
    int open(const std::string& p) override { return d_->open(p); }
    int close(int fd) override { return d_->close(fd); }
    int ioctl(int fd, unsigned long cmd, void* arg) override {
      if (cmd == FAKEGPU_IOC_FREE && !leaked_) {
        const int rc = d_->ioctl(fd, FAKEGPU_IOC_INFO, &scratch_);  // claim success, free nothing
        leaked_ = rc == 0;
        return rc;
      }
      return d_->ioctl(fd, cmd, arg);
    }
    void* mmap(int fd, std::size_t l, int p, int f, off_t o, int* e) override {
      return d_->mmap(fd, l, p, f, o, e);
    }
    void munmap(void* a, std::size_t l) override { d_->munmap(a, l); }
    bool checks_every_pointer() const override { return false; }

   private:
    std::unique_ptr<Device> d_;
    fakegpu_info scratch_{};
    bool leaked_ = false;
  } leaky;
  const ClientReport r = fakegpu::run_evil_cases(leaky, "sim", nullptr, 50);
  EXPECT_FALSE(r.all_passed());
}

}  // namespace
