// What Prometheus should scrape on the platform, in its HTTP service-discovery
// format (GET /v1/targets; Prometheus' http_sd_configs, or the same JSON saved
// for file_sd_configs): [{"targets": ["HOST:PORT"], "labels": {...}}].
//
//   every agent that is not lost    job "gpulabd-agent", label node
//   every serve job whose server    job "gpulab-serve", labels gpulab_job,
//   answered its health check       gpulab_job_name, node, device, model
//
// The control plane itself is one static target. A serve job moves when its
// node dies, so its target follows it here instead of in a static list.
#pragma once

#include <vector>

#include "gpulab/json.hpp"
#include "platform/model.hpp"

namespace platform {

gpulab::Json prometheus_targets(const std::vector<Node>& nodes, const std::vector<Job>& jobs);

// "http://127.0.0.1:8123" -> "127.0.0.1:8123" (Prometheus' __address__); the
// text unchanged when it has no scheme.
std::string host_port_of(const std::string& url);

}  // namespace platform
