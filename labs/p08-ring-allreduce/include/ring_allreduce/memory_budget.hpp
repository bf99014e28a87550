// How much memory a run of N forked ranks needs, checked before the first
// fork: `--world 64 --size 134217728` passes every flag check, yet its ranks
// together ask for terabytes (each holds its vector, and the naive all-reduce
// gathers all N of them), so the machine swaps or the OOM killer picks ranks
// off mid-collective. Refusing up front, with the figure, is the honest answer.
#pragma once

#include <cstdint>
#include <string>

namespace ring {

// What one rank allocates: `fixed` bytes, plus `per_peer` bytes for each rank
// of the world (a gather of every rank's vector).
struct MemoryNeed {
  std::uint64_t fixed = 0;
  std::uint64_t per_peer = 0;
  [[nodiscard]] std::uint64_t per_rank(int world) const;
  [[nodiscard]] std::uint64_t total(int world) const;  // saturates instead of wrapping
};

// MemAvailable from /proc/meminfo (memory the kernel can hand out without
// swapping), or physical memory when that is unreadable.
std::uint64_t available_memory_bytes();

// "" when `world` ranks needing `need` each fit in `available` bytes, else the
// reason: "this run needs about 4.5 TB (64 ranks x 70.0 GB each), more than the
// 21.5 GB this machine has available".
std::string memory_problem(int world, const MemoryNeed& need, std::uint64_t available);

// "21.5 GB", "512.0 MB", "4.5 TB" (powers of 1000, as free(1) -H does).
std::string format_bytes(std::uint64_t bytes);

}  // namespace ring
