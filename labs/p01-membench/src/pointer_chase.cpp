#include "membench/pointer_chase.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <new>
#include <numeric>

#include "gpulab/timing.hpp"
#include "membench/sizes.hpp"

namespace membench {
namespace {

struct alignas(kCacheLine) Node {
  const Node* next;
};
static_assert(sizeof(Node) == kCacheLine, "one node per cache line");

// Written once per measurement so the compiler must compute the chase.
const void* volatile g_sink = nullptr;

}  // namespace

std::vector<std::uint32_t> sattolo_cycle(std::size_t n, gpulab::Rng& rng) {
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0U);
  // order[] becomes a random n-cycle when j is drawn from [0, i) rather than [0, i].
  for (std::size_t i = n; i > 1; --i) {
    const auto j = static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(i) - 2));
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

std::vector<std::uint32_t> sequential_cycle(std::size_t n) {
  std::vector<std::uint32_t> next(n);
  for (std::size_t i = 0; i < n; ++i) next[i] = static_cast<std::uint32_t>((i + 1) % n);
  return next;
}

std::size_t cycle_length_from_zero(std::span<const std::uint32_t> next) {
  if (next.empty()) return 0;
  std::size_t at = 0;
  for (std::size_t steps = 1; steps <= next.size(); ++steps) {
    at = next[at];
    if (at >= next.size()) return 0;  // points outside the buffer
    if (at == 0) return steps;
  }
  return next.size() + 1;  // never returned: not a cycle through node 0
}

void ChaseBuffer::Free::operator()(void* p) const noexcept {
  std::free(p);
}

ChaseBuffer::ChaseBuffer(std::span<const std::uint32_t> next, bool huge_pages)
    : nodes_(next.size()) {
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  const std::size_t align = huge_pages && bytes() >= kHuge ? kHuge : 4096;
  const std::size_t alloc = (bytes() + align - 1) / align * align;
  void* raw = std::aligned_alloc(align, alloc);
  if (!raw) throw std::bad_alloc();
  mem_.reset(raw);
  if (align == kHuge) madvise(raw, alloc, MADV_HUGEPAGE);  // advice only; failure is harmless
  auto* nodes = static_cast<Node*>(raw);
  for (std::size_t i = 0; i < nodes_; ++i) nodes[i].next = &nodes[next[i]];
}

__attribute__((noinline)) const void* chase(const void* start, std::size_t loads) {
  const auto* p = static_cast<const Node*>(start);
  std::size_t i = 0;
  for (; i + 16 <= loads; i += 16) {
#pragma GCC unroll 16
    for (int k = 0; k < 16; ++k) p = p->next;
  }
  for (; i < loads; ++i) p = p->next;
  return p;
}

ChaseTiming time_chase(const ChaseBuffer& buffer, const ChaseOptions& opts) {
  const void* p = buffer.head();
  std::vector<double> cpu, wall;
  for (int r = 0; r < opts.reps; ++r) {
    const double c0 = gpulab::thread_cpu_seconds();
    const gpulab::Stopwatch sw;
    p = chase(p, opts.loads);
    wall.push_back(sw.seconds());
    cpu.push_back(gpulab::thread_cpu_seconds() - c0);
  }
  g_sink = p;
  const double per_load = 1e9 / static_cast<double>(opts.loads);
  return {*std::min_element(cpu.begin(), cpu.end()) * per_load, gpulab::median(cpu) * per_load,
          *std::min_element(wall.begin(), wall.end()) * per_load};
}

ChaseTiming time_chase(std::size_t bytes, const ChaseOptions& opts) {
  const std::size_t n = bytes / kCacheLine;
  gpulab::Rng rng(opts.seed);
  const auto next = opts.sequential ? sequential_cycle(n) : sattolo_cycle(n, rng);
  const ChaseBuffer buffer(next, opts.huge_pages);
  g_sink = chase(buffer.head(), n);  // warm-up: one lap brings the lines (and pages) in
  return time_chase(buffer, opts);
}

}  // namespace membench
