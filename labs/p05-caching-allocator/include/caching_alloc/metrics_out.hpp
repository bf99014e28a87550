// Extension 5: the allocator's state in the Prometheus text exposition format
// (version 0.0.4): reserved / allocated / cached / largest cached block — the
// fragmentation dashboard of curriculum Phase 10 — plus the event counters.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "caching_alloc/caching_allocator.hpp"
#include "gpulab/prom_text.hpp"

namespace caching_alloc {

// Gauges end in _bytes (or are plain counts), counters in _total; every
// metric has HELP and TYPE before its samples; the text ends with '\n'.
std::string prometheus_text(const CachingAllocator& alloc);

// The platform's allocator families (the names gpu-exporter re-exposes and the
// SLO pack alerts on, labs/p10-exporter/slo): allocator_reserved_bytes,
// allocator_allocated_bytes, allocator_largest_free_block_bytes (gauges) and
// allocator_oom_total (counter), from the allocator's state at the end of a run.
gpulab::prom::Exposition platform_metrics(const AllocatorStats& stats,
                                          std::uint64_t largest_free_block);

// `--metrics-out FILE`: writes platform_metrics() atomically (temp file +
// rename, the textfile-collector pattern). A path that cannot be written is a
// gpulab::UsageError (exit 2).
void write_metrics_file(const std::filesystem::path& path, const AllocatorStats& stats,
                        std::uint64_t largest_free_block);

}  // namespace caching_alloc
