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
//                  openblas_set_num_threads(1)). For each N the variants run
//                  one after another, so the ratios compare the same minutes of
//                  a shared machine.
//
//   build/default/bin/bench-hal --benchmark_filter=Dispatch
//   build/default/bin/bench-hal --benchmark_filter=Matmul [--big]   (--big: up to 2048, cuda 4096)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "hal/hal.hpp"

#ifdef GPULAB_HAL_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace hal = gpulab::hal;

namespace {

hal::Registry& registry() {
  static hal::Registry reg(hal::DiscoveryOptions::only_dir(hal::build_backend_dir()));
  return reg;
}

// A second context of the fast backend, on one thread (the variable is read by
// its init()); nullptr when it does not load.
const hal::Backend* fast_one_thread() {
  static hal::Registry reg;
  static const hal::Backend* fast = [] {
    const char* old = std::getenv("GPULAB_HAL_FAST_THREADS");
    const std::string saved = old ? old : "";
    setenv("GPULAB_HAL_FAST_THREADS", "1", 1);
    const bool ok = static_cast<bool>(reg.load(hal::build_backend_dir() / hal::backend_file_name("fast")));
    if (old) setenv("GPULAB_HAL_FAST_THREADS", saved.c_str(), 1);
    else unsetenv("GPULAB_HAL_FAST_THREADS");
    return ok ? reg.find("fast") : nullptr;
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
  std::int64_t largest = max_size("openblas");
  for (const auto& b : reg.backends()) largest = std::max(largest, max_size(b->name()));
  for (std::int64_t n = 64; n <= largest; n *= 2) {
    const bool host = n <= max_size("openblas");
#ifdef GPULAB_HAL_HAVE_OPENBLAS
    if (host) matmul("openblas-direct-1thread", [](benchmark::State& s) { BM_MatmulOpenblasDirect(s, 1); }, n);
#endif
    if (host && fast1 != nullptr) matmul("fast-1thread", [fast1](benchmark::State& s) { BM_Matmul(s, fast1); }, n);
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

}  // namespace

int main(int argc, char** argv) {
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
