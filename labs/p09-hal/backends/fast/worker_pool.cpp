#include "worker_pool.hpp"

#include <unistd.h>

#include <chrono>
#include <system_error>

namespace fast_backend {
namespace {

// Long enough to bridge the gap between two calls of a loop, short enough
// that an idle backend gives the core back at once on a shared machine.
constexpr auto kSpin = std::chrono::microseconds(50);

// Polls `done` until it holds or kSpin has passed; returns whether it held.
template <class Done>
bool spin_until(Done done) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  do {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();  // let the sibling hyperthread run, save power
#endif
    }
  } while (std::chrono::steady_clock::now() < until);
  return done();
}

}  // namespace

WorkerPool::WorkerPool(unsigned threads) : owner_pid_(getpid()) {
  for (unsigned i = 1; i < threads; ++i) {
    try {
      // A lambda, not (&WorkerPool::work, this, i): std::thread's state type
      // instantiated on a member pointer is a vague-linkage symbol the .so
      // would export despite -fvisibility=hidden (test ElfFacts.*).
      workers_.emplace_back([this, i] { work(i); });
    } catch (const std::system_error&) {
      break;  // no more threads from the system: run with the ones we have
    }
  }
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(mutex_);
    stop_.store(true);
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void WorkerPool::run(unsigned parts, const std::function<void(unsigned)>& part) {
  std::unique_lock job(job_mutex_, std::try_to_lock);
  if (parts <= 1 || !job.owns_lock() || getpid() != owner_pid_) {
    for (unsigned i = 0; i < parts; ++i) part(i);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    part_ = &part;
    parts_ = parts;
    pending_.store(parts - 1);
    generation_.fetch_add(1);
  }
  wake_.notify_all();
  part(0);
  const auto all_done = [this] { return pending_.load() == 0; };
  if (spin_until(all_done)) return;
  std::unique_lock lock(mutex_);
  done_.wait(lock, all_done);
}

void WorkerPool::work(unsigned index) {
  std::uint64_t seen = 0;
  for (;;) {
    const auto woken = [&] { return stop_.load() || generation_.load() != seen; };
    spin_until(woken);
    std::unique_lock lock(mutex_);
    wake_.wait(lock, woken);
    if (stop_) return;
    seen = generation_.load();
    if (index >= parts_) continue;
    const auto* part = part_;
    lock.unlock();
    (*part)(index);
    if (pending_.fetch_sub(1) == 1) {
      // Under the mutex, so the caller cannot test pending_ and then sleep
      // past this notification.
      std::lock_guard done_lock(mutex_);
      done_.notify_one();
    }
  }
}

}  // namespace fast_backend
