#include "caching_alloc/metrics_out.hpp"

#include <fmt/format.h>

#include <iterator>
#include <stdexcept>

#include "gpulab/errors.hpp"
#include "gpulab/metrics_out.hpp"

namespace caching_alloc {

namespace {

void family(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

void sample(std::string& out, std::string_view name, std::uint64_t value,
            std::string_view labels = {}) {
  if (labels.empty()) {
    fmt::format_to(std::back_inserter(out), "{} {}\n", name, value);
  } else {
    fmt::format_to(std::back_inserter(out), "{}{{{}}} {}\n", name, labels, value);
  }
}

}  // namespace

std::string prometheus_text(const CachingAllocator& alloc) {
  const AllocatorStats& s = alloc.stats();
  std::string out;
  constexpr std::string_view p = "gpulab_allocator_";
  const auto name = [&](std::string_view n) { return fmt::format("{}{}", p, n); };

  family(out, name("reserved_bytes"), "gauge",
         "Bytes held from the driver in segments (what nvidia-smi shows).");
  sample(out, name("reserved_bytes"), s.reserved_by_pool[0], "pool=\"small\"");
  sample(out, name("reserved_bytes"), s.reserved_by_pool[1], "pool=\"large\"");
  family(out, name("allocated_bytes"), "gauge",
         "Bytes in live blocks (what the framework reports).");
  sample(out, name("allocated_bytes"), s.allocated_by_pool[0], "pool=\"small\"");
  sample(out, name("allocated_bytes"), s.allocated_by_pool[1], "pool=\"large\"");
  family(out, name("cached_bytes"), "gauge", "Reserved minus allocated: the cache, not a leak.");
  sample(out, name("cached_bytes"), s.cached_bytes());
  family(out, name("largest_cached_block_bytes"), "gauge",
         "Largest free block in the cache; falling while cached grows means fragmentation.");
  sample(out, name("largest_cached_block_bytes"), alloc.largest_cached_block());
  family(out, name("device_largest_hole_bytes"), "gauge",
         "Largest hole left in the device address space.");
  sample(out, name("device_largest_hole_bytes"), alloc.device().largest_hole());

  const auto counter = [&](std::string_view n, std::uint64_t v, std::string_view help) {
    const std::string full = name(n);
    family(out, full, "counter", help);
    sample(out, full, v);
  };
  counter("allocations_total", s.allocs, "Successful allocations.");
  counter("bin_hits_total", s.bin_hits, "Allocations served from the cache without a driver call.");
  counter("splits_total", s.splits, "Cached blocks split to serve a smaller request.");
  counter("device_mallocs_total", s.device_mallocs,
          "Segments obtained from the driver (cudaMalloc).");
  counter("device_frees_total", s.device_frees,
          "Segments returned to the driver (cudaFree, each a device sync).");
  counter("alloc_retries_total", s.alloc_retries,
          "Failed driver mallocs followed by flushing the cache and retrying.");
  counter("ooms_total", s.ooms, "Allocations that failed even after flush-and-retry.");
  counter("cross_stream_syncs_total", s.cross_stream_syncs,
          "Cached blocks reused on another stream behind an event edge.");
  return out;
}

gpulab::prom::Exposition platform_metrics(const AllocatorStats& stats,
                                          std::uint64_t largest_free_block) {
  gpulab::prom::Exposition e;
  e.gauge("allocator_reserved_bytes",
          "Bytes the caching allocator holds from the driver in segments.")
      .set({}, static_cast<double>(stats.reserved_bytes));
  e.gauge("allocator_allocated_bytes", "Bytes in live blocks handed out by the caching allocator.")
      .set({}, static_cast<double>(stats.allocated_bytes));
  e.gauge("allocator_largest_free_block_bytes",
          "Largest free block inside the allocator's segments; small next to reserved minus "
          "allocated means fragmentation.")
      .set({}, static_cast<double>(largest_free_block));
  e.counter("allocator_oom_total",
            "Allocations that failed even after flushing the cache and retrying.")
      .set({}, static_cast<double>(stats.ooms));
  return e;
}

void write_metrics_file(const std::filesystem::path& path, const AllocatorStats& stats,
                        std::uint64_t largest_free_block) {
  gpulab::write_metrics_out(path, platform_metrics(stats, largest_free_block));
}

}  // namespace caching_alloc
