#include "caching_alloc/replay.hpp"

#include <string>
#include <unordered_map>

namespace caching_alloc {

void replay_events(CachingAllocator& alloc, std::span<const TraceEvent> events,
                   const std::function<void(const ReplayStep&)>& on_step) {
  std::unordered_map<std::string, std::uint64_t> addr_of;  // live id -> address
  for (const TraceEvent& ev : events) {
    ReplayStep step;
    step.event = ev;
    if (ev.op == TraceOp::kAlloc) {
      auto a = alloc.allocate(ev.size, ev.stream);
      if (a) {
        addr_of[ev.id] = a.value().addr;
        step.from_cache = a.value().from_cache;
        step.cross_stream = a.value().reused_from_stream.has_value();
      } else {
        step.oom = true;
      }
    } else if (const auto it = addr_of.find(ev.id); it != addr_of.end()) {
      alloc.free(it->second);
      addr_of.erase(it);
    } else {
      step.skipped = true;  // the parser guarantees the id was allocated, so that alloc failed
    }
    const AllocatorStats& s = alloc.stats();
    step.reserved = s.reserved_bytes;
    step.allocated = s.allocated_bytes;
    step.cached = s.cached_bytes();
    step.largest_cached = alloc.largest_cached_block();
    step.device_largest_hole = alloc.device().largest_hole();
    if (on_step) on_step(step);
  }
}

}  // namespace caching_alloc
