// Extension 5: the allocator's state in the Prometheus text exposition format
// (version 0.0.4): reserved / allocated / cached / largest cached block — the
// fragmentation dashboard of curriculum Phase 10 — plus the event counters.
#pragma once

#include <string>

#include "caching_alloc/caching_allocator.hpp"

namespace caching_alloc {

// Gauges end in _bytes (or are plain counts), counters in _total; every
// metric has HELP and TYPE before its samples; the text ends with '\n'.
std::string prometheus_text(const CachingAllocator& alloc);

}  // namespace caching_alloc
