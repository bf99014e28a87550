// The ring all-reduce as one relay (relay.hpp), cut into slices the way NCCL
// runs its primitives: every chunk is split into rounds of at most `slice`
// elements, and each round runs all 2(N-1) steps on its slice of every chunk.
// Within a round, reduce-scatter step s+1 sends what step s received plus the
// local data (recvReduceSend: read the incoming ring, read the local chunk,
// write the outgoing ring — the partial sum never touches the local vector),
// the last reduce-scatter step also keeps the sum (it is this rank's result),
// and every all-gather step but the last copies what arrives into place and
// forwards it in the same pass (recvCopySend). A slice of half a ring lets a
// rank hold one step's slice in flight to its neighbour while the next one is
// forwarded. Which elements each rank sends, and so the bytes it moves, are
// exactly those of the step-by-step ring (chunks.hpp); only the order differs.
#pragma once

#include <cstddef>

#include "ring_allreduce/chunks.hpp"

namespace ring {

struct RingSchedule {
  std::size_t n = 0;      // elements of the vector
  int world = 1;
  int rank = 0;
  std::size_t slice = 0;  // elements of one chunk per round
  std::size_t rounds = 1;

  [[nodiscard]] int steps() const { return 2 * (world - 1); }
  [[nodiscard]] std::size_t messages() const { return rounds * static_cast<std::size_t>(steps()); }
  [[nodiscard]] std::size_t round_of(std::size_t message) const { return message / static_cast<std::size_t>(steps()); }
  [[nodiscard]] int step_of(std::size_t message) const {
    return static_cast<int>(message % static_cast<std::size_t>(steps()));
  }
  // The elements message i carries out of this rank / into it.
  [[nodiscard]] Chunk out_range(std::size_t message) const;
  [[nodiscard]] Chunk in_range(std::size_t message) const;
};

// `slice_bytes` 0: one round (no slicing); otherwise rounds of
// max(1, slice_bytes / elem_size) elements per chunk.
RingSchedule ring_schedule(std::size_t n, int world, int rank, std::size_t elem_size, std::size_t slice_bytes);

}  // namespace ring
