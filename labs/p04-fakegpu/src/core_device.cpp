#include "fakegpu/core_device.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <stdexcept>

namespace fakegpu {

fg_config default_config() {
  fg_config cfg{};
  cfg.mem_total = std::uint64_t{FG_DEFAULT_MEM_TOTAL_MB} << 20;
  cfg.ctx_quota = std::uint64_t{FG_DEFAULT_CTX_QUOTA_MB} << 20;
  cfg.max_handles = FG_DEFAULT_MAX_HANDLES;
  return cfg;
}

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

CoreDevice::CoreDevice(const fg_config& cfg) {
  if (fg_config_check(&cfg) != 0)
    throw std::invalid_argument(
        "fakegpu config: need 0 < ctx_quota <= mem_total and 1..65536 handles");
  ops_.zalloc = [](std::size_t n) -> void* { return std::calloc(1, n); };
  ops_.free = [](void* p) { std::free(p); };
  // mu_ is held around every core call, so the core's device lock has nothing to add.
  ops_.dev_lock = lock_noop;
  ops_.dev_unlock = lock_noop;
  fg_device_init(&dev_, &cfg, &ops_);
}

CoreDevice::~CoreDevice() {
  for (auto& [id, ctx] : contexts_) fg_context_destroy(ctx);
}

std::uint64_t CoreDevice::open() {
  std::lock_guard lock(mu_);
  fg_context* ctx = fg_context_create(&dev_);
  if (ctx == nullptr) return 0;
  const std::uint64_t id = next_id_++;
  contexts_.emplace(id, ctx);
  return id;
}

bool CoreDevice::release(std::uint64_t id) {
  std::lock_guard lock(mu_);
  auto it = contexts_.find(id);
  if (it == contexts_.end()) return false;
  fg_context_destroy(it->second);
  contexts_.erase(it);
  cv_.notify_all();  // a WAIT on this context (another thread) must notice it is gone
  return true;
}

void CoreDevice::wake_all() {
  std::lock_guard lock(mu_);
  cv_.notify_all();
}

fg_stats CoreDevice::stats() {
  std::lock_guard lock(mu_);
  fg_stats s{};
  fg_device_stats(&dev_, &s);
  return s;
}

long CoreDevice::ioctl(std::uint64_t id, unsigned int cmd, void* buf,
                       const std::function<bool()>& interrupted) {
  std::unique_lock lock(mu_);
  auto it = contexts_.find(id);
  if (it == contexts_.end()) return -EBADF;
  fg_wait_req wait{};
  const long rc = fg_dispatch(it->second, cmd, buf, now_ns(), &wait);
  if (rc != FG_WAIT_BLOCK) return rc;

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto give_up = wait.timeout_ms == 0 ? Clock::time_point::max()
                                            : start + std::chrono::milliseconds(wait.timeout_ms);
  for (;;) {
    it = contexts_.find(id);
    if (it == contexts_.end()) return -EBADF;
    fg_context* ctx = it->second;
    fg_complete_due(ctx, now_ns());
    if (fg_wait_done(ctx, wait.seqno)) return 0;
    if (interrupted && interrupted()) return -EINTR;
    const auto now = Clock::now();
    if (now >= give_up) return -ETIMEDOUT;
    __u64 deadline = 0;
    auto wake = now + std::chrono::milliseconds(20);
    if (fg_next_deadline(ctx, &deadline) != 0) {
      const std::uint64_t t = now_ns();
      const auto until_deadline = std::chrono::nanoseconds(deadline > t ? deadline - t : 0);
      wake = std::min(wake, now + until_deadline);
    }
    wake = std::min(wake, give_up);
    cv_.wait_until(lock, wake);
  }
}

}  // namespace fakegpu
