// Decode throughput of the engine on the default (small) model, and the HAL
// matmuls of one decode step alone on the same shapes: the ratio of their
// GFLOP/s is the compute-efficiency figure (how much of the HAL's
// matmul speed the engine keeps once attention, norms and bookkeeping join).
// The same decode-batch-32 matmuls also run on every HAL backend this build
// has (matmul alone needs no ABI 2.2 op, so ABI 2.1 blas runs too), and
// BM_EngineShareOfBestMatmul, last, divides the engine's GFLOP/s by the best
// of them measured in the same run.
#include <benchmark/benchmark.h>

#include <fmt/format.h>

#include <chrono>
#include <algorithm>
#include <map>
#include <optional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gpulab/rng.hpp"

#include "hal/hal.hpp"
#include "serving/backend_choice.hpp"
#include "serving/engine.hpp"

namespace {

using namespace serving;
namespace hal = gpulab::hal;

constexpr const char* kBackend = "fast";
constexpr std::int64_t kDecodeBatch = 32;

// GFLOP/s of this run's batch-32 measurements: "engine" (BM_DecodeStep/32) and each backend's matmuls.
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::map<std::string, double>& batch32_gflops() {
  static std::map<std::string, double> m;
  return m;
}

// The registry outlives the model (its buffers are freed through the backend).
struct Loaded {
  hal::Registry registry{hal::DiscoveryOptions::only_dir(hal::build_backend_dir())};
  std::unique_ptr<Model> model;
};

Loaded* loaded() {
  static Loaded* l = [] {
    auto* x = new Loaded;
    ModelConfig c;
    preset("small", c);
    try {
      x->model = std::make_unique<Model>(c, choose_backend(x->registry, kBackend));
    } catch (const std::exception&) {
      x->model.reset();
    }
    return x;
  }();
  return l;
}

void BM_DecodeStep(benchmark::State& state) {
  const Model* model = loaded()->model.get();
  if (!model) {
    state.SkipWithError("SKIPPED: the fast HAL backend did not load");
    return;
  }
  const auto batch = static_cast<std::size_t>(state.range(0));
  EngineOptions o;
  o.max_running = batch;
  o.kv_blocks = 1024;
  Engine engine(*model, o);
  SamplingParams p;
  p.max_tokens = 900;  // never finishes inside the benchmark
  for (std::size_t i = 0; i < batch; ++i) {
    std::vector<TokenId> prompt(32);
    for (std::size_t t = 0; t < prompt.size(); ++t) prompt[t] = static_cast<TokenId>((i * 31 + t * 7) % 128);
    (void)engine.submit(prompt, p);
  }
  // Until every sequence has its first token: from then on every step is pure decode.
  std::set<RequestId> started;
  while (started.size() < batch)
    for (const auto& e : engine.step()) started.insert(e.id);
  const EngineStats before = engine.stats();
  const auto start = Clock::now();
  for (auto _ : state) {
    const auto events = engine.step();
    if (events.size() != batch) {
      state.SkipWithError("a decode step did not give every sequence a token");
      return;
    }
  }
  const EngineStats after = engine.stats();
  state.counters["tok/s"] =
      benchmark::Counter(static_cast<double>(after.generated_tokens - before.generated_tokens), benchmark::Counter::kIsRate);
  state.counters["GFLOP/s"] =
      benchmark::Counter((after.matmul_flops - before.matmul_flops) / 1e9, benchmark::Counter::kIsRate);
  if (state.range(0) == kDecodeBatch)
    batch32_gflops()["engine"] = (after.matmul_flops - before.matmul_flops) / 1e9 / seconds_since(start);
}
BENCHMARK(BM_DecodeStep)->Arg(1)->Arg(8)->Arg(32)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same matmuls a decode step of `batch` sequences issues, with nothing else.
void BM_DecodeMatmulsOnly(benchmark::State& state) {
  const Model* model = loaded()->model.get();
  if (!model) {
    state.SkipWithError("SKIPPED: the fast HAL backend did not load");
    return;
  }
  const auto m = static_cast<std::size_t>(state.range(0));
  const auto& c = model->config();
  Workspace ws(model->backend());
  std::vector<float> x(m * c.ffn, 0.5f), out(m * std::max({c.qkv_dim(), 2 * c.ffn, c.vocab}));
  for (auto _ : state) {
    for (std::size_t l = 0; l < c.layers; ++l)
      for (const Weight w : kLayerWeights)
        model->matmul(ws, w, l, x.data(), m, out.data());
    model->matmul(ws, Weight::kHead, 0, x.data(), m, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(ws.flops() / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_DecodeMatmulsOnly)->Arg(1)->Arg(8)->Arg(32)->Unit(benchmark::kMillisecond)->UseRealTime();

// The matmuls of one decode step of kDecodeBatch sequences on the backend
// `name`, each through a serving::Workspace as the engine issues them (upload
// the activations, matmul against weights resident on the backend, download),
// with weights of the default model's shapes, one set per layer as the model has.
void BM_DecodeMatmulsOn(benchmark::State& state, const char* name) {
  const hal::Backend* b = loaded()->registry.find(name);
  if (b == nullptr) {
    state.SkipWithError(fmt::format("SKIPPED: backend {} did not load here", name).c_str());
    return;
  }
  if (const auto s = b->usable(hal::Op::kMatmul, hal::DType::kF32); !s.ok()) {
    state.SkipWithError(fmt::format("SKIPPED: {}", s.message).c_str());
    return;
  }
  ModelConfig c;
  preset("small", c);
  gpulab::Rng rng(1);
  auto resident = [&](std::size_t count) {
    std::vector<float> host(count);
    for (float& v : host) v = static_cast<float>(rng.uniform01() - 0.5) * 0.1f;
    auto buf = b->allocate(count * sizeof(float));
    if (!buf) return std::optional<hal::DeviceBuffer>();
    if (!b->upload(buf.value(), host.data(), count * sizeof(float)).ok()) return std::optional<hal::DeviceBuffer>();
    return std::optional<hal::DeviceBuffer>(std::move(buf.value()));
  };
  struct Mat {
    std::size_t k, n;
    hal::DeviceBuffer w;
  };
  std::vector<Mat> mats;
  auto add = [&](Weight w) {
    const std::size_t k = weight_rows(c, w), n = weight_cols(c, w);
    auto buf = resident(k * n);
    if (!buf) return false;
    mats.push_back({k, n, std::move(*buf)});
    return true;
  };
  bool ok = true;
  for (std::size_t l = 0; l < c.layers; ++l)
    for (const Weight w : kLayerWeights) ok = ok && add(w);
  ok = ok && add(Weight::kHead);
  if (!ok) {
    state.SkipWithError(fmt::format("{}: could not hold the model's weights", name).c_str());
    return;
  }
  const auto m = static_cast<std::size_t>(state.range(0));
  Workspace ws(*b);
  std::vector<float> x(m * c.ffn, 0.5f), out(m * std::max({c.qkv_dim(), 2 * c.ffn, c.vocab}));
  const auto start = Clock::now();
  try {
    for (auto _ : state) {
      for (const Mat& mat : mats) ws.matmul(x.data(), m, mat.k, mat.w, mat.n, out.data());
      benchmark::DoNotOptimize(out.data());
    }
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  const double secs = seconds_since(start);
  state.counters["GFLOP/s"] = benchmark::Counter(ws.flops() / 1e9, benchmark::Counter::kIsRate);
  if (m == static_cast<std::size_t>(kDecodeBatch)) batch32_gflops()[name] = ws.flops() / 1e9 / secs;
}
BENCHMARK_CAPTURE(BM_DecodeMatmulsOn, fast, "fast")->Arg(kDecodeBatch)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_DecodeMatmulsOn, blas, "blas")->Arg(kDecodeBatch)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_DecodeMatmulsOn, opencl, "opencl")->Arg(kDecodeBatch)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_DecodeMatmulsOn, cpu_ref, "cpu_ref")->Arg(kDecodeBatch)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_DecodeMatmulsOn, cuda, "cuda")->Arg(kDecodeBatch)->Unit(benchmark::kMillisecond)->UseRealTime();

// Computed, not timed: the engine's matmul GFLOP/s at decode batch 32 (on
// fast) over the best backend's for the same matmuls, both measured earlier
// in this run. Registered last so it runs after them.
void BM_EngineShareOfBestMatmul(benchmark::State& state) {
  const auto& g = batch32_gflops();
  std::string best;
  for (const auto& [name, gflops] : g)
    if (name != "engine" && (best.empty() || gflops > g.at(best))) best = name;
  if (!g.contains("engine") || best.empty()) {
    state.SkipWithError(
        "SKIPPED: needs BM_DecodeStep/32 and at least one BM_DecodeMatmulsOn/*/32 earlier in the same run");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(best.data());
  state.counters["engine_GFLOP/s"] = g.at("engine");
  state.counters["best_GFLOP/s"] = g.at(best);
  state.counters["pct_of_best"] = 100.0 * g.at("engine") / g.at(best);
  std::string label = "best: " + best;
  for (const auto& [name, gflops] : g)
    if (name != "engine") label += fmt::format(" | {} {:.2f}", name, gflops);
  state.SetLabel(label);
}
BENCHMARK(BM_EngineShareOfBestMatmul)->Iterations(1);

}  // namespace
