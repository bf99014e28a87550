#include "membench/worker_pool.hpp"

#include <fmt/core.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>

#include "gpulab/errors.hpp"

namespace membench {

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

void pin_current_thread(int cpu) {
  const auto cpus = allowed_cpus();
  if (std::find(cpus.begin(), cpus.end(), cpu) == cpus.end())
    throw gpulab::UsageError(fmt::format(
        "--cpu {}: this process may only run on CPUs {}", cpu,
        cpus.empty() ? std::string("(unknown)") : fmt::format("{}-{}", cpus.front(), cpus.back())));
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0)
    throw gpulab::RunError(fmt::format("cannot pin a thread to CPU {}", cpu));
}

std::pair<std::size_t, std::size_t> slice(std::size_t n, int t, int threads, std::size_t grain) {
  const std::size_t chunks = (n + grain - 1) / grain;
  const auto nt = static_cast<std::size_t>(threads), ut = static_cast<std::size_t>(t);
  const std::size_t begin = std::min(n, chunks * ut / nt * grain);
  const std::size_t end = std::min(n, chunks * (ut + 1) / nt * grain);
  return {begin, end};
}

WorkerPool::WorkerPool(int threads, int first_cpu) {
  const auto cpus = allowed_cpus();
  int start = 0;
  if (first_cpu >= 0) {
    const auto it = std::find(cpus.begin(), cpus.end(), first_cpu);
    if (it == cpus.end())
      throw gpulab::UsageError(
          fmt::format("--cpu {}: not a CPU this process may run on", first_cpu));
    start = static_cast<int>(it - cpus.begin());
  }
  if (threads < 1) throw gpulab::UsageError("the number of threads must be at least 1");
  for (int t = 0; t < threads; ++t) {
    const int cpu = first_cpu >= 0 ? cpus[static_cast<std::size_t>(start + t) % cpus.size()] : -1;
    workers_.emplace_back([this, t, cpu] { loop(t, cpu); });
  }
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (auto& w : workers_) w.join();
}

void WorkerPool::run(const std::function<void(int)>& fn) {
  std::unique_lock lock(mu_);
  job_ = &fn;
  pending_ = size();
  error_ = nullptr;
  ++generation_;
  start_cv_.notify_all();
  done_cv_.wait(lock, [&] { return pending_ == 0; });
  job_ = nullptr;
  if (error_) std::rethrow_exception(error_);
}

void WorkerPool::loop(int t, int cpu) {
  if (cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set,
                           &set);  // best effort; validated by the constructor
  }
  std::size_t seen = 0;
  for (;;) {
    const std::function<void(int)>* job = nullptr;
    {
      std::unique_lock lock(mu_);
      start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
    }
    std::exception_ptr err;
    try {
      (*job)(t);
    } catch (...) {
      err = std::current_exception();
    }
    std::lock_guard lock(mu_);
    if (err && !error_) error_ = err;
    if (--pending_ == 0) done_cv_.notify_one();
  }
}

}  // namespace membench
