#include "paged_kv/metrics_out.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <string>

#include "gpulab/errors.hpp"
#include "gpulab/metrics_out.hpp"

namespace paged_kv {

gpulab::prom::Exposition sharing_metrics(const SharingResult& r, std::size_t pool_blocks) {
  gpulab::prom::Exposition e;
  auto& blocks = e.gauge(
      "kv_cache_blocks",
      "KV-cache blocks by state; used + free = the pool, shared (refcount > 1) is part of used.");
  blocks.set({{"state", "used"}}, static_cast<double>(r.blocks_with_sharing));
  blocks.set({{"state", "free"}}, static_cast<double>(pool_blocks - r.blocks_with_sharing));
  blocks.set({{"state", "shared"}}, static_cast<double>(r.shared_with_sharing));
  return e;
}

gpulab::prom::Exposition prefix_cache_metrics(const std::vector<PrefixRun>& runs) {
  gpulab::prom::Exposition e;
  auto& ratio = e.gauge("kv_cache_prefix_hit_ratio",
                        "Full prompt blocks found in the prefix cache / blocks looked up.");
  auto& evictions =
      e.counter("kv_cache_prefix_evictions_total",
                "Cached prefix blocks reused for other data (evicted from the cache).");
  for (const PrefixRun& r : runs) {
    const gpulab::prom::Labels labels{{"pool_blocks", std::to_string(r.pool_blocks)}};
    ratio.set(labels, r.hit_rate());
    evictions.set(labels, static_cast<double>(r.evictions));
  }
  return e;
}

gpulab::prom::Exposition eviction_metrics(const std::vector<PressureRun>& runs) {
  gpulab::prom::Exposition e;
  auto& preemptions = e.counter("kv_cache_preemptions_total",
                                "Sequences preempted because the KV pool ran out of blocks.");
  for (const PressureRun& r : runs)
    preemptions.set({{"policy", r.policy == Recovery::kSwap ? "swap" : "recompute"}},
                    static_cast<double>(r.preemptions));
  return e;
}

void write_metrics_file(const std::filesystem::path& path, const gpulab::prom::Exposition& e) {
  gpulab::write_metrics_out(path, e);
}

}  // namespace paged_kv
