#include "worker_pool.hpp"

#include <unistd.h>

#include <system_error>

namespace fast_backend {

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
    stop_ = true;
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
    pending_ = parts - 1;
    ++generation_;
  }
  wake_.notify_all();
  part(0);
  std::unique_lock lock(mutex_);
  done_.wait(lock, [this] { return pending_ == 0; });
  part_ = nullptr;
}

void WorkerPool::work(unsigned index) {
  std::uint64_t seen = 0;
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    if (index >= parts_) continue;
    const auto* part = part_;
    lock.unlock();
    (*part)(index);
    lock.lock();
    if (--pending_ == 0) done_.notify_one();
  }
}

}  // namespace fast_backend
