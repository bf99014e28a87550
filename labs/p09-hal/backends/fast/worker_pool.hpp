// Threads the fast backend keeps for the life of its context, so a matmul
// does not pay for creating and joining threads on every call (tens of
// microseconds on a loaded machine: a tenth of a 256^3 GEMM). A worker that
// finished a part, and a caller waiting for the workers, spin for a short
// while (kSpin) before they sleep: waking a sleeping vCPU goes through the
// hypervisor, and back-to-back calls (a model's layers) find the workers awake.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace fast_backend {

class WorkerPool {
 public:
  // Starts up to `threads - 1` workers; the caller of run() is the other one.
  // A worker that cannot be started leaves the pool smaller, never broken.
  explicit WorkerPool(unsigned threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Threads a job can use now (workers + the caller).
  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }

  // Runs part(i) for every i in [0, parts): part 0 on the calling thread, the
  // others on workers, and returns when all are done. parts must be <= size().
  // Two callers at once, or a caller in a forked child (which has no
  // workers), run every part on the calling thread instead.
  void run(unsigned parts, const std::function<void(unsigned)>& part);

 private:
  void work(unsigned index);

  std::mutex job_mutex_;  // one job at a time on the workers
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(unsigned)>* part_ = nullptr;  // written under mutex_
  unsigned parts_ = 0;                                   // written under mutex_
  std::atomic<unsigned> pending_{0};
  std::atomic<std::uint64_t> generation_{0};  // bumped under mutex_, read by spinners
  std::atomic<bool> stop_{false};             // set under mutex_
  pid_t owner_pid_;
  std::vector<std::thread> workers_;
};

}  // namespace fast_backend
