#include "streams/stream_ordered_allocator.hpp"

#include <stdexcept>

namespace streams {

StreamOrderedAllocator::StreamOrderedAllocator(Executor& executor, caching_alloc::Device& device,
                                               caching_alloc::AllocatorConfig config)
    : ex_(executor), alloc_(device, config) {}

caching_alloc::Allocation StreamOrderedAllocator::allocate(std::uint64_t bytes, StreamId stream) {
  if (ex_.capturing()) {
    throw CaptureError(
        "allocate() during capture: it may call the driver and synchronise (use a pre-allocated "
        "pool)");
  }
  auto a = alloc_.allocate(bytes, stream);
  if (!a) throw std::runtime_error(a.error().message);
  const caching_alloc::Allocation& got = a.value();
  if (got.from_cache) {
    // The block (or the piece it was split from) was freed behind some
    // stream's work; order this stream after those free points.
    const caching_alloc::StreamId tag = got.reused_from_stream.value_or(got.stream);
    if (const auto it = free_points_.find(tag); it != free_points_.end()) {
      for (const auto& [freeing_stream, event] : it->second) {
        if (freeing_stream == stream) continue;  // same stream: FIFO order already holds
        ex_.wait(stream, event);
        ++edges_;
      }
    }
  }
  tag_of_[got.addr] = got.stream;
  return got;
}

void StreamOrderedAllocator::free(std::uint64_t addr, StreamId stream) {
  const auto it = tag_of_.find(addr);
  if (it == tag_of_.end())
    throw std::invalid_argument("free of an address this allocator did not hand out");
  auto ev = free_event_.find(stream);
  if (ev == free_event_.end()) ev = free_event_.emplace(stream, ex_.create_event()).first;
  ex_.record(ev->second, stream);  // the free point
  free_points_[it->second][stream] = ev->second;
  alloc_.free(addr);
  tag_of_.erase(it);
}

void StreamOrderedAllocator::free_host_ordered(std::uint64_t addr) {
  const auto it = tag_of_.find(addr);
  if (it == tag_of_.end())
    throw std::invalid_argument("free of an address this allocator did not hand out");
  alloc_.free(addr);
  tag_of_.erase(it);
}

}  // namespace streams
