// The allocator's hot path: a cached alloc+free pair, side by side with host
// allocators doing the same pair in the same run. glibc is the process's own
// malloc; mimalloc is dlopen'ed privately (RTLD_LOCAL) so it does not replace
// it, and its rows are skipped when the library is missing. (Debian's
// jemalloc cannot be dlopen'ed: "cannot allocate memory in static TLS block".)
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <sys/mman.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "caching_alloc/caching_allocator.hpp"

namespace {

using caching_alloc::kMiB;

// One pair per call, never inlined: the same call wraps glibc's pair below,
// so the rows compare like with like, and under callgrind the pair's
// instruction count is this function's inclusive cost divided by its calls
// (README, "Where the nanoseconds go").
[[gnu::noinline]] void cached_pair(caching_alloc::CachingAllocator& alloc, std::uint64_t bytes) {
  auto a = alloc.allocate(bytes, 0);
  benchmark::DoNotOptimize(a);
  alloc.free(a.value().addr);
}

[[gnu::noinline]] void glibc_pair(std::size_t bytes) {
  void* p = std::malloc(bytes);
  benchmark::DoNotOptimize(p);
  std::free(p);
}

void BM_CachedAllocFree(benchmark::State& state) {
  const auto bytes = static_cast<std::uint64_t>(state.range(0));
  caching_alloc::Device dev(1024 * kMiB);
  caching_alloc::CachingAllocator alloc(dev);
  // Warm: one segment in the cache, so every iteration is a bin hit.
  alloc.free(alloc.allocate(bytes, 0).value().addr);
  for (auto _ : state) cached_pair(alloc, bytes);
  if (alloc.stats().device_mallocs != 1) state.SkipWithError("the hot loop reached the driver");
  state.SetLabel("caching allocator (bin hit)");
}
BENCHMARK(BM_CachedAllocFree)->Arg(512)->Arg(64 << 10)->Arg(2 << 20);

// The lock scope PyTorch has: one mutex per device, held for the whole of each
// malloc and free. The allocator itself takes no lock (its caller serialises,
// as p05-streams' single-threaded executor does); this row measures what an
// uncontended lock around each call adds to the bin hit above.
void BM_CachedAllocFreeLocked(benchmark::State& state) {
  const auto bytes = static_cast<std::uint64_t>(state.range(0));
  caching_alloc::Device dev(1024 * kMiB);
  caching_alloc::CachingAllocator alloc(dev);
  std::mutex mu;
  alloc.free(alloc.allocate(bytes, 0).value().addr);
  for (auto _ : state) {
    std::uint64_t addr = 0;
    {
      const std::lock_guard lock(mu);
      auto a = alloc.allocate(bytes, 0);
      benchmark::DoNotOptimize(a);
      addr = a.value().addr;
    }
    const std::lock_guard lock(mu);
    alloc.free(addr);
  }
  if (alloc.stats().device_mallocs != 1) state.SkipWithError("the hot loop reached the driver");
  state.SetLabel("caching allocator (bin hit), a std::mutex held around each call");
}
BENCHMARK(BM_CachedAllocFreeLocked)->Arg(2 << 20);

// The same pair with a few other live blocks in the bins, as in a real step.
void BM_CachedAllocFreeBusyBins(benchmark::State& state) {
  const auto bytes = static_cast<std::uint64_t>(state.range(0));
  caching_alloc::Device dev(1024 * kMiB);
  caching_alloc::CachingAllocator alloc(dev);
  std::vector<std::uint64_t> keep;
  for (int i = 0; i < 64; ++i) keep.push_back(alloc.allocate(bytes, 0).value().addr);
  for (std::size_t i = 0; i < keep.size(); i += 2) alloc.free(keep[i]);
  for (auto _ : state) {
    auto a = alloc.allocate(bytes, 0);
    benchmark::DoNotOptimize(a);
    alloc.free(a.value().addr);
  }
  state.SetLabel("caching allocator, 32 cached + 32 live blocks");
}
BENCHMARK(BM_CachedAllocFreeBusyBins)->Arg(2 << 20);

void BM_DeviceMallocFree(benchmark::State& state) {
  const auto bytes = static_cast<std::uint64_t>(state.range(0));
  caching_alloc::Device dev(1024 * kMiB);
  for (auto _ : state) {
    auto a = dev.malloc(bytes);
    benchmark::DoNotOptimize(a);
    dev.free(*a);
  }
  state.SetLabel("raw driver model (no cache; real cudaFree also syncs)");
}
BENCHMARK(BM_DeviceMallocFree)->Arg(2 << 20);

void BM_GlibcMallocFree(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) glibc_pair(bytes);
  state.SetLabel("glibc malloc+free");
}
BENCHMARK(BM_GlibcMallocFree)->Arg(512)->Arg(64 << 10)->Arg(2 << 20);

// What a host allocator pays when it really returns memory to the OS each
// time (glibc does this for 2 MiB blocks when M_MMAP_THRESHOLD is fixed, e.g.
// GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072): the nearest host
// analogue of cudaMalloc/cudaFree.
void BM_MmapMunmap(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    benchmark::DoNotOptimize(p);
    if (p == MAP_FAILED) {
      state.SkipWithError("mmap failed");
      break;
    }
    munmap(p, bytes);
  }
  state.SetLabel("mmap+munmap (memory back to the OS each time)");
}
BENCHMARK(BM_MmapMunmap)->Arg(2 << 20);

struct HostAllocator {
  void* (*alloc)(std::size_t) = nullptr;
  void (*release)(void*) = nullptr;
  std::string error;
};

HostAllocator open_allocator(const char* lib, const char* alloc_sym, const char* free_sym) {
  void* h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) return {nullptr, nullptr, dlerror()};
  HostAllocator a;
  a.alloc = reinterpret_cast<void* (*)(std::size_t)>(dlsym(h, alloc_sym));
  a.release = reinterpret_cast<void (*)(void*)>(dlsym(h, free_sym));
  return a;
}

void host_pair(benchmark::State& state, const HostAllocator& a, const char* label) {
  if (a.alloc == nullptr || a.release == nullptr) {
    state.SkipWithError(("SKIPPED: cannot load the library: " + a.error).c_str());
    return;
  }
  const auto bytes = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    void* p = a.alloc(bytes);
    benchmark::DoNotOptimize(p);
    a.release(p);
  }
  state.SetLabel(label);
}

void BM_MimallocMallocFree(benchmark::State& state) {
  static const HostAllocator a = open_allocator("libmimalloc.so.2", "mi_malloc", "mi_free");
  host_pair(state, a, "mimalloc mi_malloc+mi_free");
}
BENCHMARK(BM_MimallocMallocFree)->Arg(512)->Arg(64 << 10)->Arg(2 << 20);

}  // namespace
