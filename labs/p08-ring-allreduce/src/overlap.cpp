#include "ring_allreduce/overlap.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "gpulab/timing.hpp"
#include "ring_allreduce/chunks.hpp"
#include "ring_allreduce/collectives.hpp"

namespace ring {
namespace {

// Bucket b of the gradient, in the same balanced split the ring uses for chunks.
template <class T>
std::span<T> bucket(std::vector<T>& grad, int buckets, int b) {
  const Chunk c = chunk_bounds(grad.size(), buckets, b);
  return std::span<T>(grad).subspan(c.begin, c.size());
}

void compute_bucket(double ms) { std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms)); }

template <WireFloat T>
gpulab::Json overlap_rank(Transport& t, const OverlapSpec& spec) {
  const auto fill = [&](std::vector<T>& g) {
    for (std::size_t i = 0; i < g.size(); ++i) g[i] = static_cast<T>((t.rank() + 1) * static_cast<int>(1 + i % 8));
  };
  std::vector<T> grad(spec.count);
  const int nb = spec.buckets;

  // Each schedule runs `reps` times; the fastest run counts (the usual figure
  // of merit on a noisy machine), and every run is checked.
  const auto best_of = [&](auto&& schedule) {
    double best = 1e300;
    for (int rep = 0; rep < spec.reps; ++rep) {
      fill(grad);
      barrier(t);
      gpulab::Stopwatch sw;
      schedule();
      best = std::min(best, sw.seconds());
    }
    return best;
  };
  const double compute = best_of([&] {
    for (int b = nb - 1; b >= 0; --b) compute_bucket(spec.compute_ms);
  });
  const double comm = best_of([&] {
    for (int b = nb - 1; b >= 0; --b) ring_allreduce<T>(t, bucket(grad, nb, b));
  });
  const double sequential = best_of([&] {
    for (int b = nb - 1; b >= 0; --b) compute_bucket(spec.compute_ms);
    for (int b = nb - 1; b >= 0; --b) ring_allreduce<T>(t, bucket(grad, nb, b));
  });
  // Overlapped: a "backward" thread marks buckets ready; this thread all-reduces
  // each one as soon as it is, while the next is still being computed.
  const double overlapped = best_of([&] {
    std::mutex mu;
    std::condition_variable cv;
    int ready = nb;  // buckets nb-1 .. ready have their gradients
    std::thread backward([&] {
      for (int b = nb - 1; b >= 0; --b) {
        compute_bucket(spec.compute_ms);
        const std::lock_guard lock(mu);
        ready = b;
        cv.notify_one();
      }
    });
    try {
      for (int b = nb - 1; b >= 0; --b) {
        {
          std::unique_lock lock(mu);
          cv.wait(lock, [&] { return ready <= b; });
        }
        ring_allreduce<T>(t, bucket(grad, nb, b));
      }
    } catch (...) {
      backward.join();
      throw;
    }
    backward.join();
  });

  const double ranks_sum = t.world() * (t.world() + 1) / 2.0;
  std::uint64_t wrong = 0;
  for (std::size_t i = 0; i < grad.size(); ++i)
    if (static_cast<double>(grad[i]) != ranks_sum * static_cast<double>(1 + i % 8)) ++wrong;
  return {{"compute", compute}, {"comm", comm}, {"sequential", sequential}, {"overlapped", overlapped}, {"wrong", wrong}};
}

}  // namespace

RankJob overlap_job(const OverlapSpec& spec) {
  // The gradient and the ring's inbox (at most one bucket).
  const std::uint64_t v = std::uint64_t{spec.count} * dtype_size(spec.dtype);
  return {[spec](Transport& t) {
            return spec.dtype == DType::kF64 ? overlap_rank<double>(t, spec) : overlap_rank<float>(t, spec);
          },
          MemoryNeed{2 * v, 0}};
}

double OverlapResult::hidden_fraction() const {
  const double best = std::min(compute, comm);
  return best > 0 ? std::clamp(hidden() / best, 0.0, 1.0) : 0.0;
}

OverlapResult fold_overlap(const std::vector<RankOutcome>& ranks) {
  OverlapResult r;
  for (const auto& o : ranks) {
    if (o.status != RankOutcome::Status::kOk)
      throw std::runtime_error(fmt::format("rank {} did not finish: {}", o.rank, o.error));
    r.compute = std::max(r.compute, o.report["compute"].get<double>());
    r.comm = std::max(r.comm, o.report["comm"].get<double>());
    r.sequential = std::max(r.sequential, o.report["sequential"].get<double>());
    r.overlapped = std::max(r.overlapped, o.report["overlapped"].get<double>());
    r.wrong += o.report["wrong"].get<std::uint64_t>();
  }
  return r;
}

}  // namespace ring
