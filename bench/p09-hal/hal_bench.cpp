// p09-hal benchmarks.
//
//  Dispatch/*      the cost the HAL adds to one call: a direct call through the
//                  backend's function pointer vs route() + the typed wrapper,
//                  on the same 1x1x1 matmul of the same backend.
//  Matmul/<name>/N GFLOP/s of an N x N x N F32 matmul per loaded backend, with
//                  buffers already on the backend (compute only), next to
//                  OpenBLAS called directly (Matmul/openblas-direct/N, all
//                  cores). Matmul/fast-1thread/N and Matmul/openblas-direct-1thread/N
//                  are the same on one thread (GPULAB_HAL_FAST_THREADS=1,
//                  openblas_set_num_threads(1)); Matmul/fast-avx2-1thread/N is
//                  fast's AVX2 kernel on a CPU whose own choice is AVX-512. For each N the variants run
//                  one after another, so the ratios compare the same minutes of
//                  a shared machine.
//
//   build/default/bin/bench-hal --benchmark_filter=Dispatch
//   build/default/bin/bench-hal --benchmark_filter=Matmul [--big]   (--big: up to 2048, cuda 4096)
//
// OpenBLAS is checked first: a core narrower than the CPU (a model its release
// does not know) is corrected with OPENBLAS_CORETYPE by running again
// (hal/openblas_core.hpp); the core it ran is in the output's context.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/scoped_env.hpp"
#include "hal/hal.hpp"

#ifdef GPULAB_HAL_HAVE_OPENBLAS
#include <cblas.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "hal/openblas_core.hpp"
#endif

namespace hal = gpulab::hal;

