// A fixed set of worker threads, optionally pinned to consecutive CPUs, that
// run one function on every worker and wait for all of them: the
// "all cores" half of the bandwidth and peak measurements. Persistent, so a
// timed region pays a wake-up, not a thread creation.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace membench {

class WorkerPool {
 public:
  // first_cpu < 0: no pinning; otherwise worker t runs on CPU first_cpu + t
  // (modulo the CPUs this process may use).
  WorkerPool(int threads, int first_cpu);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  [[nodiscard]] int size() const { return static_cast<int>(workers_.size()); }
  // Calls fn(t) on worker t for every t, returns when all are done. An
  // exception in a worker is rethrown here.
  void run(const std::function<void(int)>& fn);

 private:
  void loop(int t, int cpu);

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable start_cv_, done_cv_;
  const std::function<void(int)>* job_ = nullptr;
  std::size_t generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

// The CPUs this process may run on (sched_getaffinity), ascending.
std::vector<int> allowed_cpus();
// Pins the calling thread; throws gpulab::UsageError when cpu is not allowed.
void pin_current_thread(int cpu);

// [begin, end) of worker t's share of n items, in whole multiples of `grain`.
std::pair<std::size_t, std::size_t> slice(std::size_t n, int t, int threads,
                                          std::size_t grain = 64);

}  // namespace membench
