// Which slice of the vector a rank sends and receives at each ring step, and
// how many bytes that makes per rank. This index math is the lab's real
// content: an off-by-one here still moves the right number of bytes but sums
// the wrong slices.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ring {

// Half-open element range [begin, end) of one chunk.
struct Chunk {
  std::size_t begin = 0;
  std::size_t end = 0;
  [[nodiscard]] std::size_t size() const { return end - begin; }
};

// Chunk i of n elements split N ways: boundaries floor(i*n/N), so chunk sizes
// differ by at most one element for any n (including n < N, where some are empty).
Chunk chunk_bounds(std::size_t n, int world, int i);

// x mod N in [0, N) also for negative x (C++ % keeps the sign of x).
constexpr int mod(int x, int n) { return ((x % n) + n) % n; }

// Reduce-scatter step s (0..N-2): rank r sends chunk (r-s) mod N to its right
// neighbour and receives chunk (r-s-1) mod N from its left, adding it in.
// Afterwards rank r owns the fully reduced chunk (r+1) mod N.
constexpr int rs_send_chunk(int rank, int step, int world) { return mod(rank - step, world); }
constexpr int rs_recv_chunk(int rank, int step, int world) { return mod(rank - step - 1, world); }
constexpr int owned_chunk(int rank, int world) { return mod(rank + 1, world); }
// All-gather step s (0..N-2): send chunk (r+1-s) mod N, receive (r-s) mod N, overwriting.
constexpr int ag_send_chunk(int rank, int step, int world) { return mod(rank + 1 - step, world); }
constexpr int ag_recv_chunk(int rank, int step, int world) { return mod(rank - step, world); }

// Exact payload bytes rank r writes in one ring all-reduce of n elements:
// reduce-scatter sends every chunk but (r+1), all-gather every chunk but (r+2),
// so bytes_r = (2n - |c_{r+1}| - |c_{r+2}|) * elem. Summed over ranks this is
// exactly 2(N-1)*n*elem, i.e. the mean is the 2(N-1)/N*V bound; with uneven
// chunks single ranks differ from the mean by at most 2 elements.
std::uint64_t ring_bytes_sent(std::size_t n, int world, int rank, std::size_t elem_size);
// The bandwidth-optimal bound 2(N-1)/N * V in bytes (V = n * elem), as a real number.
double ring_bound_bytes(std::size_t n, int world, std::size_t elem_size);
// Naive all-gather-then-sum: every rank's full vector reaches the N-1 others
// (forwarded around the ring), so each rank writes (N-1) * V bytes.
std::uint64_t naive_bytes_sent(std::size_t n, int world, std::size_t elem_size);

}  // namespace ring