namespace {

hal::Registry& registry() {
  static hal::Registry reg(hal::DiscoveryOptions::only_dir(hal::build_backend_dir()));
  return reg;
}


// Another context of the fast backend, on one thread, with the kernel `isa`
// names (GPULAB_HAL_FAST_ISA; "" for its own choice); nullptr when it does not
// load (an ISA this CPU lacks).
const hal::Backend* fast_one_thread(hal::Registry& reg, const char* isa) {
  gpulab::ScopedEnv threads("GPULAB_HAL_FAST_THREADS", "1");
  gpulab::ScopedEnv kernel("GPULAB_HAL_FAST_ISA", isa);
  return reg.load(hal::build_backend_dir() / hal::backend_file_name("fast")) ? reg.find("fast") : nullptr;
}
const hal::Backend* fast_one_thread() {
  static hal::Registry reg;
  static const hal::Backend* fast = fast_one_thread(reg, "");
  return fast;
}
// The AVX2 kernel on one thread, where the CPU's own choice is another (AVX-512).
const hal::Backend* fast_avx2_one_thread() {
  static hal::Registry reg;
  static const hal::Backend* fast = [] {
    const hal::Backend* own = fast_one_thread();
    if (own == nullptr || own->device().find("AVX2+FMA") != std::string::npos) return static_cast<const hal::Backend*>(nullptr);
    return fast_one_thread(reg, "avx2");
  }();
  return fast;
}

std::vector<float> ramp(std::size_t count, float scale) {
  std::vector<float> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = scale * static_cast<float>(static_cast<int>(i % 17) - 8);
  return v;
}

// Buffers of one backend holding an n x n x n F32 problem.
struct Problem {
  hal::DeviceBuffer a, b, c;
};
Problem upload_problem(const hal::Backend& be, std::uint64_t m, std::uint64_t n, std::uint64_t k) {
  Problem p{be.allocate(m * k * 4).value(), be.allocate(k * n * 4).value(), be.allocate(m * n * 4).value()};
  const auto a = ramp(m * k, 0.01f), b = ramp(k * n, 0.02f);
  if (!be.upload(p.a, a.data(), a.size() * 4).ok() || !be.upload(p.b, b.data(), b.size() * 4).ok())
    throw std::runtime_error("upload failed");
  return p;
}

void set_gflops(benchmark::State& state, std::uint64_t m, std::uint64_t n, std::uint64_t k) {
  state.counters["GFLOP/s"] = benchmark::Counter(2e-9 * static_cast<double>(m) * static_cast<double>(n) *
                                                     static_cast<double>(k),
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

// ---- dispatch overhead --------------------------------------------------------
void BM_DispatchDirect(benchmark::State& state, const hal::Backend* be) {
  Problem p = upload_problem(*be, 1, 1, 1);
  const gpulab_hal_backend& d = be->descriptor();
  void* ctx = be->context();
  const gpulab_hal_matmul_args args{sizeof args, GPULAB_HAL_DTYPE_F32, 1, 1, 1, p.a.handle(), p.b.handle(), p.c.handle()};
  gpulab_hal_error err;
  for (auto _ : state) {
    benchmark::DoNotOptimize(d.matmul(ctx, &args, &err));
    benchmark::ClobberMemory();
  }
}

void BM_DispatchRouted(benchmark::State& state, const hal::Backend* be) {
  Problem p = upload_problem(*be, 1, 1, 1);
  const hal::Registry& reg = registry();
  const hal::Request req{hal::Op::kMatmul, hal::DType::kF32, 1, 1, 1};
  // Route to this backend: pin when it is not the router's own choice.
  const bool routed_here = reg.route(req) && reg.route(req).value() == be;
  if (!routed_here) {
    state.SkipWithError("SKIPPED: the router picks another backend for 1x1x1 F32");
    return;
  }
  for (auto _ : state) {
    auto target = reg.route(req);
    hal::Status s = target.value()->matmul(hal::DType::kF32, 1, 1, 1, p.a, p.b, p.c);
    benchmark::DoNotOptimize(s.code);
    benchmark::ClobberMemory();
  }
}

// The same through select(): the router's pointer, no Expected.
void BM_DispatchSelected(benchmark::State& state, const hal::Backend* be) {
  Problem p = upload_problem(*be, 1, 1, 1);
  const hal::Registry& reg = registry();
  const hal::Request req{hal::Op::kMatmul, hal::DType::kF32, 1, 1, 1};
  if (reg.select(req) != be) {
    state.SkipWithError("SKIPPED: the router picks another backend for 1x1x1 F32");
    return;
  }
  for (auto _ : state) {
    hal::Status s = reg.select(req)->matmul(hal::DType::kF32, 1, 1, 1, p.a, p.b, p.c);
    benchmark::DoNotOptimize(s.code);
    benchmark::ClobberMemory();
  }
}

void BM_RouteOnly(benchmark::State& state) {
  const hal::Registry& reg = registry();
  const hal::Request req{hal::Op::kMatmul, hal::DType::kF16, 64, 64, 64};
  for (auto _ : state) {
    auto target = reg.route(req);
    benchmark::DoNotOptimize(target);
  }
}

void BM_SelectOnly(benchmark::State& state) {
  const hal::Registry& reg = registry();
  const hal::Request req{hal::Op::kMatmul, hal::DType::kF16, 64, 64, 64};
  for (auto _ : state) benchmark::DoNotOptimize(reg.select(req));
}

// ---- matmul throughput --------------------------------------------------------
void BM_Matmul(benchmark::State& state, const hal::Backend* be) {
  const auto n = static_cast<std::uint64_t>(state.range(0));
  Problem p = upload_problem(*be, n, n, n);
  // One untimed call: kernel compilation (OpenCL), library and thread start-up.
  if (hal::Status s = be->matmul(hal::DType::kF32, n, n, n, p.a, p.b, p.c); !s.ok()) {
    state.SkipWithError(hal::describe(s).c_str());
    return;
  }
  for (auto _ : state) {
    hal::Status s = be->matmul(hal::DType::kF32, n, n, n, p.a, p.b, p.c);
    if (!s.ok()) {
      state.SkipWithError(hal::describe(s).c_str());
      return;
    }
  }
  set_gflops(state, n, n, n);
}

#ifdef GPULAB_HAL_HAVE_OPENBLAS
// threads 0: OpenBLAS's own choice (every core); otherwise that many, restored after.
void BM_MatmulOpenblasDirect(benchmark::State& state, int threads) {
  const int previous = openblas_get_num_threads();
  if (threads > 0) openblas_set_num_threads(threads);
  struct Restore {
    int threads;
    ~Restore() { openblas_set_num_threads(threads); }
  } restore{previous};
  const auto n = static_cast<int>(state.range(0));
  const auto a = ramp(static_cast<std::size_t>(n) * n, 0.01f), b = ramp(static_cast<std::size_t>(n) * n, 0.02f);
  std::vector<float> c(static_cast<std::size_t>(n) * n);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    benchmark::ClobberMemory();
  }
  set_gflops(state, static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(n));
}
#endif

// Largest size worth timing per backend (the slow ones would take minutes).
// --big adds 2048 (and 4096 for cuda) for the backends that can take it.
bool g_big = false;
std::int64_t max_size(std::string_view name) {
  if (name == "cpu_ref" || name == "liar") return 256;
  if (name == "limited") return 512;
  if (name == "cuda") return g_big ? 4096 : 1024;
  return g_big ? 2048 : 1024;
}

void register_all() {
  benchmark::RegisterBenchmark("Dispatch/route-only", BM_RouteOnly);
  benchmark::RegisterBenchmark("Dispatch/select-only", BM_SelectOnly);
  const hal::Registry& reg = registry();
  if (auto first = reg.route({hal::Op::kMatmul, hal::DType::kF32, 1, 1, 1})) {
    const hal::Backend* be = first.value();
    const std::string name(be->name());
    benchmark::RegisterBenchmark(("Dispatch/direct/" + name).c_str(), BM_DispatchDirect, be);
    benchmark::RegisterBenchmark(("Dispatch/routed/" + name).c_str(), BM_DispatchRouted, be);
    benchmark::RegisterBenchmark(("Dispatch/selected/" + name).c_str(), BM_DispatchSelected, be);
  }
  // Size by size, every variant of one size before the next size.
  const auto matmul = [](const std::string& name, auto&& fn, std::int64_t n) {
    benchmark::RegisterBenchmark(("Matmul/" + name).c_str(), fn)->Arg(n)->Unit(benchmark::kMillisecond)->UseRealTime();
  };
  const hal::Backend* fast1 = fast_one_thread();
  const hal::Backend* fast_avx2 = fast_avx2_one_thread();
  std::int64_t largest = max_size("openblas");
  for (const auto& b : reg.backends()) largest = std::max(largest, max_size(b->name()));
  for (std::int64_t n = 64; n <= largest; n *= 2) {
    const bool host = n <= max_size("openblas");
#ifdef GPULAB_HAL_HAVE_OPENBLAS
    if (host) matmul("openblas-direct-1thread", [](benchmark::State& s) { BM_MatmulOpenblasDirect(s, 1); }, n);
#endif
    if (host && fast1 != nullptr) matmul("fast-1thread", [fast1](benchmark::State& s) { BM_Matmul(s, fast1); }, n);
    if (host && fast_avx2 != nullptr)
      matmul("fast-avx2-1thread", [fast_avx2](benchmark::State& s) { BM_Matmul(s, fast_avx2); }, n);
#ifdef GPULAB_HAL_HAVE_OPENBLAS
    if (host) matmul("openblas-direct", [](benchmark::State& s) { BM_MatmulOpenblasDirect(s, 0); }, n);
#endif
    // fast and opencl right after OpenBLAS: the ratios the README quotes.
    std::vector<const hal::Backend*> order;
    for (const char* first : {"fast", "opencl"})
      if (const hal::Backend* be = reg.find(first)) order.push_back(be);
    for (const auto& b : reg.backends())
      if (b->name() != "fast" && b->name() != "opencl") order.push_back(b.get());
    for (const hal::Backend* b : order) {
      if (!b->declares(hal::Op::kMatmul) || !b->declares(hal::DType::kF32) || b->name() == "liar") continue;
      const std::int64_t hi = b->max_dim() ? std::min<std::int64_t>(max_size(b->name()), static_cast<std::int64_t>(b->max_dim()))
                                           : max_size(b->name());
      if (n > hi) continue;
      matmul(std::string(b->name()), [b](benchmark::State& s) { BM_Matmul(s, b); }, n);
    }
  }
}

#ifdef GPULAB_HAL_HAVE_OPENBLAS
// OpenBLAS chose its kernels when it loaded, before main. When the core it
// chose is narrower than this CPU (Debian's 0.3.21 runs its SSE3 Prescott
// kernels on Xeons newer than it), run again with OPENBLAS_CORETYPE set, so the
// peer every ratio divides by is OpenBLAS as it runs where it knows the CPU. A
// core the user asked for is kept, and a peer that is still not fair is
// reported loudly. The core goes into the results' context (the baseline and
// the README tables name it).
void make_the_openblas_peer_fair(char** argv) {
  const char* name = openblas_get_corename();
  const hal::OpenblasCoreVerdict v = hal::judge_openblas_core(name ? name : "", hal::this_cpu_features());
  const bool fair = v.kind == hal::OpenblasCoreVerdict::Kind::kFair;
  const char* asked = std::getenv("OPENBLAS_CORETYPE");
  if (!fair && !v.coretype.empty() && asked == nullptr) {
    std::fprintf(stderr, "bench-hal: %s; running again with OPENBLAS_CORETYPE=%s\n", v.describe().c_str(),
                 v.coretype.c_str());
    std::fflush(stderr);
    setenv("OPENBLAS_CORETYPE", v.coretype.c_str(), 1);
    execv("/proc/self/exe", argv);
    std::fprintf(stderr, "bench-hal: cannot run again (/proc/self/exe: %s)\n", std::strerror(errno));
  }
  if (!fair)
    std::fprintf(stderr, "bench-hal: WARNING: %s; every ratio to OpenBLAS below flatters the other side\n",
                 v.describe().c_str());
  benchmark::AddCustomContext("openblas_core", v.core);
  benchmark::AddCustomContext("openblas_check", v.describe());
  benchmark::AddCustomContext("openblas_coretype", asked ? asked : "(not set)");
}
#endif

}  // namespace

int main(int argc, char** argv) {
#ifdef GPULAB_HAL_HAVE_OPENBLAS
  make_the_openblas_peer_fair(argv);
#endif
  benchmark::Initialize(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) != "--big") continue;
    g_big = true;
    for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
    --argc;
    break;
  }
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
