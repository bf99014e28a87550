// Decode throughput of the engine on the default (small) model, and the HAL
// matmuls of one decode step alone on the same shapes: the ratio of their
// GFLOP/s is the compute-efficiency figure (how much of the HAL's
// matmul speed the engine keeps once attention, norms and bookkeeping join).
#include <benchmark/benchmark.h>

#include <memory>
#include <set>
#include <vector>

#include "hal/hal.hpp"
#include "serving/backend_choice.hpp"
#include "serving/engine.hpp"

namespace {

using namespace serving;
namespace hal = gpulab::hal;

constexpr const char* kBackend = "fast";

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
      for (const Weight w : {Weight::kQkv, Weight::kOut, Weight::kGateUp, Weight::kDown})
        model->matmul(ws, w, l, x.data(), m, out.data());
    model->matmul(ws, Weight::kHead, 0, x.data(), m, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(ws.flops() / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_DecodeMatmulsOnly)->Arg(1)->Arg(8)->Arg(32)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
