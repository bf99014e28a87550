// Extension 3: allocation traces. A CSV with columns op,id,size,stream
// (op = alloc|free; a free may leave size and stream empty) is parsed, checked
// and replayed through a CachingAllocator, one row of memory figures per step.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "caching_alloc/caching_allocator.hpp"
#include "gpulab/expected.hpp"

namespace caching_alloc {

enum class TraceOp : std::uint8_t { kAlloc, kFree };

struct TraceEvent {
  std::size_t line = 0;  // 1-based line in the file
  TraceOp op = TraceOp::kAlloc;
  std::string id;
  std::uint64_t size = 0;  // free: the allocation's size (filled in by the parser)
  StreamId stream = 0;     // free: the allocation's stream
};

// Syntax and lifetime checks (unknown id, double free, id reused while live,
// size mismatch) happen here, before anything is replayed, so a bad trace
// never leaves a half-replayed allocator behind. Errors read "line N: ...".
gpulab::Expected<std::vector<TraceEvent>> parse_trace(std::string_view text);

struct ReplayStep {
  TraceEvent event;
  bool oom = false;           // the allocation failed even after flush-and-retry
  bool skipped = false;       // a free of an allocation that had failed
  bool from_cache = false;    // served by a bin hit
  bool cross_stream = false;  // took a block last used on another stream
  std::uint64_t reserved = 0;
  std::uint64_t allocated = 0;
  std::uint64_t cached = 0;
  std::uint64_t largest_cached = 0;
  std::uint64_t device_largest_hole = 0;
};

struct ReplayResult {
  std::vector<ReplayStep> steps;
  AllocatorStats stats;  // at the end of the trace
};

// `on_step(done)` (optional) is called after every step, for progress display.
ReplayResult replay_trace(const std::vector<TraceEvent>& events, std::uint64_t device_bytes,
                          const AllocatorConfig& config,
                          const std::function<void(std::size_t)>& on_step = {});

}  // namespace caching_alloc
