// What one collection and one textfile parse cost in-process (the HTTP side is
// measured by scrape_latency.sh with wrk, next to node-exporter).
//   build/default/bin/bench-exporter
#include <benchmark/benchmark.h>

#include "exporter/collector.hpp"
#include "exporter/simulated_source.hpp"
#include "gpulab/prom_text.hpp"

namespace {

// Collect + render 8 simulated GPUs (every GPU family, an Xid, throttles);
// arg 1 adds the DCGM-compatible families.
void BM_Collect8Gpus(benchmark::State& state) {
  double t = 0;
  std::vector<std::unique_ptr<exporter::Source>> sources;
  sources.push_back(std::make_unique<exporter::SimulatedSource>(
      exporter::SimulatedGpus(8, 1, exporter::parse_injections("xid:79@1s,thermal:2@1s")),
      [&t] { return t; }, state.range(0) != 0));
  exporter::Collector collector(std::move(sources), [](const std::string&) {});
  std::size_t bytes = 0;
  for (auto _ : state) {
    t += 1;
    const std::string text = collector.collect();
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.counters["exposition_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_Collect8Gpus)->Arg(0)->Arg(1);

// Parse + validate a lab textfile: 4 histograms x 16 label sets x 12 buckets.
void BM_ParseTextfile(benchmark::State& state) {
  gpulab::prom::Exposition e;
  for (int h = 0; h < 4; ++h) {
    auto& f = e.histogram("lab_latency_" + std::to_string(h) + "_seconds", "Latency.",
                          {0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2});
    for (int s = 0; s < 16; ++s) {
      for (int i = 0; i < 100; ++i) f.observe({{"rank", std::to_string(s)}}, 0.001 * i);
    }
  }
  const std::string text = e.render();
  for (auto _ : state) {
    auto parsed = gpulab::prom::parse(text);
    benchmark::DoNotOptimize(parsed.ok());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(text.size()));
}
BENCHMARK(BM_ParseTextfile);

}  // namespace
