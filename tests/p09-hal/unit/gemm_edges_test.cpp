// The tiled matmuls (fast's packed GEMM with each micro-kernel this CPU runs,
// at 1 and 2 threads; opencl's local-memory kernel) on the sizes where tiling
// goes wrong: 1, sizes one past a tile (7 = 6 + 1, 13 = 12 + 1, 17, 33, 49 =
// 48 + 1, 65, 257 = 256 + 1), non-square shapes, k = 1, blocks that split
// unevenly — each against the binary64 host reference under the HAL's F32
// tolerance. Plus the pieces of fast's GEMM that are not numbers: the choice
// of kernel, the cache blocking and the worker pool.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "../../../labs/p09-hal/backends/fast/blocking.hpp"
#include "../../../labs/p09-hal/backends/fast/micro_kernel.hpp"
#include "../../../labs/p09-hal/backends/fast/worker_pool.hpp"
#include "gpulab/scoped_env.hpp"
#include "hal_test_support.hpp"

namespace hal = gpulab::hal;
using hal::DType;
using hal_test::backend;

namespace {

struct Shape {
  std::uint64_t m, n, k;
};

// fast: MR 6, NR 16 (AVX2, baseline) or MR 12, NR 32 (AVX-512), kc 192..256, mc
// up to 1020; opencl: 48 x 64 tiles, k slices of 128.
constexpr Shape kEdgeShapes[] = {
    {1, 1, 1},       {7, 7, 7},     {13, 13, 13},   {17, 17, 17},    {33, 33, 33}, {49, 49, 49},
    {65, 65, 65},    {257, 257, 257}, {7, 65, 33},  {65, 7, 129},    {257, 1, 65}, {1, 257, 7},
    {33, 65, 1},     {300, 5, 1},   {5, 300, 513},  {253, 97, 200},  {130, 260, 260},
    {25, 31, 193},   {1037, 40, 30},
};

// An environment variable set while a Registry loads `fast` (its variables
// are read at init).
using gpulab::ScopedEnv;

struct ScopedThreads : ScopedEnv {
  explicit ScopedThreads(const char* value) : ScopedEnv("GPULAB_HAL_FAST_THREADS", value) {}
};

bool cpu_runs(fast_backend::Isa isa) {
  const fast_backend::CpuIsa cpu = fast_backend::this_cpu_isa();
  return isa == fast_backend::Isa::kBaseline || (isa == fast_backend::Isa::kAvx2Fma && cpu.avx2_fma) ||
         (isa == fast_backend::Isa::kAvx512 && cpu.avx512f);
}

void expect_every_shape_conforms(const hal::Backend& b, DType d) {
  for (const Shape& s : kEdgeShapes) {
    const auto r = hal::check_matmul(b, d, s.m, s.n, s.k, s.m * 131 + s.n * 7 + s.k);
    EXPECT_TRUE(r.pass) << b.name() << " " << hal::flag_name(d) << " " << s.m << "x" << s.n << "x"
                        << s.k << ": " << hal::describe(r.status) << ", worst error "
                        << r.worst_ratio << " of the tolerance";
  }
}

// Every micro-kernel (GPULAB_HAL_FAST_ISA) at 1 and 2 threads: an AVX-512
// machine runs all three, an AVX2 one skips the AVX-512 kernel.
struct KernelRun {
  const char* isa;  // GPULAB_HAL_FAST_ISA
  fast_backend::Isa expect;
  const char* threads;
};
// What ctest's test list shows for a parameter (not its bytes).
void PrintTo(const KernelRun& run, std::ostream* os) {
  *os << "GPULAB_HAL_FAST_ISA=" << run.isa << ", " << run.threads << " thread(s)";
}
class FastKernels : public ::testing::TestWithParam<KernelRun> {};

TEST_P(FastKernels, EdgeSizesMatchTheReference) {
  const KernelRun& run = GetParam();
  if (!cpu_runs(run.expect)) GTEST_SKIP() << "this CPU cannot run the " << run.isa << " kernel";
  ScopedThreads threads(run.threads);
  ScopedEnv isa("GPULAB_HAL_FAST_ISA", run.isa);
  hal::Registry reg;
  ASSERT_TRUE(reg.load(backend("fast"))) << reg.rejected().back().message;
  const hal::Backend& fast = *reg.find("fast");
  const fast_backend::KernelChoice k = fast_backend::kernel_for(run.expect);
  EXPECT_EQ(fast.device().rfind(std::string("host CPU, ") + run.threads + " thread", 0), 0u)
      << fast.device();
  const std::string kernel = std::string(k.isa_name) + " " + std::to_string(k.mr) + "x" +
                             std::to_string(k.nr) + " micro-kernel";
  EXPECT_NE(fast.device().find(kernel), std::string::npos) << fast.device();
  expect_every_shape_conforms(fast, DType::kF32);
  expect_every_shape_conforms(fast, DType::kF16);
}
INSTANTIATE_TEST_SUITE_P(
    P09, FastKernels,
    ::testing::Values(KernelRun{"avx512", fast_backend::Isa::kAvx512, "1"},
                      KernelRun{"avx512", fast_backend::Isa::kAvx512, "2"},
                      KernelRun{"avx2", fast_backend::Isa::kAvx2Fma, "1"},
                      KernelRun{"avx2", fast_backend::Isa::kAvx2Fma, "2"},
                      KernelRun{"baseline", fast_backend::Isa::kBaseline, "1"},
                      KernelRun{"baseline", fast_backend::Isa::kBaseline, "2"}),
    [](const ::testing::TestParamInfo<KernelRun>& p) {
      return std::string(p.param.isa) + "_" + p.param.threads + "thread";
    });

TEST(FastBackend, UsesTheWidestKernelThisCpuRuns) {
  ScopedEnv isa("GPULAB_HAL_FAST_ISA", nullptr);
  hal::Registry reg;
  ASSERT_TRUE(reg.load(backend("fast")));
  const fast_backend::CpuIsa cpu = fast_backend::this_cpu_isa();
  const char* want = cpu.avx512f ? "AVX-512F 12x32" : cpu.avx2_fma ? "AVX2+FMA 6x16" : "baseline x86-64 6x16";
  EXPECT_NE(reg.find("fast")->device().find(want), std::string::npos) << reg.find("fast")->device();
}

TEST(FastBackend, AnIsaItCannotUseIsRefusedAtLoadNamingTheVariable) {
  ScopedEnv isa("GPULAB_HAL_FAST_ISA", "avx1024");
  hal::Registry reg;
  EXPECT_FALSE(reg.load(backend("fast")));
  ASSERT_FALSE(reg.rejected().empty());
  EXPECT_EQ(reg.rejected().back().reason, hal::RejectReason::kInitFailed);
  EXPECT_NE(reg.rejected().back().message.find("GPULAB_HAL_FAST_ISA='avx1024': expected avx512, avx2 or baseline"),
            std::string::npos)
      << reg.rejected().back().message;
}

TEST(FastKernelChoice, TheRequestAgainstWhatTheCpuRuns) {
  using fast_backend::Isa;
  const fast_backend::CpuIsa avx512{true, true}, avx2{true, false}, old{false, false};
  Isa isa{};
  std::string why;
  ASSERT_TRUE(fast_backend::choose_isa(nullptr, avx512, isa, why));
  EXPECT_EQ(isa, Isa::kAvx512);
  ASSERT_TRUE(fast_backend::choose_isa("", avx2, isa, why));
  EXPECT_EQ(isa, Isa::kAvx2Fma);
  ASSERT_TRUE(fast_backend::choose_isa(nullptr, old, isa, why));
  EXPECT_EQ(isa, Isa::kBaseline);
  ASSERT_TRUE(fast_backend::choose_isa("avx2", avx512, isa, why));
  EXPECT_EQ(isa, Isa::kAvx2Fma);
  ASSERT_TRUE(fast_backend::choose_isa("baseline", avx512, isa, why));
  EXPECT_EQ(isa, Isa::kBaseline);
  EXPECT_FALSE(fast_backend::choose_isa("avx512", avx2, isa, why));
  EXPECT_EQ(why, "GPULAB_HAL_FAST_ISA=avx512: this CPU has no AVX-512F");
  EXPECT_FALSE(fast_backend::choose_isa("avx2", old, isa, why));
  EXPECT_EQ(why, "GPULAB_HAL_FAST_ISA=avx2: this CPU has no AVX2+FMA");
  EXPECT_FALSE(fast_backend::choose_isa("AVX512", avx512, isa, why));
  EXPECT_EQ(why, "GPULAB_HAL_FAST_ISA='AVX512': expected avx512, avx2 or baseline");
  // The tiles: what the blocking and the edge handling are sized by.
  EXPECT_EQ(fast_backend::kernel_for(Isa::kAvx512).mr, 12u);
  EXPECT_EQ(fast_backend::kernel_for(Isa::kAvx512).nr, 32u);
  EXPECT_EQ(fast_backend::kernel_for(Isa::kAvx2Fma).mr, 6u);
  EXPECT_EQ(fast_backend::kernel_for(Isa::kAvx2Fma).nr, 16u);
}

TEST(FastBackend, ConcurrentCallersOnOneContextEachGetTheirOwnResult) {
  // A second caller finds the pool busy and runs on its own thread: both right.
  ScopedThreads threads("2");
  hal::Registry reg;
  ASSERT_TRUE(reg.load(backend("fast")));
  const hal::Backend& fast = *reg.find("fast");
  std::atomic<int> passed{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 3; ++t)
    callers.emplace_back([&, t] {
      for (int i = 0; i < 4; ++i)
        if (hal::check_matmul(fast, DType::kF32, 120 + t, 100, 90, 40 + t * 4 + i).pass) ++passed;
    });
  for (auto& c : callers) c.join();
  EXPECT_EQ(passed.load(), 12);
}

TEST(FastBackend, ConcurrentCallersOfASharedBPanelEachFinish) {
  // Big enough for two parts split by rows, so B is packed once for both
  // parts; a caller that finds the pool busy runs its parts one after the
  // other, and its first part must then pack the whole panel (no waiting on a
  // group nobody claimed).
  ScopedThreads threads("2");
  hal::Registry reg;
  ASSERT_TRUE(reg.load(backend("fast")));
  const hal::Backend& fast = *reg.find("fast");
  std::atomic<int> passed{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 3; ++t)
    callers.emplace_back([&, t] {
      for (int i = 0; i < 2; ++i)
        if (hal::check_matmul(fast, DType::kF32, 256 + t, 130, 140, 70 + t * 2 + i).pass) ++passed;
    });
  for (auto& c : callers) c.join();
  EXPECT_EQ(passed.load(), 6);
}

TEST(OpenclBackend, EdgeSizesMatchTheReference) {
  if (!hal_test::built("opencl"))
    GTEST_SKIP() << "opencl backend not built (no OpenCL headers/ICD loader)";
  hal::Registry reg;
  if (!reg.load(backend("opencl"))) {
    const hal::Rejection& why = reg.rejected().back();
    if (why.reason == hal::RejectReason::kNoDevice)
      GTEST_SKIP() << "no OpenCL device: " << why.message;
    FAIL() << "opencl backend did not load (" << hal::reject_reason_name(why.reason)
           << "): " << why.message;
  }
  expect_every_shape_conforms(*reg.find("opencl"), DType::kF32);
}

constexpr fast_backend::Tile kAvx2Tile = fast_backend::kTileAvx2, kAvx512Tile = fast_backend::kTileAvx512;

TEST(FastBlocking, FollowsTheCachesOfThisKindOfCpu) {
  // Zen 3 (the earlier machines) with the AVX2 tile: 32 KiB L1d, 512 KiB L2, 32 MiB L3.
  const auto b = fast_backend::blocking_for({32 << 10, 512 << 10, 32 << 20}, kAvx2Tile);
  EXPECT_EQ(b.kc, 256u);   // 256 x 16 floats = 16 KiB: half of L1d
  EXPECT_EQ(b.mc, 252u);   // 252 x 256 floats = 252 KiB: half of L2, a multiple of 6
  EXPECT_EQ(b.nc, 8192u);  // capped (a quarter of L3 would be 8192 columns exactly)
  // A 48 KiB L1d and 2 MiB L2 (a recent Intel core) move kc and mc with them.
  const auto big = fast_backend::blocking_for({48 << 10, 2 << 20, 32 << 20}, kAvx2Tile);
  EXPECT_EQ(big.kc, 384u);
  EXPECT_EQ(big.mc, 678u);
  // The Xeon of this session with the AVX-512 tile: a B sliver twice as wide,
  // so kc halves; mc is capped, and a multiple of 12.
  const auto xeon = fast_backend::blocking_for({48 << 10, 2 << 20, 260 << 20}, kAvx512Tile);
  EXPECT_EQ(xeon.kc, 192u);  // 192 x 32 floats = 24 KiB: half of L1d
  EXPECT_EQ(xeon.mc, 1020u);
  EXPECT_EQ(xeon.nc, 8192u);
}

TEST(FastBlocking, UnknownOrAbsurdCachesStillGiveUsableBlocks) {
  const auto unknown = fast_backend::blocking_for({0, 0, 0}, kAvx2Tile);  // a VM that hides CPUID leaf 4
  EXPECT_EQ(unknown.kc, 256u);
  EXPECT_EQ(unknown.mc, 252u);
  EXPECT_EQ(unknown.nc, 2048u);
  const auto tiny = fast_backend::blocking_for({1024, 1024, 1024}, kAvx2Tile);
  EXPECT_EQ(tiny.kc, 64u);
  EXPECT_EQ(tiny.mc, 24u);
  EXPECT_EQ(tiny.nc, 256u);
  const auto huge = fast_backend::blocking_for({1ull << 30, 1ull << 34, 1ull << 40}, kAvx2Tile);
  EXPECT_EQ(huge.kc, 1024u);
  EXPECT_EQ(huge.mc, 1020u);
  EXPECT_EQ(huge.nc, 8192u);
  const auto tiny512 = fast_backend::blocking_for({1024, 1024, 1024}, kAvx512Tile);
  EXPECT_EQ(tiny512.kc, 64u);
  EXPECT_EQ(tiny512.mc, 48u);  // four A slivers at least
  EXPECT_EQ(tiny512.nc, 512u);
}

TEST(FastWorkerPool, RunsEveryPartExactlyOnceOnDistinctThreads) {
  fast_backend::WorkerPool pool(3);
  ASSERT_EQ(pool.size(), 3u);
  for (unsigned parts = 0; parts <= 3; ++parts) {
    for (int round = 0; round < 50; ++round) {
      std::vector<std::atomic<int>> runs(3);
      std::vector<std::thread::id> ids(3);
      pool.run(parts, [&](unsigned i) {
        ++runs[i];
        ids[i] = std::this_thread::get_id();
      });
      for (unsigned i = 0; i < 3; ++i)
        EXPECT_EQ(runs[i].load(), i < parts ? 1 : 0) << parts << " parts, part " << i;
      if (parts > 0) {
        EXPECT_EQ(ids[0], std::this_thread::get_id());  // part 0 on the caller
      }
      for (unsigned i = 1; i < parts; ++i) EXPECT_NE(ids[i], ids[0]);
    }
  }
}

TEST(FastWorkerPool, ABusyPoolRunsTheSecondCallerOnItsOwnThread) {
  fast_backend::WorkerPool pool(2);
  std::atomic<bool> inside{false}, release{false};
  std::thread first([&] {
    pool.run(2, [&](unsigned i) {
      if (i != 0) return;
      inside = true;
      while (!release) std::this_thread::yield();
    });
  });
  while (!inside) std::this_thread::yield();
  std::vector<std::thread::id> ids(2);
  pool.run(2, [&](unsigned i) { ids[i] = std::this_thread::get_id(); });
  release = true;
  first.join();
  EXPECT_EQ(ids[0], std::this_thread::get_id());
  EXPECT_EQ(ids[1], std::this_thread::get_id());
}

}  // namespace
