#include "ring_allreduce/chunks.hpp"

namespace ring {

Chunk chunk_bounds(std::size_t n, int world, int i) {
  const auto w = static_cast<std::size_t>(world);
  const auto k = static_cast<std::size_t>(i);
  // (k * n) cannot overflow for any vector that fits in memory times a world of a few thousand.
  return {k * n / w, (k + 1) * n / w};
}

std::uint64_t ring_bytes_sent(std::size_t n, int world, int rank, std::size_t elem_size) {
  if (world < 2) return 0;
  const std::size_t skipped = chunk_bounds(n, world, mod(rank + 1, world)).size() +
                              chunk_bounds(n, world, mod(rank + 2, world)).size();
  return static_cast<std::uint64_t>(2 * n - skipped) * elem_size;
}

double ring_bound_bytes(std::size_t n, int world, std::size_t elem_size) {
  return 2.0 * (world - 1) / world * static_cast<double>(n * elem_size);
}

std::uint64_t naive_bytes_sent(std::size_t n, int world, std::size_t elem_size) {
  return static_cast<std::uint64_t>(world - 1) * n * elem_size;
}

}  // namespace ring
