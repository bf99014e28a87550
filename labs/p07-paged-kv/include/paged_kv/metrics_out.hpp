// `paged-kv --metrics-out FILE`: the KV cache's state and events in the
// Prometheus text format, under the platform's names (what gpu-exporter
// --textfile-dir re-exposes and labs/p10-exporter/slo alerts on).
#pragma once

#include <filesystem>
#include <vector>

#include "gpulab/prom_text.hpp"
#include "paged_kv/eviction.hpp"
#include "paged_kv/memory_regimes.hpp"
#include "paged_kv/prefix_workload.hpp"

namespace paged_kv {

// The prefix-sharing demo's pool with every request live:
// kv_cache_blocks{state="used"|"free"|"shared"} (shared is a subset of used).
gpulab::prom::Exposition sharing_metrics(const SharingResult& r, std::size_t pool_blocks);

// Per pool size (label pool_blocks): kv_cache_prefix_hit_ratio (block hits /
// lookups) and kv_cache_prefix_evictions_total (cached blocks reused for new data).
gpulab::prom::Exposition prefix_cache_metrics(const std::vector<PrefixRun>& runs);

// Per recovery policy (label policy="recompute"|"swap"):
// kv_cache_preemptions_total — sequences preempted because the pool ran dry.
gpulab::prom::Exposition eviction_metrics(const std::vector<PressureRun>& runs);

// Atomic write (temp file + rename); an unwritable path is a gpulab::UsageError (exit 2).
void write_metrics_file(const std::filesystem::path& path, const gpulab::prom::Exposition& e);

}  // namespace paged_kv
