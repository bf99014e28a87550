// Decode throughput of the engine on the default (small) model, and the HAL
// matmuls of one decode step alone on the same shapes: the ratio of their
// GFLOP/s is the compute-efficiency figure (how much of the HAL's
// matmul speed the engine keeps once attention, norms and bookkeeping join).
// The decode-batch-32 matmuls also run on every HAL backend this build has
// (matmul alone needs no ABI 2.2 op, so ABI 2.1 blas runs too), and
// BM_EngineVsBestMatmul measures the engine's step and every backend's
// matmuls in alternation, so each sees the same load, and divides the
// engine's GFLOP/s by the best backend's.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
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
using Clock = std::chrono::steady_clock;

constexpr const char* kBackend = "fast";
constexpr std::int64_t kDecodeBatch = 32;
constexpr const char* kAllBackends[] = {"fast", "blas", "opencl", "cpu_ref", "cuda"};

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

ModelConfig small() {
  ModelConfig c;
  preset("small", c);
  return c;
}

// The registry outlives the model (its buffers are freed through the backend).
struct Loaded {
  hal::Registry registry{hal::DiscoveryOptions::only_dir(hal::build_backend_dir())};
  std::unique_ptr<Model> model;
};

Loaded* loaded() {
  static Loaded* l = [] {
    auto* x = new Loaded;
    try {
      x->model = std::make_unique<Model>(small(), choose_backend(x->registry, kBackend));
    } catch (const std::exception&) {
      x->model.reset();
    }
    return x;
  }();
  return l;
}

// An engine whose `batch` sequences have all had their first token: every later step is pure
// decode.
std::unique_ptr<Engine> decoding_engine(const Model& model, std::size_t batch) {
  EngineOptions o;
  o.max_running = batch;
  o.kv_blocks = 1024;
  auto engine = std::make_unique<Engine>(model, o);
  SamplingParams p;
  p.max_tokens = 900;  // never finishes inside a benchmark
  for (std::size_t i = 0; i < batch; ++i) {
    std::vector<TokenId> prompt(32);
    for (std::size_t t = 0; t < prompt.size(); ++t)
      prompt[t] = static_cast<TokenId>((i * 31 + t * 7) % 128);
    (void)engine->submit(prompt, p);
  }
  std::set<RequestId> started;
  while (started.size() < batch)
    for (const auto& e : engine->step()) started.insert(e.id);
  return engine;
}

// The matmuls of one decode step of the default model on one backend, each
// through a serving::Workspace as the engine issues them (upload the
// activations, matmul against weights resident on the backend, download),
// one set of weights per layer as the model has.
class BackendMatmuls {
 public:
  // Empty `why()` when the backend loaded and holds the weights.
  BackendMatmuls(const hal::Registry& registry, const std::string& name) : name_(name) {
    backend_ = registry.find(name);
    if (backend_ == nullptr) {
      why_ = fmt::format("SKIPPED: backend {} did not load here", name);
      return;
    }
    if (const auto s = backend_->usable(hal::Op::kMatmul, hal::DType::kF32); !s.ok()) {
      why_ = "SKIPPED: " + s.message;
      return;
    }
    const ModelConfig c = small();
    gpulab::Rng rng(1);
    auto add = [&](Weight w) {
      const std::size_t k = weight_rows(c, w), n = weight_cols(c, w);
      std::vector<float> host(k * n);
      for (float& v : host) v = static_cast<float>(rng.uniform01() - 0.5) * 0.1f;
      auto buf = backend_->allocate(host.size() * sizeof(float));
      if (!buf || !backend_->upload(buf.value(), host.data(), host.size() * sizeof(float)).ok())
        return false;
      mats_.push_back({k, n, std::move(buf.value())});
      return true;
    };
    bool ok = true;
    for (std::size_t l = 0; l < c.layers; ++l)
      for (const Weight w : kLayerWeights) ok = ok && add(w);
    ok = ok && add(Weight::kHead);
    if (!ok) why_ = fmt::format("{}: could not hold the model's weights", name);
    ws_ = std::make_unique<Workspace>(*backend_);
    x_.assign(static_cast<std::size_t>(kDecodeBatch) * c.ffn, 0.5f);
    out_.resize(static_cast<std::size_t>(kDecodeBatch) *
                std::max({c.qkv_dim(), 2 * c.ffn, c.vocab}));
  }
  [[nodiscard]] const std::string& why() const { return why_; }
  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] double flops() const { return ws_ ? ws_->flops() : 0; }
  // One decode step's matmuls for m rows (m <= kDecodeBatch); throws gpulab::RunError when the
  // backend fails.
  void run(std::size_t m) {
    for (const Mat& mat : mats_) ws_->matmul(x_.data(), m, mat.k, mat.w, mat.n, out_.data());
    benchmark::DoNotOptimize(out_.data());
  }

 private:
  struct Mat {
    std::size_t k, n;
    hal::DeviceBuffer w;
  };
  std::string name_, why_;
  const hal::Backend* backend_ = nullptr;
  std::vector<Mat> mats_;
  std::unique_ptr<Workspace> ws_;
  std::vector<float> x_, out_;
};

