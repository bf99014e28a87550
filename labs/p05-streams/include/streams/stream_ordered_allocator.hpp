// Extension 4, the two labs joined: the caching allocator's free made
// stream-ordered with this scheduler's events (cudaFreeAsync semantics).
// free(addr, s) records an event on s: the block's lifetime ends when s
// reaches that point, not when the host calls free. A later allocation that
// takes the block on another stream first waits for that event — the edge
// the allocator counts in cross_stream_syncs.
#pragma once

#include <map>
#include <unordered_map>

#include "caching_alloc/caching_allocator.hpp"
#include "streams/executor.hpp"

namespace streams {

class StreamOrderedAllocator {
 public:
  StreamOrderedAllocator(Executor& executor, caching_alloc::Device& device,
                         caching_alloc::AllocatorConfig config = {});

  // A block for use on `stream`. Throws std::runtime_error on out-of-memory
  // and CaptureError while capturing (allocation may call the driver and
  // synchronise: it cannot be frozen into a graph).
  caching_alloc::Allocation allocate(std::uint64_t bytes, StreamId stream);
  // Stream-ordered free: reusable once `stream` has run everything issued to it so far.
  void free(std::uint64_t addr, StreamId stream);
  // The bug, kept for scenario 3: the block is reusable the moment the host
  // says so, while kernels issued earlier may still be reading it.
  void free_host_ordered(std::uint64_t addr);

  [[nodiscard]] const caching_alloc::CachingAllocator& allocator() const { return alloc_; }
  [[nodiscard]] std::uint64_t edges_inserted() const { return edges_; }

 private:
  Executor& ex_;
  caching_alloc::CachingAllocator alloc_;
  std::unordered_map<std::uint64_t, caching_alloc::StreamId>
      tag_of_;  // live block -> allocation stream
  // Per allocation-stream tag: per freeing stream, the event recorded at its
  // latest free of such a block.
  std::map<caching_alloc::StreamId, std::map<StreamId, EventId>> free_points_;
  std::unordered_map<StreamId, EventId> free_event_;  // one reusable event per freeing stream
  std::uint64_t edges_ = 0;
};

}  // namespace streams
