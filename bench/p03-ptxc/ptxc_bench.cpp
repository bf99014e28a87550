// Compile time, interpreter throughput, and the static instruction counts of
// ptxc -O1 against nvcc -O3 for the same kernels (as counters, so the table in
// the README can be reproduced with `bench-ptxc --benchmark_filter=Count`).
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>

#include "ptxc/compiler.hpp"
#include "ptxc/differential.hpp"
#include "ptxc/suite.hpp"

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void BM_CompileSuite(benchmark::State& state) {
  const auto opts = ptxc::CompileOptions::at_level(static_cast<int>(state.range(0)));
  for (auto _ : state)
    benchmark::DoNotOptimize(ptxc::compile(ptxc::builtin_suite_source(), "<suite>", opts).ptx);
  state.SetItemsProcessed(state.iterations() * 10);  // kernels
}
BENCHMARK(BM_CompileSuite)->Arg(0)->Arg(1);

void BM_InterpretSaxpy(benchmark::State& state) {
  const auto c = ptxc::compile("kernel saxpy(a: f32, x: f32*, y: f32*) { y[i] = a * x[i] + y[i]; }",
                               "b.k", ptxc::CompileOptions::at_level(1));
  const auto m = ptxc::ptx::parse_ptx(c.ptx);
  const int n = static_cast<int>(state.range(0));
  const auto inputs = ptxc::random_inputs(c.program.kernels[0].params, n, 1);
  std::uint64_t executed = 0;
  for (auto _ : state) {
    const auto run = ptxc::run_ptx(m.entries[0], c.program.kernels[0].params, inputs, n, 256);
    executed += run.stats.instructions;
    benchmark::DoNotOptimize(run.buffers.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(executed));  // PTX instructions per second
}
BENCHMARK(BM_InterpretSaxpy)->Arg(1 << 12)->Arg(1 << 16);

void BM_CountVsNvcc(benchmark::State& state, const char* kernel) {
  const auto mine = ptxc::ptx::parse_ptx(
      ptxc::compile(read(std::string(PTXC_LAB_DIR) + "/kernels/elementwise.ptxc"), "e.k",
                    ptxc::CompileOptions::at_level(1))
          .ptx);
  const auto nvcc =
      ptxc::ptx::parse_ptx(read(std::string(PTXC_LAB_DIR) + "/kernels/nvcc13-sm80-O3.ptx"));
  for (auto _ : state) benchmark::DoNotOptimize(mine.find(kernel));
  state.counters["insts_ptxc"] =
      static_cast<double>(ptxc::ptx::instruction_count(*mine.find(kernel)));
  state.counters["insts_nvcc"] =
      static_cast<double>(ptxc::ptx::instruction_count(*nvcc.find(kernel)));
}
BENCHMARK_CAPTURE(BM_CountVsNvcc, saxpy, "saxpy");
BENCHMARK_CAPTURE(BM_CountVsNvcc, scale2, "scale2");
BENCHMARK_CAPTURE(BM_CountVsNvcc, vadd, "vadd");

}  // namespace
