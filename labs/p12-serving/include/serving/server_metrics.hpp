// What GET /metrics shows: the engine's state (running, waiting = queue
// depth, KV blocks used/free, prefix-cache hits, preemptions, tokens) and the
// latency histograms, rendered by common's Prometheus text helpers.
#pragma once

#include "gpulab/prom_text.hpp"
#include "serving/engine_loop.hpp"

namespace serving {

gpulab::prom::Exposition server_metrics(const EngineLoop::Snapshot& s, const std::string& model_name);

}  // namespace serving