void BM_DecodeStep(benchmark::State& state) {
  const Model* model = loaded()->model.get();
  if (!model) {
    state.SkipWithError("SKIPPED: the fast HAL backend did not load");
    return;
  }
  const auto batch = static_cast<std::size_t>(state.range(0));
  auto engine = decoding_engine(*model, batch);
  const EngineStats before = engine->stats();
  for (auto _ : state) {
    const auto events = engine->step();
    if (events.size() != batch) {
      state.SkipWithError("a decode step did not give every sequence a token");
      return;
    }
  }
  const EngineStats after = engine->stats();
  state.counters["tok/s"] =
      benchmark::Counter(static_cast<double>(after.generated_tokens - before.generated_tokens),
                         benchmark::Counter::kIsRate);
  state.counters["GFLOP/s"] = benchmark::Counter((after.matmul_flops - before.matmul_flops) / 1e9,
                                                 benchmark::Counter::kIsRate);
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
      for (const Weight w : kLayerWeights) model->matmul(ws, w, l, x.data(), m, out.data());
    model->matmul(ws, Weight::kHead, 0, x.data(), m, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(ws.flops() / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_DecodeMatmulsOnly)
    ->Arg(1)
    ->Arg(8)
    ->Arg(32)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The decode-batch-32 matmuls on one named backend.
void BM_DecodeMatmulsOn(benchmark::State& state, const char* name) {
  BackendMatmuls mm(loaded()->registry, name);
  if (!mm.why().empty()) {
    state.SkipWithError(mm.why().c_str());
    return;
  }
  try {
    for (auto _ : state) mm.run(static_cast<std::size_t>(kDecodeBatch));
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  state.counters["GFLOP/s"] = benchmark::Counter(mm.flops() / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK_CAPTURE(BM_DecodeMatmulsOn, fast, "fast")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_DecodeMatmulsOn, blas, "blas")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_DecodeMatmulsOn, opencl, "opencl")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_DecodeMatmulsOn, cpu_ref, "cpu_ref")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_DecodeMatmulsOn, cuda, "cuda")->Unit(benchmark::kMillisecond)->UseRealTime();

// One iteration is a round: one engine decode step of 32 sequences (on fast),
// then the same step's matmuls on every backend that loaded, each timed on
// its own. Alternating keeps a load change on a shared machine from favouring
// whichever ran in a quiet moment; each contestant's fastest round counts.
// Counters: each one's GFLOP/s, and pct_of_best = engine / best backend.
void BM_EngineVsBestMatmul(benchmark::State& state) {
  const Model* model = loaded()->model.get();
  if (!model) {
    state.SkipWithError("SKIPPED: the fast HAL backend did not load");
    return;
  }
  auto engine = decoding_engine(*model, static_cast<std::size_t>(kDecodeBatch));
  std::vector<std::unique_ptr<BackendMatmuls>> backends;
  for (const char* name : kAllBackends) {
    auto b = std::make_unique<BackendMatmuls>(loaded()->registry, name);
    if (b->why().empty()) backends.push_back(std::move(b));
  }
  if (backends.empty()) {
    state.SkipWithError("SKIPPED: no backend could run the matmuls");
    return;
  }
  constexpr double kNever = std::numeric_limits<double>::infinity();
  double engine_best = kNever, engine_flops = 0;
  std::vector<double> best(backends.size(), kNever), flops(backends.size(), 0);
  try {
    for (auto _ : state) {
      const double f0 = engine->stats().matmul_flops;
      auto t = Clock::now();
      if (engine->step().size() != static_cast<std::size_t>(kDecodeBatch)) {
        state.SkipWithError("a decode step did not give every sequence a token");
        return;
      }
      engine_best = std::min(engine_best, seconds_since(t));
      engine_flops = engine->stats().matmul_flops - f0;
      for (std::size_t i = 0; i < backends.size(); ++i) {
        const double b0 = backends[i]->flops();
        t = Clock::now();
        backends[i]->run(static_cast<std::size_t>(kDecodeBatch));
        best[i] = std::min(best[i], seconds_since(t));
        flops[i] = backends[i]->flops() - b0;
      }
    }
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  std::size_t top = 0;
  for (std::size_t i = 0; i < backends.size(); ++i) {
    const double g = flops[i] / best[i] / 1e9;
    state.counters[backends[i]->name() + "_GFLOP/s"] = g;
    if (g > flops[top] / best[top] / 1e9) top = i;
  }
  const double engine_g = engine_flops / engine_best / 1e9;
  state.counters["engine_GFLOP/s"] = engine_g;
  state.counters["pct_of_best"] = 100.0 * engine_g / (flops[top] / best[top] / 1e9);
  state.SetLabel("best: " + backends[top]->name());
}
BENCHMARK(BM_EngineVsBestMatmul)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
