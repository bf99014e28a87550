// The one loop that replays a parsed trace through an allocator. replay_trace()
// (trace.hpp) records every step with it; `caching-alloc metrics` runs it on an
// allocator it keeps, to print that allocator's end state.
#pragma once

#include <functional>
#include <span>

#include "caching_alloc/caching_allocator.hpp"
#include "caching_alloc/trace.hpp"

namespace caching_alloc {

// Feeds `events` to `alloc` in order and calls `on_step` (optional) after each
// one with its outcome and the memory figures at that point. A free of an
// allocation that failed is a skipped step, not an error: parse_trace() has
// already checked the trace's lifetimes.
void replay_events(CachingAllocator& alloc, std::span<const TraceEvent> events,
                   const std::function<void(const ReplayStep&)>& on_step = {});

}  // namespace caching_alloc
